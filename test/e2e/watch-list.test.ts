/**
 * Watch-list (`sendInitialEvents`), as newer client-go informers use it: the
 * current objects as ADDED events, then a bookmark annotated
 * `k8s.io/initial-events-end`, then changes; with upstream's validation of the
 * parameter combinations.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, watchEvents, type TestServer } from './harness.js';

const CM = '/api/v1/namespaces/default/configmaps';
const WATCH_LIST = 'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';

describe('watch-list', () => {
  let s: TestServer;
  const created: string[] = [];
  before(async () => {
    s = await startTestServer();
    for (const name of ['one', 'two', 'three']) {
      const res = await s.request('POST', CM, { body: { metadata: { name, labels: { set: name === 'three' ? 'b' : 'a' } } } });
      assert.equal(res.status, 201);
      created.push(res.json.metadata.resourceVersion);
    }
  });
  after(() => s.stop());

  it('sends the current objects, a bookmark that ends them, then changes', async () => {
    const w = watchEvents(s.kapi, `${CM}?${WATCH_LIST}&labelSelector=set%3Da`, 4, 5000);
    assert.equal(await w.status, 200);
    await new Promise((r) => setTimeout(r, 50));
    const changed = await s.request('PATCH', `${CM}/one`, { body: { data: { k: 'v' } }, contentType: 'application/merge-patch+json' });
    const events = await w.events;
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'one'], ['ADDED', 'two'], ['BOOKMARK', undefined], ['MODIFIED', 'one']]);
    const bookmark = events[2].object;
    assert.deepEqual(bookmark, {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { resourceVersion: bookmark.metadata.resourceVersion, creationTimestamp: null, annotations: { 'k8s.io/initial-events-end': 'true' } },
    });
    assert.ok(Number(bookmark.metadata.resourceVersion) >= Number(created[2]), 'the state is at least as new as the last write');
    assert.equal(events[3].object.metadata.resourceVersion, changed.json.metadata.resourceVersion);
  });

  it('serves the state at a resourceVersion or newer, and no initial events when asked for none', async () => {
    const at = await s.request('GET', `${CM}?${WATCH_LIST}&resourceVersion=${created[0]}&timeoutSeconds=1`);
    const lines = at.text.trim().split('\n').map((l) => JSON.parse(l));
    // kube-root-ca.crt, which every namespace has, is among the initial events.
    assert.deepEqual(lines.filter((e) => e.type === 'ADDED' && e.object.metadata.name !== 'kube-root-ca.crt').map((e) => e.object.metadata.name).sort(), ['one', 'three', 'two']);
    assert.equal(lines.at(-1).type, 'BOOKMARK');
    const none = await s.request('GET', `${CM}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1`);
    assert.equal(none.status, 200);
    assert.equal(none.text.trim(), '', 'no initial events, no end bookmark');
    const fromRv = await s.request('GET', `${CM}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=${created[1]}&timeoutSeconds=1`);
    const changes = fromRv.text.trim().split('\n').map((l) => JSON.parse(l).object.metadata.name).filter((n: string) => n !== 'kube-root-ca.crt');
    assert.deepEqual(changes, ['three', 'one'], 'the changes after resourceVersion (one was patched since)');
  });

  it('refuses the combinations upstream refuses', async () => {
    const cases: Array<[string, string]> = [
      ['watch=1&sendInitialEvents=true', 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'],
      ['watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=1', 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'],
      [
        'watch=1&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1',
        'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
      ],
      ['sendInitialEvents=true', 'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'],
      ['resourceVersionMatch=Newest&resourceVersion=1', 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""'],
    ];
    for (const [query, message] of cases) {
      const res = await s.request('GET', `${CM}?${query}`);
      assert.equal(res.status, 422, query);
      assert.equal(res.json.message, message, query);
    }
    const bad = await s.request('GET', `${CM}?watch=1&sendInitialEvents=yes&resourceVersionMatch=NotOlderThan`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json.message, 'strconv.ParseBool: parsing "yes": invalid syntax');
  });
});
