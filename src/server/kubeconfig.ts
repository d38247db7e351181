/**
 * The admin kubeconfig kapi writes into its data dir on every start: the
 * server URL, the CA that signs the serving certificate, and the admin token.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { stringifyYaml } from '../machinery/yaml-emit.js';
import { writeFileAtomic } from './certs.js';

export interface AdminKubeconfigOptions {
  /** e.g. https://127.0.0.1:6443 */
  server: string;
  caCertPem: string;
  token: string;
  /** Names the context, cluster and user; `kapi` when not given. */
  contextName?: string;
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
    users: [{ name, user: { token: opts.token } }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
    preferences: {},
  };
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, 'admin.kubeconfig');
  // go-yaml's output, as kubectl writes kubeconfigs; the base64 has no spaces, so it stays on one line.
  await writeFileAtomic(path, stringifyYaml(config), 0o600);
  return path;
}
