import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, it } from 'node:test';
import { KubeConfig, VersionApi } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { ensureAdminToken } from '../../src/server/authn.js';
import { ensureServingCertificates } from '../../src/server/certs.js';
import { writeAdminKubeconfig } from '../../src/server/kubeconfig.js';
import { startHttpsServer, tempDir, withTimeout, type TestServer } from './tls-helper.js';

// Tests run from .out/<name>/test/server or dist/test/server; kubectl lives in <repo>/.cache/bin.
function findKubectl(): string | undefined {
  let dir = fileURLToPath(new URL('.', import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, '.cache', 'bin', 'kubectl');
    if (existsSync(candidate) && existsSync(join(dir, 'package.json'))) return candidate;
    dir = join(dir, '..');
  }
  return undefined;
}
const kubectl = findKubectl();

const VERSION = { major: '1', minor: '20', gitVersion: 'v1.20.2' };

function versionHandler(req: { url?: string }, res: ServerResponse): void {
  if (req.url === '/version' || req.url?.startsWith('/version?')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(VERSION));
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
}

describe('writeAdminKubeconfig', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const dataDir = () => {
    const t = tempDir('kapi-kubeconfig-');
    cleanups.push(t.cleanup);
    return t.dir;
  };
  const serve = async (tls: { certPem: string; keyPem: string }): Promise<TestServer> => {
    const server = await startHttpsServer(tls, versionHandler);
    cleanups.push(() => server.close());
    return server;
  };
  /** A data dir with TLS material, the admin token, and a server answering /version with them. */
  const setup = async () => {
    const dir = dataDir();
    const tls = await ensureServingCertificates(dir, { hosts: [] });
    const token = await ensureAdminToken(dir);
    const server = await serve(tls);
    return { dir, tls, token, server };
  };

  it('writes a kubeconfig that parses back with the server, CA, token and context', async () => {
    const dir = dataDir();
    const caCertPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const path = await writeAdminKubeconfig(dir, { server: 'https://127.0.0.1:6443', caCertPem, token: 'tok' });
    assert.equal(path, join(dir, 'admin.kubeconfig'));
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(parse(readFileSync(path, 'utf8')), {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'kapi',
          cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': Buffer.from(caCertPem).toString('base64') },
        },
      ],
      users: [{ name: 'kapi', user: { token: 'tok' } }],
      contexts: [{ name: 'kapi', context: { cluster: 'kapi', user: 'kapi' } }],
      'current-context': 'kapi',
      preferences: {},
    });

    // Written again with another name, replacing the file.
    await writeAdminKubeconfig(dir, { server: 'https://[::1]:7443', caCertPem, token: 'tok2', contextName: 'dev' });
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    assert.equal(kc.getCurrentContext(), 'dev');
    assert.equal(kc.getCurrentCluster()?.server, 'https://[::1]:7443');
    assert.equal(kc.getCurrentCluster()?.caData, Buffer.from(caCertPem).toString('base64'));
    assert.equal(kc.getCurrentUser()?.token, 'tok2');
  });

  it('@kubernetes/client-node trusts the server and sends the token', async () => {
    const { dir, tls, token, server } = await setup();
    const path = await writeAdminKubeconfig(dir, { server: `https://localhost:${server.port}`, caCertPem: tls.caCertPem, token });
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    const info = await withTimeout(kc.makeApiClient(VersionApi).getCode(), 10_000, 'client-node GET /version');
    assert.equal(info.gitVersion, 'v1.20.2');
    assert.deepEqual(server.requests.at(-1), { url: '/version', authorization: `Bearer ${token}` });
  });

  const runKubectl = (kubeconfig: string, home: string) =>
    new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve) => {
      const { HOME: _home, KUBECONFIG: _kubeconfig, ...env } = process.env;
      execFile(
        kubectl ?? 'kubectl',
        ['--kubeconfig', kubeconfig, 'version', '--client=false', '--request-timeout=5s'],
        // HOME in the temp dir: kubectl may write a cache under ~/.kube.
        { env: { ...env, HOME: home }, timeout: 20_000 },
        (err, stdout, stderr) => resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? -1) : 0 }),
      );
    });
  const skipKubectl = kubectl ? false : 'no .cache/bin/kubectl';

  for (const host of ['127.0.0.1', 'localhost']) {
    it(`kubectl trusts the server at ${host} and sends the token`, { skip: skipKubectl }, async () => {
      const { dir, tls, token, server } = await setup();
      const path = await writeAdminKubeconfig(dir, { server: `https://${host}:${server.port}`, caCertPem: tls.caCertPem, token });
      const { stdout, stderr, code } = await runKubectl(path, dir);
      assert.equal(code, 0, `kubectl failed: ${stderr}`);
      assert.match(stdout, /Server Version: version\.Info\{Major:"1", Minor:"20", GitVersion:"v1\.20\.2"/);
      const versionRequests = server.requests.filter((r) => r.url.startsWith('/version'));
      assert.ok(versionRequests.length > 0, 'kubectl asked for /version');
      for (const r of versionRequests) assert.equal(r.authorization, `Bearer ${token}`);
    });
  }

  it('kubectl refuses the server with another CA in the kubeconfig', { skip: skipKubectl }, async () => {
    const { dir, token, server } = await setup();
    const other = await ensureServingCertificates(dataDir(), { hosts: [] });
    const path = await writeAdminKubeconfig(dir, { server: `https://127.0.0.1:${server.port}`, caCertPem: other.caCertPem, token });
    const { stderr, code } = await runKubectl(path, dir);
    assert.notEqual(code, 0);
    assert.match(stderr, /x509: certificate signed by unknown authority/);
    assert.equal(server.requests.length, 0, 'no request got through');
  });
});
