/** The store tells an update whether to work in steps: by the request's body, or by the size of the stored object. */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { RestStore } from '../../src/registry/store.js';
import { openStorage } from '../../src/storage/index.js';
import type { KObject } from '../../src/api/object.js';

const storage = openStorage({ kind: 'memory' });
const store = new RestStore(
  storage,
  { group: '', resource: 'configmaps', singular: 'configmap', kind: 'ConfigMap', listKind: 'ConfigMapList', namespaced: true },
  { allowUnconditionalUpdate: true } as never,
);
after(async () => {
  store.stop();
  await storage.close();
});

const configMap = (name: string, keys: number): KObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data: Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, 'v'.repeat(40)])),
});

/** What the store told tryUpdate, for a small change (a label) of the named object, read from the cache or storage. */
async function largeFor(name: string, bodyBytes: number): Promise<boolean> {
  let told: boolean | undefined;
  await store.update('default', name, (old, large) => {
    told = large;
    return { ...old!, metadata: { ...old!.metadata, labels: { round: String(Math.random()) } } };
  }, { bodyBytes });
  return told!;
}

test('a small patch of a large stored object is worked in steps; of a small one, not', async () => {
  await store.create('default', configMap('small', 10));
  await store.create('default', configMap('large', 2000));
  // Once through storage (before the cache holds them), once through the cache.
  for (let i = 0; i < 2; i++) {
    assert.equal(await largeFor('small', 40), false);
    assert.equal(await largeFor('large', 40), true);
    assert.equal(await largeFor('small', 64 * 1024), true);
    await store.start();
    await store.cache.sync();
  }
});

test('concurrent updates of a large object take turns: none loses the compare-and-swap for good', async () => {
  await store.create('default', configMap('contended', 2000));
  const writes = Array.from({ length: 40 }, (_, i) =>
    store.update('default', 'contended', (old) => ({ ...old!, metadata: { ...old!.metadata, resourceVersion: undefined, labels: { ...old!.metadata.labels, [`w${i}`]: 'x' } } }), { bodyBytes: 40 }),
  );
  await Promise.all(writes);
  const final = await store.get('default', 'contended');
  assert.equal(Object.keys(final.metadata.labels ?? {}).length, 40);
});
