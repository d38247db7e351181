/**
 * Encryption at rest (--encryption-provider-config): Secrets are unreadable in a copy of the store, read
 * back through the API as written, and survive a key rotation.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer } from './harness.js';

const KEY1 = randomBytes(32).toString('base64');
const KEY2 = randomBytes(32).toString('base64');
const config = (providers: string) => `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n${providers}`;

/** Everything the embedded store has on disk (its database and write-ahead log). */
function storeBytes(dataDir: string): string {
  return ['state.db', 'state.db-wal'].map((f) => join(dataDir, f)).filter(existsSync).map((f) => readFileSync(f).toString('latin1')).join('');
}

describe('encryption at rest', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-enc-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps Secrets encrypted in the store, readable through the API, across a key rotation', async () => {
    const dataDir = join(dir, 'data');
    const file = join(dir, 'encryption.yaml');
    writeFileSync(file, config('  - aescbc: {keys: [{name: key1, secret: "' + KEY1 + '"}]}\n  - identity: {}\n'));
    const value = 'the-password-nobody-may-read';
    let s = await startTestServer({ dataDir, encryptionProviderConfig: file });
    try {
      assert.equal((await s.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 'db' }, stringData: { password: value } } })).status, 201);
      assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'plain' }, data: { note: 'visible-config-value' } } })).status, 201);
      const read = await s.kubectl(['get', 'secret', 'db', '-o', 'jsonpath={.data.password}']);
      assert.equal(Buffer.from(read.stdout, 'base64').toString(), value);
    } finally {
      await s.kapi.stop();
    }
    let raw = storeBytes(dataDir);
    assert.ok(!raw.includes(value) && !raw.includes(Buffer.from(value).toString('base64')), 'the Secret is not in the store in the clear');
    assert.ok(raw.includes('k8s:enc:aescbc:v1:key1:'));
    assert.ok(raw.includes('visible-config-value'), 'what the configuration does not name stays as it was');

    // Rotation: the new key first, the old one still there to read with.
    writeFileSync(file, config('  - aesgcm: {keys: [{name: key2, secret: "' + KEY2 + '"}]}\n  - aescbc: {keys: [{name: key1, secret: "' + KEY1 + '"}]}\n'));
    s = await startTestServer({ dataDir, encryptionProviderConfig: file });
    try {
      const old = await s.request('GET', '/api/v1/namespaces/default/secrets/db');
      assert.equal(Buffer.from(old.json.data.password, 'base64').toString(), value);
      const rewritten = await s.request('PUT', '/api/v1/namespaces/default/secrets/db', { body: old.json });
      assert.equal(rewritten.status, 200, rewritten.text);
      const list = await s.request('GET', '/api/v1/namespaces/default/secrets');
      assert.ok(list.json.items.some((i: any) => i.metadata.name === 'db'));
    } finally {
      await s.kapi.stop();
    }
    raw = storeBytes(dataDir);
    assert.ok(raw.includes('k8s:enc:aesgcm:v1:key2:'), 'a write uses the first provider');

    // And on to secretbox, reading what aesgcm wrote.
    writeFileSync(file, config('  - secretbox: {keys: [{name: key3, secret: "' + KEY1 + '"}]}\n  - aesgcm: {keys: [{name: key2, secret: "' + KEY2 + '"}]}\n'));
    s = await startTestServer({ dataDir, encryptionProviderConfig: file });
    try {
      const old = await s.request('GET', '/api/v1/namespaces/default/secrets/db');
      assert.equal(Buffer.from(old.json.data.password, 'base64').toString(), value);
      assert.equal((await s.request('PUT', '/api/v1/namespaces/default/secrets/db', { body: old.json })).status, 200);
      assert.equal((await s.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 'boxed' }, stringData: { k: value } } })).status, 201);
      const boxed = await s.request('GET', '/api/v1/namespaces/default/secrets/boxed');
      assert.equal(Buffer.from(boxed.json.data.k, 'base64').toString(), value);
    } finally {
      await s.kapi.stop();
    }
    raw = storeBytes(dataDir);
    assert.ok(raw.includes('k8s:enc:secretbox:v1:key3:') && !raw.includes(value));
  });

  it('refuses a configuration it cannot use, naming the file', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, config('  - aescbc: {keys: [{name: short, secret: "' + randomBytes(7).toString('base64') + '"}]}\n'));
    await assert.rejects(startTestServer({ encryptionProviderConfig: file }), /encryption provider configuration file ".*bad\.yaml": resources\[0\]\.providers\[0\]\.aescbc\.keys\[0\]\.secret: Invalid value: "REDACTED": secret is not of the expected length, got 7/);
    writeFileSync(file, config('  - kms: {name: vault}\n'));
    await assert.rejects(startTestServer({ encryptionProviderConfig: file }), /Unsupported value: "kms"/);
  });
});
