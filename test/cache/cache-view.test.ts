/** A view of a watch cache (cache/cache-view.ts): brought up to date key by key, made anew only when it must be. */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { CacheView } from '../../src/cache/cache-view.js';
import { WatchCache } from '../../src/cache/watch-cache.js';
import { openStorage, type Storage } from '../../src/storage/index.js';
import type { KObject } from '../../src/api/object.js';

const decode = (kv: { key: string; value: string }): KObject => JSON.parse(kv.value) as KObject;
const obj = (name: string, n: number) => JSON.stringify({ apiVersion: 'v1', kind: 'Thing', metadata: { name }, n });

async function until(cond: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 3000; !cond(); await new Promise((r) => setTimeout(r, 5))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

describe('cache view', () => {
  let storage: Storage;
  let cache: WatchCache<KObject>;
  afterEach(async () => {
    cache.stop();
    await storage.close();
  });

  it('follows writes under its prefix one key at a time, and is made anew when the ring no longer reaches back', async () => {
    storage = openStorage({ kind: 'memory' });
    cache = new WatchCache<KObject>(storage, '/registry/things/', decode, { capacity: 4 });
    await storage.create('/registry/things/ns1/a', obj('a', 1));
    await storage.create('/registry/things/ns1/b', obj('b', 1));
    await storage.create('/registry/things/ns2/c', obj('c', 1));
    await cache.start();
    const seen = new Map<string, number>();
    let resets = 0;
    let sets = 0;
    const view = new CacheView(cache, '/registry/things/ns1/', {
      reset: () => (resets++, seen.clear()),
      set: (key, o) => (sets++, o ? seen.set(key, o.n as number) : seen.delete(key)),
    });
    const state = () => [...seen].sort().map(([k, n]) => `${k.slice('/registry/things/'.length)}=${n}`);
    view.refresh();
    assert.deepEqual(state(), ['ns1/a=1', 'ns1/b=1']);
    assert.deepEqual([resets, sets], [1, 2]);

    // Nothing moved: nothing to do.
    view.refresh();
    assert.equal(sets, 2);

    const a = cache.get('/registry/things/ns1/a')!;
    await storage.update('/registry/things/ns1/a', obj('a', 2), a.revision);
    await storage.delete('/registry/things/ns1/b');
    await storage.create('/registry/things/ns1/d', obj('d', 1));
    await storage.create('/registry/things/ns2/e', obj('e', 1));
    await until(() => cache.get('/registry/things/ns2/e') !== undefined, 'the writes in the cache');
    view.refresh();
    assert.deepEqual(state(), ['ns1/a=2', 'ns1/d=1']);
    assert.deepEqual([resets, sets], [1, 5], 'the three keys of its prefix that changed, no pass over the others');

    // More writes than the ring keeps (4): the view cannot be told what changed, so it is made anew.
    for (let i = 0; i < 6; i++) await storage.create(`/registry/things/ns1/x${i}`, obj(`x${i}`, i));
    await until(() => cache.get('/registry/things/ns1/x5') !== undefined, 'the writes in the cache');
    view.refresh();
    assert.equal(resets, 2);
    assert.deepEqual(state(), ['ns1/a=2', 'ns1/d=1', 'ns1/x0=0', 'ns1/x1=1', 'ns1/x2=2', 'ns1/x3=3', 'ns1/x4=4', 'ns1/x5=5']);
  });

  it('refreshed by a watcher in the middle of a batch of events, catches up on the rest of it later', async () => {
    storage = openStorage({ kind: 'memory' });
    cache = new WatchCache<KObject>(storage, '/registry/things/', decode);
    await cache.start();
    const seen = new Set<string>();
    const view = new CacheView(cache, '/registry/things/', { reset: () => seen.clear(), set: (key, o) => (o ? seen.add(key) : seen.delete(key)) });
    view.refresh();
    let refreshed = false;
    cache.watch(
      { afterRevision: 0 },
      {
        onEvent: () => {
          if (!refreshed) view.refresh();
          refreshed = true;
          return true;
        },
        onClose: () => {},
      },
    );
    // Written together: one batch of three events.
    await Promise.all(['a', 'b', 'c'].map((n) => storage.create(`/registry/things/${n}`, obj(n, 1))));
    await until(() => cache.get('/registry/things/c') !== undefined && cache.get('/registry/things/a') !== undefined, 'the writes in the cache');
    assert.ok(refreshed);
    view.refresh();
    assert.deepEqual([...seen].sort(), ['/registry/things/a', '/registry/things/b', '/registry/things/c']);
  });
});
