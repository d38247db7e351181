import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it, mock } from 'node:test';
import { ensureServingCertificates } from '../../src/server/certs.js';
import { httpsGet, startHttpsServer, tempDir, type TestServer } from './tls-helper.js';

const DAY_MS = 24 * 60 * 60 * 1000;

function sans(certPem: string): string[] {
  return (new X509Certificate(certPem).subjectAltName ?? '').split(', ');
}

function pkiFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of ['ca.crt', 'ca.key', 'apiserver.crt', 'apiserver.key']) out[f] = readFileSync(join(dir, 'pki', f), 'utf8');
  return out;
}

describe('ensureServingCertificates', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    mock.restoreAll();
  });
  const dataDir = () => {
    const t = tempDir('kapi-certs-');
    cleanups.push(t.cleanup);
    return t.dir;
  };
  const serve = async (tls: { certPem: string; keyPem: string }, host?: string): Promise<TestServer> => {
    const server = await startHttpsServer(tls, undefined, host);
    cleanups.push(() => server.close());
    return server;
  };

  it('creates a CA and a serving certificate it signs, with keys readable only by the owner', async () => {
    const dir = dataDir();
    const started = Date.now();
    const tls = await ensureServingCertificates(dir, { hosts: ['10.1.2.3', 'Kapi.Example.test', '2001:db8::7'] });

    const files = pkiFiles(dir);
    assert.equal(files['ca.crt'], tls.caCertPem);
    assert.equal(files['apiserver.crt'], tls.certPem);
    assert.equal(files['apiserver.key'], tls.keyPem);
    assert.match(files['ca.key'], /^-----BEGIN EC PRIVATE KEY-----\n/);
    for (const key of ['ca.key', 'apiserver.key']) {
      assert.equal(statSync(join(dir, 'pki', key)).mode & 0o777, 0o600, key);
    }
    assert.equal(statSync(join(dir, 'pki')).mode & 0o077, 0, 'pki dir is private');

    const ca = new X509Certificate(tls.caCertPem);
    assert.equal(ca.subject, 'CN=kapi-ca');
    assert.equal(ca.issuer, 'CN=kapi-ca');
    assert.equal(ca.ca, true);
    assert.equal(ca.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.ok(ca.verify(ca.publicKey), 'CA is self-signed');
    const caYears = (Date.parse(ca.validTo) - started) / (365 * DAY_MS);
    assert.ok(caYears > 9.9 && caYears < 10.1, `CA lifetime ${caYears} years`);

    const cert = new X509Certificate(tls.certPem);
    assert.equal(cert.ca, false);
    assert.equal(cert.issuer, 'CN=kapi-ca');
    assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey), 'serving certificate is signed by the CA');
    assert.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'extendedKeyUsage is serverAuth');
    const days = (Date.parse(cert.validTo) - started) / DAY_MS;
    assert.ok(days > 364 && days < 366, `serving lifetime ${days} days`);
    assert.ok(Date.parse(cert.validFrom) <= started, 'valid from before now');
    assert.deepEqual(sans(tls.certPem).sort(), [
      'DNS:kapi.example.test',
      'DNS:localhost',
      'IP Address:0:0:0:0:0:0:0:1',
      'IP Address:10.1.2.3',
      'IP Address:127.0.0.1',
      'IP Address:2001:DB8:0:0:0:0:0:7',
    ]);
  });

  it('serves TLS that verifies against the CA for 127.0.0.1, localhost and requested names, and only with the CA', async () => {
    const tls = await ensureServingCertificates(dataDir(), { hosts: ['kapi.example.test'] });
    const { port } = await serve(tls);

    const byIP = await httpsGet({ port, ca: tls.caCertPem });
    assert.deepEqual(byIP, { ok: true, status: 200, body: 'ok' });
    for (const servername of ['localhost', 'kapi.example.test']) {
      assert.deepEqual(await httpsGet({ port, ca: tls.caCertPem, servername }), { ok: true, status: 200, body: 'ok' }, servername);
    }

    const withoutCA = await httpsGet({ port });
    assert.equal(withoutCA.ok, false);
    assert.equal(!withoutCA.ok && withoutCA.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');

    const otherName = await httpsGet({ port, ca: tls.caCertPem, servername: 'elsewhere.example.test' });
    assert.equal(!otherName.ok && otherName.code, 'ERR_TLS_CERT_ALTNAME_INVALID');

    // Another CA does not do either.
    const otherCA = await ensureServingCertificates(dataDir(), { hosts: [] });
    const wrongCA = await httpsGet({ port, ca: otherCA.caCertPem });
    assert.equal(!wrongCA.ok && wrongCA.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('serves TLS on ::1 when the host has IPv6 loopback', async (t) => {
    const tls = await ensureServingCertificates(dataDir(), { hosts: [] });
    let server: TestServer;
    try {
      server = await serve(tls, '::1');
    } catch (err) {
      t.skip(`no IPv6 loopback: ${(err as Error).message}`);
      return;
    }
    const res = await httpsGet({ host: '::1', port: server.port, ca: tls.caCertPem });
    assert.deepEqual(res, { ok: true, status: 200, body: 'ok' });
  });

  it('reuses the files on later starts', async () => {
    const dir = dataDir();
    const first = await ensureServingCertificates(dir, { hosts: ['10.1.2.3', 'kapi.example.test'] });
    const before = pkiFiles(dir);
    const mtimes = Object.keys(before).map((f) => statSync(join(dir, 'pki', f)).mtimeMs);

    // The same hosts, a subset, and spellings of hosts already present all reuse.
    for (const hosts of [['10.1.2.3', 'kapi.example.test'], [], ['KAPI.example.test.', '[::1]', '0:0:0:0:0:0:0:1', 'localhost']]) {
      assert.deepEqual(await ensureServingCertificates(dir, { hosts }), first, JSON.stringify(hosts));
    }
    assert.deepEqual(pkiFiles(dir), before);
    assert.deepEqual(
      Object.keys(before).map((f) => statSync(join(dir, 'pki', f)).mtimeMs),
      mtimes,
    );
  });

  it('re-issues the serving certificate from the same CA when a new host is requested', async () => {
    const dir = dataDir();
    const first = await ensureServingCertificates(dir, { hosts: ['10.1.2.3'] });
    const caKey = pkiFiles(dir)['ca.key'];

    const second = await ensureServingCertificates(dir, { hosts: ['10.1.2.3', 'new.example.test', '192.168.7.7'] });
    assert.equal(second.caCertPem, first.caCertPem);
    assert.equal(pkiFiles(dir)['ca.key'], caKey);
    assert.notEqual(second.certPem, first.certPem);
    assert.notEqual(second.keyPem, first.keyPem);
    const names = sans(second.certPem);
    for (const want of ['DNS:new.example.test', 'IP Address:192.168.7.7', 'IP Address:10.1.2.3', 'DNS:localhost']) {
      assert.ok(names.includes(want), `${want} in ${names.join(', ')}`);
    }
    assert.equal(statSync(join(dir, 'pki', 'apiserver.key')).mode & 0o777, 0o600);

    // A client that trusted the CA before trusts the new certificate for the new name.
    const { port } = await serve(second);
    const res = await httpsGet({ port, ca: first.caCertPem, servername: 'new.example.test' });
    assert.deepEqual(res, { ok: true, status: 200, body: 'ok' });

    // Wildcards are kept literally, and requesting one again reuses.
    const wild = await ensureServingCertificates(dir, { hosts: ['*.apps.example.test'] });
    assert.ok(sans(wild.certPem).includes('DNS:*.apps.example.test'));
    assert.deepEqual(await ensureServingCertificates(dir, { hosts: ['*.apps.example.test'] }), wild);
  });

  it('re-issues a serving certificate that expires within 30 days, keeping the CA', async () => {
    const dir = dataDir();
    const first = await ensureServingCertificates(dir, { hosts: [] });
    const realNow = Date.now();

    mock.method(Date, 'now', () => realNow + 330 * DAY_MS);
    assert.deepEqual(await ensureServingCertificates(dir, { hosts: [] }), first, '35 days left: reused');

    mock.method(Date, 'now', () => realNow + 340 * DAY_MS);
    const renewed = await ensureServingCertificates(dir, { hosts: [] });
    assert.equal(renewed.caCertPem, first.caCertPem);
    assert.notEqual(renewed.certPem, first.certPem);
    const validTo = Date.parse(new X509Certificate(renewed.certPem).validTo);
    assert.ok(validTo > realNow + 700 * DAY_MS, 'a fresh year from the (mocked) now');
  });

  it('replaces a CA that expires within 30 days, and the serving certificate with it', async () => {
    const dir = dataDir();
    const first = await ensureServingCertificates(dir, { hosts: [] });
    mock.method(Date, 'now', () => Date.parse(new X509Certificate(first.caCertPem).validTo) - 10 * DAY_MS);
    const second = await ensureServingCertificates(dir, { hosts: [] });
    assert.notEqual(second.caCertPem, first.caCertPem);
    const ca = new X509Certificate(second.caCertPem);
    assert.ok(new X509Certificate(second.certPem).checkIssued(ca));
  });

  it('caps the serving certificate at the CA expiry', async () => {
    const dir = dataDir();
    const first = await ensureServingCertificates(dir, { hosts: [] });
    const caValidTo = Date.parse(new X509Certificate(first.caCertPem).validTo);
    mock.method(Date, 'now', () => caValidTo - 100 * DAY_MS);
    const second = await ensureServingCertificates(dir, { hosts: [] });
    assert.equal(second.caCertPem, first.caCertPem);
    assert.equal(Date.parse(new X509Certificate(second.certPem).validTo), caValidTo);
  });

  it('re-issues a damaged or mismatched serving certificate', async () => {
    const dir = dataDir();
    const first = await ensureServingCertificates(dir, { hosts: [] });
    writeFileSync(join(dir, 'pki', 'apiserver.crt'), 'garbage');
    const second = await ensureServingCertificates(dir, { hosts: [] });
    assert.equal(second.caCertPem, first.caCertPem);
    assert.ok(new X509Certificate(second.certPem).checkIssued(new X509Certificate(first.caCertPem)));

    // A key that does not belong to the certificate.
    writeFileSync(join(dir, 'pki', 'apiserver.key'), first.keyPem);
    const third = await ensureServingCertificates(dir, { hosts: [] });
    assert.ok(new X509Certificate(third.certPem).checkPrivateKey(createPrivateKey(third.keyPem)));
    assert.notEqual(third.keyPem, first.keyPem);

    // A certificate from another CA.
    const other = await ensureServingCertificates(dataDir(), { hosts: [] });
    writeFileSync(join(dir, 'pki', 'apiserver.crt'), other.certPem);
    writeFileSync(join(dir, 'pki', 'apiserver.key'), other.keyPem);
    const fourth = await ensureServingCertificates(dir, { hosts: [] });
    assert.ok(new X509Certificate(fourth.certPem).checkIssued(new X509Certificate(first.caCertPem)));
  });

  it('makes a new CA when half of it is missing, but refuses to overwrite a damaged one', async () => {
    const dir = dataDir();
    const first = await ensureServingCertificates(dir, { hosts: [] });
    rmSync(join(dir, 'pki', 'ca.crt'));
    const second = await ensureServingCertificates(dir, { hosts: [] });
    assert.notEqual(second.caCertPem, first.caCertPem);
    assert.notEqual(second.certPem, first.certPem);

    const caKey = pkiFiles(dir)['ca.key'];
    writeFileSync(join(dir, 'pki', 'ca.crt'), 'not a certificate');
    await assert.rejects(ensureServingCertificates(dir, { hosts: [] }), /cannot parse CA certificate .*ca\.crt.*remove .*pki to generate a new CA/);
    assert.equal(pkiFiles(dir)['ca.key'], caKey, 'the CA key is left alone');

    writeFileSync(join(dir, 'pki', 'ca.crt'), first.caCertPem);
    await assert.rejects(ensureServingCertificates(dir, { hosts: [] }), /CA key .*ca\.key does not match/);
  });

  it('rejects hosts that are neither IP addresses nor DNS names', async () => {
    for (const host of ['https://kapi.example.test', 'kapi.example.test:6443', '', 'a b', 'foo..bar', '*']) {
      await assert.rejects(ensureServingCertificates(dataDir(), { hosts: [host] }), /invalid certificate host/, JSON.stringify(host));
    }
  });
});
