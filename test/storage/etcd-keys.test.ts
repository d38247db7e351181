/**
 * The etcd backend's pure parts, without etcd: the key layout under a prefix
 * (round trips, one etcd range per storage range, byte order equal to key
 * order) and which etcd versions answer progress requests exactly.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keyspace, bytesPrefixEnd } from '../../src/storage/etcd/keys.js';
import { exactProgress } from '../../src/storage/etcd/watch.js';

const keys = [
  '',
  '/',
  '/a',
  '/r/x',
  '/registry',
  '/registry.',
  '/registry/',
  '/registry/apps/deployments/ns/a',
  '/registry/pods/ns/ünï-名前',
  '/registry0',
  '/registryz/x',
  '/s',
  '/zzz',
  'plain',
  '/r/u/emoji-🙂',
];

describe('etcd key layout', () => {
  const ks = new Keyspace('/p');

  it('maps /registry/ keys by replacing /registry with the prefix, others beside them', () => {
    assert.equal(ks.toEtcd('/registry/pods/ns/a').toString(), '/p/pods/ns/a');
    assert.equal(ks.toEtcd('/r/a').toString(), '/p!/r/a');
    assert.equal(ks.toEtcd('/s/a').toString(), '/p0/s/a');
    assert.equal(new Keyspace().toEtcd('/registry/pods/ns/a').toString(), '/registry/pods/ns/a');
    assert.equal(new Keyspace('/p/').toEtcd('/registry/x').toString(), '/p/x', 'a trailing slash is dropped');
    for (const k of keys) assert.equal(ks.fromEtcd(ks.toEtcd(k)), k);
  });

  it('keeps etcd byte order equal to key order', () => {
    const sorted = [...keys].sort();
    const byBytes = [...keys].sort((a, b) => Buffer.compare(ks.toEtcd(a), ks.toEtcd(b)));
    // JavaScript compares UTF-16 units, etcd bytes; they agree on these keys (no astral-versus-BMP ties).
    assert.deepEqual(byBytes, sorted);
  });

  it('gives every storage prefix exactly its keys as one etcd range', () => {
    const inRange = (k: Buffer, r: { key: Buffer; rangeEnd: Buffer }) => Buffer.compare(k, r.key) >= 0 && Buffer.compare(k, r.rangeEnd) < 0;
    for (const prefix of ['', '/', '/r', '/r/', '/registry', '/registry/', '/registry/pods/', '/s', 'p', '/registry0']) {
      const r = ks.range(prefix);
      for (const k of keys) assert.equal(inRange(ks.toEtcd(k), r), k.startsWith(prefix), `${JSON.stringify(k)} under ${JSON.stringify(prefix)}`);
      assert.ok(!inRange(ks.internal('compact_rev_key'), r), 'bookkeeping keys lie outside every range');
    }
    const from = ks.range('/registry/', '/registry/apps/deployments/ns/a\x00');
    assert.deepEqual(
      keys.filter((k) => inRange(ks.toEtcd(k), from)),
      ['/registry/pods/ns/ünï-名前'],
    );
  });

  it('computes byte prefix ends', () => {
    assert.deepEqual(bytesPrefixEnd(Buffer.from('ab')), Buffer.from('ac'));
    assert.deepEqual(bytesPrefixEnd(Buffer.from([0x61, 0xff])), Buffer.from('b'));
    assert.deepEqual(bytesPrefixEnd(Buffer.from([0xff])), Buffer.from([0]));
  });
});

describe('etcd progress requests', () => {
  it('are exact from 3.4.25 and 3.5.8 on', () => {
    for (const v of ['3.4.25', '3.4.30', '3.5.8', '3.5.17', '3.6.0', '4.0.0']) assert.equal(exactProgress(v), true, v);
    for (const v of ['3.4.23', '3.4.24', '3.5.7', '3.3.27', '', 'unknown']) assert.equal(exactProgress(v), false, v);
  });
});
