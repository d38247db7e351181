/**
 * The storage conformance suite: the same behaviors, unchanged, against every
 * backend (memory, sqlite, and etcd when it lands). Each backend's test file
 * calls runStorageConformance with a factory for fresh stores.
 */
import assert from 'node:assert/strict';
import { describe, it, afterEach } from 'node:test';
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
  type Storage,
  type WatchEvent,
} from '../../src/storage/index.js';
import { collectWatch } from './watch-helper.js';

export interface StoreFixture {
  storage: Storage;
  /** Close and open the same data again, when the backend keeps data across a reopen. */
  reopen?: () => Promise<Storage>;
  cleanup(): Promise<void>;
}

export function runStorageConformance(name: string, makeFixture: () => Promise<StoreFixture>): void {
  describe(`storage conformance: ${name}`, () => {
    let fixture: StoreFixture | undefined;
    const open = async () => {
      fixture = await makeFixture();
      return fixture.storage;
    };
    afterEach(async () => {
      await fixture?.cleanup();
      fixture = undefined;
    });

    it('creates, gets, updates and deletes with revisions', async () => {
      const s = await open();
      const base = await s.currentRevision();
      const a = await s.create('/r/a', 'one');
      assert.equal(a.modRevision, base + 1);
      assert.equal(a.createRevision, base + 1);
      assert.deepEqual(await s.get('/r/a'), a);
      const a2 = await s.update('/r/a', 'two', a.modRevision);
      assert.equal(a2.modRevision, base + 2);
      assert.equal(a2.createRevision, a.createRevision);
      assert.equal((await s.get('/r/a'))?.value, 'two');
      const del = await s.delete('/r/a', a2.modRevision);
      assert.equal(del.revision, base + 3);
      assert.equal(del.prevKv.value, 'two');
      assert.equal(await s.get('/r/a'), undefined);
      assert.equal(await s.currentRevision(), base + 3);
    });

    it('reports typed errors: exists, not found, conflict with the current value', async () => {
      const s = await open();
      const a = await s.create('/r/a', 'one');
      await assert.rejects(s.create('/r/a', 'again'), KeyExistsError);
      await assert.rejects(s.update('/r/missing', 'x', 1), KeyNotFoundError);
      await assert.rejects(s.delete('/r/missing'), KeyNotFoundError);
      const err = await s.update('/r/a', 'x', a.modRevision + 100).catch((e) => e);
      assert.ok(err instanceof ConflictError);
      assert.equal(err.current.value, 'one');
      assert.equal(err.current.modRevision, a.modRevision);
      await assert.rejects(s.delete('/r/a', a.modRevision + 100), ConflictError);
      assert.equal((await s.get('/r/a'))?.value, 'one', 'failed writes change nothing');
    });

    it('loses no update under concurrent compare-and-swap writers', async () => {
      const s = await open();
      await s.create('/r/counter', '0');
      const writers = 16;
      const perWriter = 25;
      let conflicts = 0;
      const writer = async () => {
        for (let i = 0; i < perWriter; i++) {
          for (;;) {
            const cur = (await s.get('/r/counter'))!;
            try {
              await s.update('/r/counter', String(Number(cur.value) + 1), cur.modRevision);
              break;
            } catch (e) {
              if (!(e instanceof ConflictError)) throw e;
              conflicts++;
            }
          }
        }
      };
      await Promise.all(Array.from({ length: writers }, writer));
      assert.equal((await s.get('/r/counter'))?.value, String(writers * perWriter));
      assert.ok(conflicts > 0, 'concurrent writers should have collided at least once');
    });

    it('ranges by prefix with limit, count and a start key', async () => {
      const s = await open();
      for (const k of ['b', 'a', 'c', 'd']) await s.create(`/r/x/${k}`, k);
      await s.create('/r/y/a', 'other prefix');
      await s.create('/r/x', 'not under the prefix /r/x/');
      const all = await s.range('/r/x/');
      assert.deepEqual(all.kvs.map((kv) => kv.key), ['/r/x/a', '/r/x/b', '/r/x/c', '/r/x/d']);
      assert.equal(all.count, 4);
      assert.equal(all.more, false);
      assert.equal(all.revision, await s.currentRevision());
      const page = await s.range('/r/x/', { limit: 2 });
      assert.deepEqual(page.kvs.map((kv) => kv.value), ['a', 'b']);
      assert.equal(page.more, true);
      assert.equal(page.count, 4);
      const next = await s.range('/r/x/', { limit: 2, startKey: '/r/x/b\x00' });
      assert.deepEqual(next.kvs.map((kv) => kv.value), ['c', 'd']);
      assert.equal(next.more, false);
      assert.equal(next.count, 2);
    });

    it('reads a range at an old revision', async () => {
      const s = await open();
      const a = await s.create('/r/a', 'a1');
      await s.create('/r/b', 'b1');
      const rev = await s.currentRevision();
      await s.update('/r/a', 'a2', a.modRevision);
      await s.delete('/r/b');
      await s.create('/r/c', 'c1');
      const old = await s.range('/r/', { revision: rev });
      assert.equal(old.revision, rev);
      assert.deepEqual(old.kvs.map((kv) => [kv.key, kv.value, kv.modRevision]), [
        ['/r/a', 'a1', a.modRevision],
        ['/r/b', 'b1', rev],
      ]);
      const now = await s.range('/r/');
      assert.deepEqual(now.kvs.map((kv) => [kv.key, kv.value]), [['/r/a', 'a2'], ['/r/c', 'c1']]);
      await assert.rejects(s.range('/r/', { revision: (await s.currentRevision()) + 5 }), FutureRevisionError);
    });

    it('keeps pagination at a fixed revision stable while writes happen', async () => {
      const s = await open();
      const names = Array.from({ length: 60 }, (_, i) => `/r/p/${String(i).padStart(3, '0')}`);
      for (const k of names) await s.create(k, k);
      const first = await s.range('/r/p/', { limit: 10 });
      const seen = first.kvs.map((kv) => kv.key);
      let startKey = seen[seen.length - 1] + '\x00';
      let more = first.more;
      let churn = 0;
      while (more) {
        // Writes between pages: deletes ahead of the cursor, creates everywhere.
        await s.delete(names[names.length - 1 - churn]);
        await s.create(`/r/p/${String(churn).padStart(3, '0')}-new`, 'new');
        churn++;
        const page = await s.range('/r/p/', { limit: 10, startKey, revision: first.revision });
        seen.push(...page.kvs.map((kv) => kv.key));
        more = page.more;
        startKey = page.kvs[page.kvs.length - 1].key + '\x00';
      }
      assert.deepEqual(seen, names, 'every key at the first page revision exactly once, in order');
    });

    it('watches from revision N: exactly the events after N, in order, with previous values', async () => {
      const s = await open();
      const a = await s.create('/r/w/a', 'a1');
      const n = await s.currentRevision();
      const a2 = await s.update('/r/w/a', 'a2', a.modRevision);
      await s.create('/r/other', 'not watched');
      await s.create('/r/w/b', 'b1');
      await s.delete('/r/w/a');
      const w = collectWatch(s, '/r/w/', n);
      await w.waitFor(3);
      await s.create('/r/w/c', 'c1');
      const events = await w.waitFor(4);
      w.close();
      assert.deepEqual(
        events.map((e: WatchEvent) => [e.type, e.kv.key, e.kv.value, e.prevKv?.value]),
        [
          ['PUT', '/r/w/a', 'a2', 'a1'],
          ['PUT', '/r/w/b', 'b1', undefined],
          ['DELETE', '/r/w/a', '', 'a2'],
          ['PUT', '/r/w/c', 'c1', undefined],
        ],
      );
      const revs = events.map((e) => e.kv.modRevision);
      assert.ok(revs[0] === a2.modRevision && revs.every((r, i) => i === 0 || r > revs[i - 1]));
    });

    it('delivers live events to a watch from the current revision', async () => {
      const s = await open();
      const w = collectWatch(s, '/r/live/', await s.currentRevision());
      const writes = [];
      for (let i = 0; i < 20; i++) writes.push(s.create(`/r/live/${i}`, String(i)));
      await Promise.all(writes);
      const events = await w.waitFor(20);
      w.close();
      // Concurrent writes may commit in any order (etcd runs each on its own goroutine); the events follow the commits.
      assert.deepEqual(events.map((e) => Number(e.kv.value)).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i));
      assert.ok(events.every((e, i) => i === 0 || e.kv.modRevision > events[i - 1].kv.modRevision), 'in revision order');
    });

    it('fails a watch or read from before the compact revision with compacted', async () => {
      const s = await open();
      const a = await s.create('/r/a', 'a1');
      const a2 = await s.update('/r/a', 'a2', a.modRevision);
      await s.create('/r/b', 'b1');
      const a3 = await s.update('/r/a', 'a3', a2.modRevision);
      await s.compact(a3.modRevision - 1);
      const w = collectWatch(s, '/r/', a.modRevision);
      const err = await w.error;
      assert.ok(err instanceof CompactedError, `expected compacted, got ${err}`);
      assert.equal(err.compactRevision, a3.modRevision - 1);
      await assert.rejects(s.range('/r/', { revision: a.modRevision }), CompactedError);
      // The state at the compact revision, and everything after it, survive.
      const at = await s.range('/r/', { revision: a3.modRevision - 1 });
      assert.deepEqual(at.kvs.map((kv) => kv.value), ['a2', 'b1']);
      const after = collectWatch(s, '/r/', a3.modRevision - 1);
      const events = await after.waitFor(1);
      after.close();
      assert.equal(events[0].kv.value, 'a3');
      assert.equal(events[0].prevKv?.value, 'a2');
    });

    it('writes delete tombstones: gone now, present in the past, recreated with a new create revision', async () => {
      const s = await open();
      const a = await s.create('/r/t', 'v1');
      const del = await s.delete('/r/t');
      assert.equal(await s.get('/r/t'), undefined);
      assert.deepEqual((await s.range('/r/')).kvs, []);
      assert.deepEqual((await s.range('/r/', { revision: a.modRevision })).kvs.map((kv) => kv.value), ['v1']);
      const again = await s.create('/r/t', 'v2');
      assert.ok(again.createRevision > del.revision);
      const w = collectWatch(s, '/r/', a.modRevision);
      const events = await w.waitFor(2);
      w.close();
      assert.deepEqual(events.map((e) => [e.type, e.prevKv?.value]), [['DELETE', 'v1'], ['PUT', undefined]]);
    });

    it('stores large values (1.5 MiB) and keys with unusual characters', async () => {
      const s = await open();
      const big = JSON.stringify({ data: 'x'.repeat(1.5 * 1024 * 1024) });
      const kv = await s.create('/r/big', big);
      assert.equal((await s.get('/r/big'))?.value.length, big.length);
      const keys = ['/r/u/spaces and tabs\t', '/r/u/ünïcödé-名前', '/r/u/percent%2Fslash', '/r/u/quote\'"', '/r/u/emoji-🙂'];
      for (const k of keys) await s.create(k, k);
      const listed = (await s.range('/r/u/')).kvs.map((x) => x.key);
      assert.deepEqual([...listed].sort(), [...keys].sort());
      for (const k of keys) assert.equal((await s.get(k))?.value, k);
      assert.equal((await s.range('/r/big', { revision: kv.modRevision })).kvs[0].value.length, big.length);
    });

    it('recovers revision, live keys and history after a reopen', async (t) => {
      const s = await open();
      if (!fixture?.reopen) return t.skip('backend keeps no data across a reopen');
      const a = await s.create('/r/a', 'a1');
      await s.update('/r/a', 'a2', a.modRevision);
      await s.create('/r/b', 'b1');
      const b = await s.create('/r/c', 'c1');
      await s.delete('/r/c');
      await s.compact(a.modRevision + 1);
      const rev = await s.currentRevision();
      const s2 = await fixture.reopen();
      assert.equal(await s2.currentRevision(), rev);
      assert.deepEqual((await s2.range('/r/')).kvs.map((kv) => [kv.key, kv.value]), [['/r/a', 'a2'], ['/r/b', 'b1']]);
      assert.deepEqual((await s2.range('/r/', { revision: b.modRevision })).kvs.map((kv) => kv.value), ['a2', 'b1', 'c1']);
      await assert.rejects(s2.range('/r/', { revision: a.modRevision }), CompactedError);
      const next = await s2.create('/r/d', 'd1');
      assert.equal(next.modRevision, rev + 1, 'the revision counter continues');
    });
  });
}
