/** The watch cache against the memory and sqlite backends. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { ListAbortedError, TooLargeRevisionError, TooOldRevisionError, SlowWatcherError } from '../../src/cache/errors.js';
import { decodedObjectLimit, setDecodedObjectLimit, WatchCache, type CacheEvent, type CacheEventType } from '../../src/cache/watch-cache.js';
import { openStorage, type Storage } from '../../src/storage/index.js';

interface Obj {
  name: string;
  labels: Record<string, string>;
  rv: number;
}
const decode = (kv: { key: string; value: string; modRevision: number }): Obj => ({ ...JSON.parse(kv.value), rv: kv.modRevision });
const val = (name: string, labels: Record<string, string> = {}) => JSON.stringify({ name, labels });

interface Seen {
  type: CacheEventType;
  event: CacheEvent<Obj>;
}

function recorder() {
  const seen: Seen[] = [];
  const bookmarks: number[] = [];
  let closed: Error | undefined | 'open' = 'open';
  return {
    seen,
    bookmarks,
    closed: () => closed,
    sink: {
      onEvent: (type: CacheEventType, event: CacheEvent<Obj>) => (seen.push({ type, event }), true),
      onBookmark: (rev: number) => (bookmarks.push(rev), true),
      onClose: (e?: Error) => (closed = e),
    },
  };
}

/** A filter that accepts everything after `ms` of work an object: lists in steps pause in it. */
function slowFilter(ms: number): () => boolean {
  return () => {
    for (const end = performance.now() + ms; performance.now() < end; );
    return true;
  };
}

