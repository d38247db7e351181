/**
 * kapi behind an aggregator: request-header authentication. A client certificate of the front proxy's CA
 * (--requestheader-client-ca-file), with an allowed name, makes the user the one X-Remote-User, X-Remote-Group
 * and X-Remote-Extra-* name; RBAC then judges that user. Any other certificate of that CA, or the proxy's
 * certificate without a username header, is refused; the proxy's certificate is never a user of its own.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

describe('request-header authentication (kapi as an extension API server)', () => {
  let dir: string;
  let s: TestServer;
  let proxy: { cert: string; key: string };
  let stranger: { cert: string; key: string };
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const issue = (cn: string) => {
    openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${cn}.key`, '-out', `${cn}.csr`, '-subj', `/CN=${cn}`]);
    writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
    openssl(['x509', '-req', '-in', `${cn}.csr`, '-CA', 'front-proxy-ca.crt', '-CAkey', 'front-proxy-ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'client.ext', '-out', `${cn}.crt`]);
    return { cert: readFileSync(join(dir, `${cn}.crt`), 'utf8'), key: readFileSync(join(dir, `${cn}.key`), 'utf8') };
  };
  /** A request as the front proxy would send it: its certificate, and the headers it sets. */
  const proxied = (client: { cert: string; key: string }, method: string, path: string, headers: Record<string, string | string[]>, body?: unknown) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = https.request(`${s.kapi.url}${path}`, { method, ca: s.kapi.caCertPem, cert: client.cert, key: client.key, headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      });
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  const whoami = (client: { cert: string; key: string }, headers: Record<string, string | string[]>) =>
    proxied(client, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', headers, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-requestheader-'));
    openssl(['req', '-x509', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'front-proxy-ca.key', '-out', 'front-proxy-ca.crt', '-subj', '/CN=front-proxy-ca', '-days', '2']);
    proxy = issue('front-proxy-client');
    stranger = issue('someone-else');
    s = await startTestServer({ requestHeader: { clientCAFile: join(dir, 'front-proxy-ca.crt'), allowedNames: ['front-proxy-client'] } });
  });
  after(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes the user, groups and extra values from the headers the front proxy sets', async () => {
    const res = await whoami(proxy, { 'X-Remote-User': 'alice', 'X-Remote-Group': ['devs', 'ops'], 'X-Remote-Extra-Acme.com%2fProject': 'p1', 'X-Remote-Extra-Scopes': ['a', 'b'] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.status.userInfo, { username: 'alice', groups: ['devs', 'ops', 'system:authenticated'], extra: { 'acme.com/project': ['p1'], scopes: ['a', 'b'] } });
    // RBAC judges that user: alice may do nothing yet.
    const listed = await proxied(proxy, 'GET', '/api/v1/namespaces', { 'X-Remote-User': 'alice' });
    assert.equal(listed.status, 403);
    assert.equal(listed.body.message, 'namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope');
  });

  it('refuses a certificate of the front proxy CA with another name, and the proxy without a user header', async () => {
    const other = await whoami(stranger, { 'X-Remote-User': 'alice' });
    assert.equal(other.status, 401);
    assert.equal(other.body.reason, 'Unauthorized');
    const nobody = await whoami(proxy, {});
    assert.equal(nobody.status, 401, 'the front proxy is no user of its own');
  });
});
