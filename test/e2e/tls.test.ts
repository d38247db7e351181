/**
 * Serving certificates: the one kapi makes names the host, the kubernetes Service and --tls-san; one of
 * the user's (--tls-cert-file) is served and replaced when its files change, without a restart.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

/** The certificate a fresh TLS connection to the server is shown. */
function presented(url: string): Promise<X509Certificate> {
  const { hostname: host, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host, port: Number(port), rejectUnauthorized: false, ALPNProtocols: ['h2'] }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.destroy();
      if (cert) resolve(cert);
      else reject(new Error('no certificate'));
    });
    socket.on('error', reject);
  });
}

describe('serving certificates', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-tls-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('names the host, the kubernetes Service and --tls-san in the certificate kapi makes', async () => {
    const s = await startTestServer({ tlsSans: ['api.example.com', '10.9.8.7'] });
    try {
      const sans = (await presented(s.kapi.url)).subjectAltName ?? '';
      for (const want of ['IP Address:127.0.0.1', 'DNS:localhost', 'DNS:kubernetes.default.svc', 'IP Address:10.0.0.1', 'DNS:api.example.com', 'IP Address:10.9.8.7']) assert.ok(sans.includes(want), `${want} in ${sans}`);
      if (/^[a-z0-9.-]+$/.test(hostname().toLowerCase())) assert.ok(sans.includes(`DNS:${hostname().toLowerCase()}`), sans);
    } finally {
      await s.stop();
    }
  });

  it('serves a certificate of the user\'s and takes a renewed one without a restart', async () => {
    const make = (name: string) => {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`), '-subj', `/CN=${name}`, '-days', '2', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'pipe' });
      return { cert: readFileSync(join(dir, `${name}.crt`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
    };
    const first = make('first');
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    writeFileSync(certFile, first.cert);
    writeFileSync(keyFile, first.key);
    const s: TestServer = await startTestServer({ tlsCertFile: certFile, tlsPrivateKeyFile: keyFile });
    try {
      assert.equal((await presented(s.kapi.url)).subject, 'CN=first');
      assert.equal(s.kapi.caCertPem, first.cert, 'clients are told to trust the certificate given');
      assert.equal((await s.request('GET', '/version')).status, 200, 'the harness trusts it through the kubeconfig CA');
      const kubectl = await s.kubectl(['get', 'ns', 'default', '-o', 'name']);
      assert.deepEqual([kubectl.code, kubectl.stdout.trim()], [0, 'namespace/default'], kubectl.stderr);
      // A renewal written as most tools do: a new file renamed over the old one, the key after the certificate.
      const second = make('second');
      writeFileSync(`${certFile}.new`, second.cert);
      renameSync(`${certFile}.new`, certFile);
      writeFileSync(`${keyFile}.new`, second.key);
      renameSync(`${keyFile}.new`, keyFile);
      let subject = '';
      for (let i = 0; i < 100 && subject !== 'CN=second'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        subject = (await presented(s.kapi.url)).subject;
      }
      assert.equal(subject, 'CN=second');
    } finally {
      await s.stop();
    }
  });

  it('refuses a certificate and key that do not belong together', async () => {
    const a = join(dir, 'first.crt');
    const b = join(dir, 'second.key');
    await assert.rejects(startTestServer({ tlsCertFile: a, tlsPrivateKeyFile: b }), /the serving key ".*second\.key" does not match the certificate ".*first\.crt"/);
  });
});