async function until(cond: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const backends: Array<[string, () => { storage: Storage; cleanup(): void }]> = [
  ['memory', () => ({ storage: openStorage({ kind: 'memory' }), cleanup: () => {} })],
  [
    'sqlite',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'kapi-cache-'));
      return { storage: openStorage({ kind: 'sqlite', path: join(dir, 'db') }), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
];

for (const [name, make] of backends) {
  describe(`watch cache on ${name}`, () => {
    let cleanups: Array<() => unknown> = [];
    const setup = async (options = {}) => {
      const { storage, cleanup } = make();
      const cache = new WatchCache<Obj>(storage, '/registry/things/', decode, options);
      cleanups.push(cleanup, () => storage.close(), () => cache.stop());
      return { storage, cache };
    };
    afterEach(async () => {
      for (const c of cleanups.reverse()) await c();
      cleanups = [];
    });

    it('loads what is stored and follows writes, decoding each object once', async () => {
      const { storage } = make();
      let decodes = 0;
      await storage.create('/registry/things/ns1/b', val('b'));
      await storage.create('/registry/other/x', val('x'));
      const cache = new WatchCache<Obj>(storage, '/registry/things/', (kv) => (decodes++, decode(kv)));
      cleanups.push(() => storage.close(), () => cache.stop());
      await cache.start();
      assert.equal(cache.size, 1);
      const a = await storage.create('/registry/things/ns1/a', val('a'));
      assert.equal(cache.get('/registry/things/ns1/a')?.object.name, 'a', 'an acknowledged write is already cached');
      assert.equal(cache.currentRevision, a.modRevision);
      cache.list();
      cache.list();
      assert.equal(decodes, 2);
    });

    it('lists sorted, by namespace prefix, with limit, start key and remaining count', async () => {
      const { storage, cache } = await setup();
      await cache.start();
      for (const k of ['ns2/a', 'ns1/c', 'ns1/a', 'ns1/b']) await storage.create(`/registry/things/${k}`, val(k));
      const all = cache.list();
      assert.deepEqual(all.items.map((e) => e.object.name), ['ns1/a', 'ns1/b', 'ns1/c', 'ns2/a']);
      assert.equal(all.revision, await storage.currentRevision());
      const ns1 = cache.list({ prefix: '/registry/things/ns1/', limit: 2 });
      assert.deepEqual(ns1.items.map((e) => e.object.name), ['ns1/a', 'ns1/b']);
      assert.equal(ns1.more, true);
      assert.equal(ns1.remaining, 1);
      const rest = cache.list({ prefix: '/registry/things/ns1/', limit: 2, startKey: ns1.lastKey + '\x00' });
      assert.deepEqual(rest.items.map((e) => e.object.name), ['ns1/c']);
      assert.equal(rest.more, false);
      const filtered = cache.list({ filter: (o) => o.name.endsWith('a') });
      assert.deepEqual(filtered.items.map((e) => e.object.name), ['ns1/a', 'ns2/a']);
      assert.equal(filtered.remaining, undefined);
    });

    it('lists in steps at one revision while writes come between the steps, ahead of and behind the list', async () => {
      const { storage, cache } = await setup();
      await cache.start();
      const key = (i: number | string) => `/registry/things/k${typeof i === 'number' ? String(i).padStart(4, '0') : i}`;
      for (let i = 0; i < 600; i++) await storage.create(key(i), val(`k${i}`));
      const expected = cache.list().items.map((e) => [e.key, e.revision]);
      const r0 = cache.currentRevision;
      // A filter that takes 0.1 ms an object: the list pauses after 256 of them (5 ms of work, the clock read every 256).
      const slow = slowFilter(0.1);
      const steps = cache.listing({ filter: slow });
      let r = steps.next();
      let pauses = 0;
      for (; !r.done; r = steps.next()) {
        pauses++;
        const writes = [
          storage.update(key(400 + pauses), val('changed'), cache.get(key(400 + pauses))!.revision),
          storage.delete(key(450 + pauses)),
          storage.create(key(`0300x${pauses}`), val('new')),
          storage.update(key(10 + pauses), val('changed'), cache.get(key(10 + pauses))!.revision),
          storage.delete(key(20 + pauses)),
        ];
        for (const w of writes) await w;
      }
      assert.ok(pauses >= 2, `paused ${pauses} times`);
      assert.ok(cache.currentRevision > r0);
      assert.equal(r.value.revision, r0);
      assert.deepEqual(r.value.items.map((e) => [e.key, e.revision]), expected, 'the objects as they were at the revision of the list');
      assert.equal(cache.list().items.length, 600 - pauses, 'the writes themselves are in the cache');
    });

    it('ends a list in steps with TooOldRevisionError when its revision left the window during a pause', async () => {
      const { storage, cache } = await setup({ capacity: 4 });
      await cache.start();
      for (let i = 0; i < 300; i++) await storage.create(`/registry/things/k${String(i).padStart(4, '0')}`, val(`k${i}`));
      const r0 = cache.currentRevision;
      const steps = cache.listing({ filter: slowFilter(0.1) });
      assert.equal(steps.next().done, false, 'a pause');
      for (let i = 0; i < 6; i++) await storage.create(`/registry/things/late${i}`, val('late'));
      assert.throws(() => steps.next(), (err: unknown) => err instanceof TooOldRevisionError && err.requestedRevision === r0);
    });

    it('ends a list in steps whose client is gone, and one during which the cache lists the store again', async () => {
      const { storage, cache } = await setup();
      await cache.start();
      for (let i = 0; i < 600; i++) await storage.create(`/registry/things/k${String(i).padStart(4, '0')}`, val(`k${i}`));
      const slow = slowFilter(0.1);
      let gone = false;
      const abandoned = cache.listing({ filter: slow, aborted: () => gone });
      assert.equal(abandoned.next().done, false, 'a pause');
      gone = true;
      assert.throws(() => abandoned.next(), ListAbortedError);
      const relisted = cache.listing({ filter: slow });
      assert.equal(relisted.next().done, false, 'a pause');
      // What a broken watch of the store does: the cache empties and loads again (its keys are not those of the list).
      (cache as unknown as { restart(err: Error): void }).restart(new Error('watch broken'));
      assert.equal(cache.relisting, true, 'what a list or watch asks it meanwhile goes to storage or waits');
      assert.throws(() => relisted.next(), TooOldRevisionError);
      await cache.start();
      assert.equal(cache.relisting, false);
      assert.equal(cache.list().items.length, 600);
    });

    it('lists and watches one key alone (a name), reading no other object', async () => {
      const { storage, cache } = await setup();
      await cache.start();
      for (const k of ['ns1/a', 'ns1/ab', 'ns1/b', 'ns2/a']) await storage.create(`/registry/things/${k}`, val(k));
      let read = 0;
      const filter = (o: Obj) => (read++, o.name === 'ns1/a');
      const one = cache.list({ prefix: '/registry/things/ns1/', key: '/registry/things/ns1/a', filter });
      assert.deepEqual(one.items.map((e) => e.object.name), ['ns1/a']);
      assert.equal(read, 1, 'only that key was read (not ns1/ab, which it prefixes)');
      assert.deepEqual(cache.list({ key: '/registry/things/ns1/a', startKey: '/registry/things/ns1/a\x00' }).items, [], 'a continue past it');
      assert.deepEqual(cache.list({ key: '/registry/things/ns1/none' }).items, []);
      const r = recorder();
      cache.watch({ prefix: '/registry/things/ns1/', key: '/registry/things/ns1/ab' }, r.sink);
      await storage.update('/registry/things/ns1/a', val('changed'), cache.get('/registry/things/ns1/a')!.revision);
      await storage.update('/registry/things/ns1/ab', val('changed'), cache.get('/registry/things/ns1/ab')!.revision);
      await until(() => r.seen.length >= 2, 'events');
      assert.deepEqual(r.seen.map((e) => [e.type, e.event.key]), [['ADDED', '/registry/things/ns1/ab'], ['MODIFIED', '/registry/things/ns1/ab']]);
    });

    it('sends a watch\'s first events in steps, the events that come meanwhile after them, then its bookmark', async () => {
      const { storage, cache } = await setup();
      await cache.start();
      const key = (i: number) => `/registry/things/k${String(i).padStart(4, '0')}`;
      for (let i = 0; i < 600; i++) await storage.create(key(i), val(`k${i}`));
      const r0 = cache.currentRevision;
      const seen: Array<[string, string, boolean | undefined]> = [];
      const marks: Array<[number, boolean | undefined]> = [];
      // 0.5 ms an object: a pause after 256 of them (the clock is read every 256).
      const slow = slowFilter(0.5);
      cache.watch(
        { filter: slow, inSteps: true, bookmarks: true, initialEventsEnd: true },
        { onEvent: (type, event, initial) => (seen.push([type, event.key, initial]), true), onBookmark: (rev, end) => (marks.push([rev, end]), true), onClose: () => {} },
      );
      const firstStep = seen.length;
      assert.ok(firstStep > 0 && firstStep < 600, `the first step sent ${firstStep} of 600`);
      // Written while the first events are still going out: a change to one not sent yet, and a new one.
      const writes = [storage.update(key(599), val('changed'), cache.get(key(599))!.revision), storage.create(key(600), val('new'))];
      for (const w of writes) await w;
      await until(() => marks.length > 0, 'the bookmark');
      const initial = seen.filter(([, , i]) => i);
      assert.equal(initial.length, 600);
      assert.ok(initial.every(([type]) => type === 'ADDED'));
      assert.deepEqual(seen.slice(600), [['MODIFIED', key(599), undefined], ['ADDED', key(600), undefined]], 'after the first events, in order');
      assert.deepEqual(marks, [[r0 + 2, true]]);
    });

    it('lets a watch\'s first events wait for a client that reads slowly, and end when it is closed meanwhile', async () => {
      const { storage, cache } = await setup();
      await cache.start();
      for (let i = 0; i < 300; i++) await storage.create(`/registry/things/k${String(i).padStart(4, '0')}`, val(`k${i}`));
      const seen: string[] = [];
      let read: () => void = () => {};
      // The client takes 100 events, then reads nothing until told to.
      const sink = {
        onEvent: (_type: CacheEventType, event: CacheEvent<Obj>) => (seen.push(event.key), true),
        waitForRoom: () => (seen.length % 100 === 0 ? new Promise<void>((r) => (read = r)) : undefined),
        onClose: () => {},
      };
      const watcher = cache.watch({ inSteps: true }, sink);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(seen.length, 100, 'waiting for the client');
      read();
      await until(() => seen.length === 200, 'the next hundred');
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(seen.length, 200);
      // Closed while it waits: it sends nothing more, and waits no longer.
      watcher.close();
      read();
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(seen.length, 200);
    });

    it('lists at a past revision inside the window, and refuses one before it', async () => {
      const { storage, cache } = await setup({ capacity: 4 });
      await cache.start();
      const start = cache.currentRevision;
      const a = await storage.create('/registry/things/a', val('a1'));
      await storage.create('/registry/things/b', val('b1'));
      const mid = await storage.currentRevision();
      await storage.update('/registry/things/a', val('a2'), a.modRevision);
      await storage.delete('/registry/things/b');
      await storage.create('/registry/things/c', val('c1'));
      const past = cache.list({ revision: mid });
      assert.deepEqual(past.items.map((e) => [e.object.name, e.revision]), [['a1', a.modRevision], ['b1', mid]]);
      assert.equal(past.revision, mid);
      const page = cache.list({ revision: mid, limit: 1 });
      assert.equal(page.more, true);
      assert.throws(() => cache.list({ revision: start }), TooOldRevisionError, 'the ring holds 4 events: 5 writes pushed the window past start');
      assert.throws(() => cache.list({ revision: cache.currentRevision + 10 }), TooLargeRevisionError);
    });

    it('watches from a revision, from scratch (initial ADDED events), and refuses a too-old revision', async () => {
      const { storage, cache } = await setup({ capacity: 3 });
      await cache.start();
      const a = await storage.create('/registry/things/a', val('a1'));
      const fromA = recorder();
      cache.watch({ afterRevision: a.modRevision }, fromA.sink);
      const fresh = recorder();
      cache.watch({}, fresh.sink);
      await storage.update('/registry/things/a', val('a2'), a.modRevision);
      await storage.delete('/registry/things/a');
      assert.deepEqual(fromA.seen.map((s) => [s.type, s.event.object.name]), [['MODIFIED', 'a2'], ['DELETED', 'a2']]);
      assert.equal(fromA.seen[1].event.revision, await storage.currentRevision(), 'a DELETED event carries the delete revision');
      assert.equal(fromA.seen[1].event.object.rv, await storage.currentRevision());
      assert.deepEqual(fresh.seen.map((s) => [s.type, s.event.object.name]), [['ADDED', 'a1'], ['MODIFIED', 'a2'], ['DELETED', 'a2']]);
      assert.equal(fromA.seen[0].event, fresh.seen[1].event, 'every watcher gets the same event object');
      await storage.create('/registry/things/b', val('b'));
      await storage.create('/registry/things/c', val('c'));
      assert.throws(() => cache.watch({ afterRevision: a.modRevision }, recorder().sink), TooOldRevisionError);
    });

    it('turns selector transitions into ADDED and DELETED for a filtered watcher', async () => {
      const { storage, cache } = await setup();
      await cache.start();
      const w = recorder();
      cache.watch({ afterRevision: cache.currentRevision, filter: (o) => o.labels.app === 'web' }, w.sink);
      const x = await storage.create('/registry/things/x', val('x', { app: 'db' }));
      const x2 = await storage.update('/registry/things/x', val('x', { app: 'web' }), x.modRevision);
      const x3 = await storage.update('/registry/things/x', val('x', { app: 'web', v: '2' }), x2.modRevision);
      await storage.update('/registry/things/x', val('x', { app: 'db' }), x3.modRevision);
      assert.deepEqual(w.seen.map((s) => s.type), ['ADDED', 'MODIFIED', 'DELETED']);
    });

    it('drops a watcher that cannot keep up, and sends bookmarks to those who asked', async () => {
      const { storage, cache } = await setup({ bookmarkIntervalMs: 20 });
      await cache.start();
      let taken = 0;
      let closedWith: Error | undefined;
      cache.watch({}, { onEvent: () => ++taken < 2, onClose: (e) => (closedWith = e) });
      const b = recorder();
      cache.watch({ bookmarks: true }, b.sink);
      const plain = recorder();
      cache.watch({}, plain.sink);
      for (let i = 0; i < 4; i++) await storage.create(`/registry/things/${i}`, val(String(i)));
      assert.ok(closedWith instanceof SlowWatcherError);
      assert.equal(taken, 2);
      assert.equal(cache.watcherCount, 2);
      await until(() => b.bookmarks.at(-1) === cache.currentRevision, 'a bookmark at the current revision');
      assert.deepEqual(plain.bookmarks, [], 'no bookmarks for a watcher that did not ask');
      assert.equal(plain.seen.length, 4, 'the watcher that did not ask still gets every event');
    });

    it('sends bookmarks to many watchers a slice per turn of the loop', async () => {
      const { cache } = await setup({ bookmarkIntervalMs: 30 });
      await cache.start();
      const count = 2500;
      const got: number[] = [];
      let sentBeforeNextTurn: number | undefined;
      for (let i = 0; i < count; i++) {
        cache.watch(
          { bookmarks: true },
          {
            onEvent: () => true,
            onBookmark: (rev: number) => {
              // Seen from the first watcher's bookmark: how many were sent before the loop went round once.
              if (got.length === 0) setImmediate(() => (sentBeforeNextTurn ??= got.length));
              got.push(rev);
              return true;
            },
            onClose: () => {},
          },
        );
      }
      await until(() => got.length >= count, 'a bookmark to every watcher');
      cache.stop();
      assert.ok(sentBeforeNextTurn !== undefined && sentBeforeNextTurn < count, `bookmarks sent before the next turn: ${sentBeforeNextTurn} of ${count}`);
      assert.ok(got.every((rev, i) => i === 0 || rev >= got[i - 1]), 'revisions never go back');
    });

    it('waits for freshness, and times out past the current revision', async () => {
      const { storage, cache } = await setup();
      await cache.start();
      await storage.create('/registry/unrelated', val('u'));
      await cache.sync();
      assert.equal(cache.currentRevision, await storage.currentRevision(), 'progress advances the cache without events of its own');
      await assert.rejects(cache.waitUntilFresh(cache.currentRevision + 5, 50), TooLargeRevisionError);
    });

    it('keeps objects past the decoded set as text, and decodes them again when read', async () => {
      const limit = decodedObjectLimit();
      setDecodedObjectLimit(2);
      cleanups.push(() => setDecodedObjectLimit(limit));
      let unpacks = 0;
      const compact = {
        pack: (o: Obj) => JSON.stringify(o),
        unpack: (text: string) => (unpacks++, JSON.parse(text) as Obj),
        unpackStored: (kv: { key: string; value: string; modRevision: number }) => (unpacks++, decode(kv)),
        labels: (o: Obj) => o.labels,
      };
      const { storage, cache } = await setup({ compact, capacity: 100, restamp: (o: Obj, rv: number) => ({ ...o, rv }) });
      const key = (i: number) => `/registry/things/a${i}`;
      for (let i = 0; i < 3; i++) await storage.create(key(i), val(`a${i}`));
      await cache.start();
      const w = recorder();
      cache.watch({ afterRevision: cache.currentRevision, filter: (o) => o.labels.keep === 'yes' }, w.sink);
      for (let i = 3; i < 8; i++) await storage.create(key(i), val(`a${i}`, { keep: 'yes' }));
      const mid = cache.currentRevision;
      assert.equal(unpacks, 0, 'nothing read yet');
      assert.deepEqual(cache.list().items.map((e) => [e.object.name, e.object.rv === e.revision]), Array.from({ length: 8 }, (_, i) => [`a${i}`, true]));
      assert.ok(unpacks >= 6, `the objects past the 2 kept decoded were decoded again (${unpacks})`);
      const before = unpacks;
      assert.equal(cache.get(key(7))?.object.name, 'a7');
      assert.equal(cache.get(key(7))?.object.name, 'a7');
      assert.ok(unpacks <= before + 1, 'an object read is kept decoded for the next read');

      // Changes to objects kept as text: the filtered watcher sees them by their previous state.
      const unpacked = unpacks;
      const a3 = cache.get(key(3))!;
      await storage.update(key(3), val('a3', {}), a3.revision);
      const a0 = cache.get(key(0))!;
      await storage.update(key(0), val('a0', { keep: 'yes' }), a0.revision);
      await until(() => w.seen.length >= 7, 'the watcher hears both updates');
      assert.deepEqual(w.seen.slice(5).map((s) => [s.type, s.event.object.name, s.event.object.labels.keep]), [
        ['DELETED', 'a3', 'yes'],
        ['ADDED', 'a0', 'yes'],
      ]);
      assert.ok(unpacks >= unpacked + 2, 'the previous states of a3 and a0 (kept as text) were decoded for the filter');
      // The list at a revision before them has the objects as they were.
      const past = cache.list({ revision: mid, limit: 4 });
      assert.deepEqual(past.items.map((e) => [e.object.name, e.object.labels.keep]), [['a0', undefined], ['a1', undefined], ['a2', undefined], ['a3', 'yes']]);
      assert.equal(past.remaining, 4);
      // A label selector reads the labels kept beside the text: only the objects it takes are decoded.
      const selecting = unpacks;
      const kept = cache.list({ labels: (l) => l?.keep === 'yes', filter: (o) => o.labels.keep === 'yes' });
      assert.ok(unpacks - selecting <= 5, `decoded for the selector: ${unpacks - selecting}`);
      assert.deepEqual(kept.items.map((e) => e.object.name), ['a0', 'a4', 'a5', 'a6', 'a7']);
      // A watch's first events are decoded as the watcher takes them: one dropped after three decodes no more.
      const watching = unpacks;
      let taken = 0;
      let ended: Error | undefined;
      cache.watch({}, { onEvent: (_t, e) => (e.object.name !== undefined && ++taken < 3), onClose: (err) => (ended = err) });
      assert.equal(taken, 3);
      assert.ok(ended instanceof SlowWatcherError);
      assert.ok(unpacks - watching <= 3, `decoded for the watch: ${unpacks - watching} of 8`);
    });

    it('keeps decoded an object its compact form cannot write, and goes on packing the others', async () => {
      const limit = decodedObjectLimit();
      setDecodedObjectLimit(2);
      cleanups.push(() => setDecodedObjectLimit(limit));
      let packs = 0;
      const compact = {
        pack: (o: Obj) => {
          if (o.name === 'bad') throw new TypeError('Do not know how to serialize a BigInt');
          packs++;
          return JSON.stringify(o);
        },
        unpack: (text: string) => JSON.parse(text) as Obj,
        unpackStored: (kv: { key: string; value: string; modRevision: number }) => decode(kv),
        labels: (o: Obj) => o.labels,
      };
      const { storage, cache } = await setup({ compact });
      await cache.start();
      await storage.create('/registry/things/bad', val('bad'));
      for (let i = 0; i < 6; i++) await storage.create(`/registry/things/ok${i}`, val(`ok${i}`));
      assert.ok(packs >= 4, `the others were packed past it (${packs})`);
      assert.deepEqual(cache.list().items.map((e) => e.object.name), ['bad', 'ok0', 'ok1', 'ok2', 'ok3', 'ok4', 'ok5']);
      assert.equal(cache.get('/registry/things/bad')?.object.name, 'bad');
    });

    it('keeps every object decoded with no limit (0)', async () => {
      const limit = decodedObjectLimit();
      setDecodedObjectLimit(0);
      cleanups.push(() => setDecodedObjectLimit(limit));
      assert.equal(decodedObjectLimit(), 0);
      let packs = 0;
      const compact = { pack: (o: Obj) => (packs++, JSON.stringify(o)), unpack: (t: string) => JSON.parse(t) as Obj, unpackStored: decode, labels: (o: Obj) => o.labels };
      const { storage, cache } = await setup({ compact });
      for (let i = 0; i < 5; i++) await storage.create(`/registry/things/s${i}`, val(`s${i}`));
      await cache.start();
      for (let i = 5; i < 10; i++) await storage.create(`/registry/things/s${i}`, val(`s${i}`));
      assert.equal(cache.list().items.length, 10);
      assert.equal(packs, 0);
    });

    it('closes its watchers when stopped', async () => {
      const { cache } = await setup();
      await cache.start();
      const w = recorder();
      cache.watch({}, w.sink);
      cache.stop();
      assert.equal(w.closed(), undefined);
    });
  });
}
