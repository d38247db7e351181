/**
 * The admin kubeconfig kapi writes into its data dir on every start: the
 * server URL, the CA that signs the serving certificate, and the admin's
 * credentials: its token and its client certificate (either authenticates).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { stringifyYaml } from '../machinery/yaml-emit.js';
import { writeFileAtomic } from '../util/private-files.js';

export interface AdminKubeconfigOptions {
  /** e.g. https://127.0.0.1:6443 */
  server: string;
  caCertPem: string;
  token: string;
  /** The admin's client certificate and key (PEM). */
  clientCert?: { certPem: string; keyPem: string };
  /** Names the context, cluster and user; `kapi` when not given. */
  contextName?: string;
  /** false: written without an fsync (a data dir that lives no longer than its in-memory store). Default true. */
  durable?: boolean;
}

const base64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');

function clientCertificate(cert: AdminKubeconfigOptions['clientCert']): Record<string, string> {
  return cert ? { 'client-certificate-data': base64(cert.certPem), 'client-key-data': base64(cert.keyPem) } : {};
}

/** Writes <dataDir>/admin.kubeconfig (mode 0600) and returns its path. */
export async function writeAdminKubeconfig(dataDir: string, opts: AdminKubeconfigOptions): Promise<string> {
  const name = opts.contextName ?? 'kapi';
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name,
        cluster: {
          server: opts.server,
          'certificate-authority-data': Buffer.from(opts.caCertPem, 'utf8').toString('base64'),
        },
      },
    ],
    users: [{ name, user: { ...clientCertificate(opts.clientCert), token: opts.token } }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
    preferences: {},
  };
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, 'admin.kubeconfig');
  // go-yaml's output, as kubectl writes kubeconfigs; the base64 has no spaces, so it stays on one line.
  await writeFileAtomic(path, stringifyYaml(config), 0o600, opts.durable ?? true);
  return path;
}
