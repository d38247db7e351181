/**
 * The etcd backend against a real single-member etcd started on loopback:
 * the shared conformance suite, then what is particular to etcd: the key
 * layout under a prefix, progress notifications, compaction, a watch that
 * resumes across an etcd restart, bounded failures, and TLS with a client
 * certificate.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { CompactedError, FutureRevisionError, StorageUnavailableError, type WatchEvent } from '../../src/storage/index.js';
import { EtcdClient } from '../../src/storage/etcd/client.js';
import { EtcdStorage, type EtcdStorageOptions } from '../../src/storage/etcd/etcd-storage.js';
import { bytesPrefixEnd } from '../../src/storage/etcd/keys.js';
import { methods } from '../../src/storage/etcd/proto.js';
import { runStorageConformance } from './conformance.js';
import { findEtcd, freePorts, makeTlsFiles, startEtcdCluster, type EtcdCluster } from './etcd-helper.js';
import { collectWatch } from './watch-helper.js';

const etcd = findEtcd();

/** Resolves with what fn returns, or fails after ms. */
async function within<T>(ms: number, what: string, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([fn(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

if (!etcd.bin) {
  it('etcd storage', (t) => t.skip(etcd.reason));
} else {
  let cluster: EtcdCluster;
  let prefixes = 0;
  const freshPrefix = () => `/kapi-test/${process.pid}-${++prefixes}`;
  const open = (prefix: string, extra: Partial<EtcdStorageOptions> = {}) =>
    new EtcdStorage({ endpoints: cluster.endpoints, prefix, requestTimeoutMs: 5000, ...extra });

  before(async () => {
    cluster = await startEtcdCluster();
  });
  after(async () => {
    await cluster?.cleanup();
  });

  runStorageConformance('etcd', async () => {
    const prefix = freshPrefix();
    let storage = open(prefix);
    return {
      storage,
      reopen: async () => {
        await storage.close();
        storage = open(prefix);
        return storage;
      },
      cleanup: () => storage.close(),
    };
  });

  describe('etcd storage', () => {
    /** The etcd keys under a raw prefix, read past the storage layer. */
    const etcdKeys = async (rawPrefix: string): Promise<string[]> => {
      const client = new EtcdClient({ endpoints: cluster.endpoints });
      try {
        const key = Buffer.from(rawPrefix);
        const res = await client.call(methods.range, { key, range_end: bytesPrefixEnd(key), keys_only: true }, { write: false });
        return res.kvs.map((kv) => kv.key.toString());
      } finally {
        client.close();
      }
    };

    it('stores /registry/ keys under the prefix in place of /registry, other keys beside them', async () => {
      const base = freshPrefix();
      const a = open(`${base}/a`);
      const b = open(`${base}/b/`);
      try {
        await a.create('/registry/widgets/ns/one', '1');
        await a.create('/r/outside', '2');
        await b.create('/registry/widgets/ns/one', 'b');
        assert.deepEqual(await etcdKeys(`${base}/`), [`${base}/a!/r/outside`, `${base}/a/widgets/ns/one`, `${base}/b/widgets/ns/one`]);
        // Each installation sees its own keys only, and a range over '/' spans both kinds in key order.
        assert.deepEqual((await a.range('/')).kvs.map((kv) => kv.key), ['/r/outside', '/registry/widgets/ns/one']);
        assert.deepEqual((await b.range('/registry/')).kvs.map((kv) => kv.value), ['b']);
        assert.equal((await a.range('')).count, 2);
      } finally {
        await a.close();
        await b.close();
      }
      const def = new EtcdStorage({ endpoints: cluster.endpoints });
      try {
        const kv = await def.create(`/registry/kapi-test-${process.pid}/x`, 'default prefix');
        assert.deepEqual(await etcdKeys(`/registry/kapi-test-${process.pid}/`), [`/registry/kapi-test-${process.pid}/x`]);
        await def.delete(kv.key);
      } finally {
        await def.close();
      }
    });

    it('reports progress to a watch when asked for the current revision, after writes elsewhere', async () => {
      // No periodic requests: the progress comes from asking for the current revision.
      const s = open(freshPrefix(), { progressIntervalMs: 0 });
      try {
        const progress: number[] = [];
        const events: WatchEvent[] = [];
        const errors: Error[] = [];
        const handle = s.watch('/r/quiet/', await s.currentRevision(), {
          onEvents: (e) => events.push(...e),
          onProgress: (r) => progress.push(r),
          onError: (e) => errors.push(e),
        });
        for (let i = 0; i < 5; i++) await s.create(`/r/busy/${i}`, 'x');
        const target = await s.currentRevision();
        await within(3000, `progress to ${target}`, async () => {
          while (!progress.some((r) => r >= target)) {
            await new Promise((r) => setTimeout(r, 20));
            await s.currentRevision();
          }
        });
        assert.deepEqual(errors, []);
        assert.equal(events.length, 0);
        assert.ok(progress.every((r, i) => i === 0 || r > progress[i - 1]), 'progress only moves forward');
        handle.close();
      } finally {
        await s.close();
      }
    });

    it('maps compaction: a store that did not compact learns the compact revision from etcd', async () => {
      const prefix = freshPrefix();
      const s = open(prefix);
      const other = open(prefix);
      try {
        const a = await s.create('/r/a', '1');
        const a2 = await s.update('/r/a', '2', a.modRevision);
        await s.update('/r/a', '3', a2.modRevision);
        await s.compact(a2.modRevision);
        await s.compact(a.modRevision); // older than the last compaction: nothing to do
        await assert.rejects(s.compact((await s.currentRevision()) + 10), FutureRevisionError);
        const read = await other.range('/r/', { revision: a.modRevision }).catch((e) => e);
        assert.ok(read instanceof CompactedError, `expected compacted, got ${read}`);
        assert.equal(read.compactRevision, a2.modRevision);
        const w = collectWatch(other, '/r/', a.modRevision - 1);
        const err = await within(3000, 'compacted watch', () => w.error);
        assert.ok(err instanceof CompactedError);
        assert.equal(err.compactRevision, a2.modRevision);
      } finally {
        await s.close();
        await other.close();
      }
    });

    it('compacts in the background, one interval behind, shared between replicas', async () => {
      const prefix = freshPrefix();
      const r1 = open(prefix, { compactIntervalMs: 150 });
      const r2 = open(prefix, { compactIntervalMs: 150 });
      try {
        const first = await r1.create('/r/a', '1');
        await within(5000, 'background compaction', async () => {
          for (;;) {
            await r2.create(`/r/tick-${Date.now()}`, 'x');
            const res = await r1.range('/r/', { revision: first.modRevision }).catch((e) => e);
            if (res instanceof CompactedError) return;
            await new Promise((r) => setTimeout(r, 50));
          }
        });
        // The newest revisions stay readable.
        const now = await r1.currentRevision();
        assert.ok((await r2.range('/r/', { revision: now })).kvs.length > 0);
      } finally {
        await r1.close();
        await r2.close();
      }
    });

    it('resumes a watch across an etcd restart: events written meanwhile arrive once, in order', async () => {
      const s = open(freshPrefix(), { requestTimeoutMs: 1000 });
      try {
        const start = await s.currentRevision();
        const w = collectWatch(s, '/r/w/', start);
        for (let i = 0; i < 3; i++) await s.create(`/r/w/${i}`, String(i));
        await w.waitFor(3);
        await cluster.stop(0);
        await assert.rejects(
          within(3000, 'write while etcd is down', () => s.create('/r/w/down', 'x')),
          StorageUnavailableError,
        );
        await cluster.start(0);
        // Written right after the restart, most likely before the watch is back.
        for (let i = 3; i < 10; i++) await s.create(`/r/w/${i}`, String(i));
        const events = await w.waitFor(10, 10_000);
        await new Promise((r) => setTimeout(r, 200));
        assert.deepEqual(
          w.events.map((e) => e.kv.value),
          Array.from({ length: 10 }, (_, i) => String(i)),
          'every event once, in order',
        );
        assert.ok(events.every((e, i) => i === 0 || e.kv.modRevision > events[i - 1].kv.modRevision));
        w.close();
      } finally {
        await s.close();
      }
    });

    it('fails with StorageUnavailableError within the request timeout when no endpoint answers', async () => {
      const [port] = await freePorts(1);
      const s = new EtcdStorage({ endpoints: [`http://127.0.0.1:${port}`], requestTimeoutMs: 700 });
      try {
        const started = Date.now();
        await assert.rejects(s.get('/registry/x'), StorageUnavailableError);
        await assert.rejects(s.create('/registry/x', 'v'), StorageUnavailableError);
        assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
      } finally {
        await s.close();
      }
    });

    it('ends watches and refuses calls once closed', async () => {
      const s = open(freshPrefix());
      const w = collectWatch(s, '/r/', await s.currentRevision());
      await s.close();
      assert.ok((await within(1000, 'watch error', () => w.error)) instanceof StorageUnavailableError);
      await assert.rejects(s.get('/r/a'), StorageUnavailableError);
      await assert.rejects(s.create('/r/a', 'x'), StorageUnavailableError);
    });
  });

  describe('etcd storage over TLS with a client certificate', () => {
    const tls = makeTlsFiles();
    let secure: EtcdCluster | undefined;
    before(async () => {
      if (tls) secure = await startEtcdCluster({ tls });
    });
    after(async () => {
      await secure?.cleanup();
      if (tls) rmSync(tls.dir, { recursive: true, force: true });
    });

    it('connects with the CA and client certificate, and is refused without the certificate', async (t) => {
      if (!tls || !secure) return t.skip('openssl is not available to make certificates');
      const good = new EtcdStorage({
        endpoints: secure.endpoints,
        prefix: '/tls',
        // The certificate names 127.0.0.1 too; checking 'localhost' exercises serverName.
        tls: { caFile: tls.caFile, certFile: tls.clientCertFile, keyFile: tls.clientKeyFile, serverName: 'localhost' },
        requestTimeoutMs: 3000,
      });
      const anonymous = new EtcdStorage({ endpoints: secure.endpoints, prefix: '/tls', tls: { caFile: tls.caFile, serverName: 'localhost' }, requestTimeoutMs: 700 });
      try {
        assert.ok(secure.endpoints[0].startsWith('https://'));
        const w = collectWatch(good, '/r/', await good.currentRevision());
        const kv = await good.create('/r/a', 'over tls');
        assert.equal((await good.get('/r/a'))?.modRevision, kv.modRevision);
        assert.equal((await w.waitFor(1))[0].kv.value, 'over tls');
        w.close();
        await assert.rejects(anonymous.get('/r/a'), StorageUnavailableError);
      } finally {
        await good.close();
        await anonymous.close();
      }
    });
  });
}
