/** Wire conventions around the core: v1beta1 CRDs, the CRD /status subresource, bad input, negotiation, watch options. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CRONTAB_CRD, cronTab, startTestServer, watchEvents, type TestServer } from './harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const crontabs = '/apis/stable.example.com/v1/namespaces/default/crontabs';

describe('API conventions', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', CRDS, { body: CRONTAB_CRD })).status, 201);
  });
  after(() => s.stop());

  it('accepts a v1beta1 CRD with the deprecation warning and serves it', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.old.example.com' },
      spec: { group: 'old.example.com', version: 'v1', scope: 'Cluster', names: { plural: 'widgets', kind: 'Widget' } },
    };
    const res = await s.request('POST', '/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions', { body: crd });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.apiVersion, 'apiextensions.k8s.io/v1beta1');
    assert.equal(res.json.spec.version, 'v1');
    assert.equal(
      res.headers.warning,
      '299 - "apiextensions.k8s.io/v1beta1 CustomResourceDefinition is deprecated in v1.16+, unavailable in v1.22+; use apiextensions.k8s.io/v1 CustomResourceDefinition"',
    );
    const asV1 = await s.request('GET', `${CRDS}/widgets.old.example.com`);
    assert.equal(asV1.json.spec.versions[0].name, 'v1');
    assert.equal(asV1.json.spec.preserveUnknownFields, true);
    const w = await s.request('POST', '/apis/old.example.com/v1/widgets', { body: { apiVersion: 'old.example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ignored' } } });
    assert.equal(w.status, 201, w.text);
    assert.equal(w.json.metadata.namespace, undefined, 'a cluster-scoped create drops the namespace');
    assert.equal((await s.request('GET', '/apis/old.example.com/v1/namespaces/default/widgets')).status, 404);
  });

  it('serves the CRD /status subresource: status changes only', async () => {
    const path = `${CRDS}/crontabs.stable.example.com/status`;
    const cur = (await s.request('GET', path)).json;
    assert.equal(cur.kind, 'CustomResourceDefinition');
    const conditions = [...cur.status.conditions, { type: 'Custom', status: 'True', message: 'updated', lastTransitionTime: '2026-01-01T00:00:00Z' }];
    const put = await s.request('PUT', path, { body: { ...cur, spec: { ...cur.spec, group: 'changed.example.com' }, status: { ...cur.status, conditions } } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.spec.group, 'stable.example.com', 'spec changes are ignored on /status');
    assert.ok(put.json.status.conditions.some((c: any) => c.message === 'updated'));
    assert.equal(put.json.metadata.generation, cur.metadata.generation);
    const post = await s.request('POST', path, { body: cur });
    assert.equal(post.status, 405);
  });

  it('leaves empty Status details out, as upstream (every StatusDetails field is omitempty)', async () => {
    const missing = await s.request('GET', '/api/v1/namespaces/nope');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json.details, { name: 'nope', kind: 'namespaces' }, 'no empty group for the core group');
    const dry = await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=Sometimes', { body: { metadata: { name: 'x' } } });
    assert.equal(dry.status, 422);
    assert.deepEqual(Object.keys(dry.json.details), ['group', 'kind', 'causes'], 'no empty name');
    assert.equal(dry.json.details.group, 'meta.k8s.io');
  });

  it('refuses a merge patch that is not an object with upstream\'s decoding error', async () => {
    const res = await s.request('PATCH', '/api/v1/namespaces/default', { body: [1, 2], contentType: 'application/merge-patch+json' });
    assert.equal(res.status, 400);
    assert.equal(res.json.message, 'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}');
    const text = await s.request('PATCH', '/api/v1/namespaces/default', { body: '"x"', contentType: 'application/merge-patch+json' });
    assert.equal(text.json.message, 'error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}');
  });

  it('answers bad input with 4xx Statuses', async () => {
    const deep = '['.repeat(20000) + ']'.repeat(20000);
    const nested = await s.request('POST', crontabs, { body: deep });
    assert.equal(nested.status, 400);
    const text = await s.request('POST', crontabs, { body: 'name: x', contentType: 'text/plain' });
    assert.equal(text.status, 415);
    assert.equal(text.json.reason, 'UnsupportedMediaType');
    const accept = await s.request('GET', crontabs, { accept: 'application/xml' });
    assert.equal(accept.status, 406);
    assert.equal(accept.json.reason, 'NotAcceptable');
    const yamlBad = await s.request('POST', crontabs, { body: 'a: [', contentType: 'application/yaml' });
    assert.equal(yamlBad.status, 400);
    const badPatch = await s.request('PATCH', `${crontabs}/x`, { body: '{not json', contentType: 'application/merge-patch+json' });
    assert.equal(badPatch.status, 400);
    const badRV = await s.request('GET', `${crontabs}?resourceVersion=abc`);
    assert.equal(badRV.status, 400);
    const badDryRun = await s.request('POST', `${crontabs}?dryRun=Some`, { body: cronTab('d') });
    assert.equal(badDryRun.status, 422);
    assert.match(badDryRun.json.message, /^CreateOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value: \["Some"\]: supported values: "All"$/);
    assert.equal((await s.request('GET', '/nothing/here')).text, '404 page not found\n');
  });

  it('negotiates YAML for discovery and objects', async () => {
    const res = await s.request('GET', '/apis/stable.example.com/v1', { accept: 'application/yaml' });
    assert.equal(res.status, 200);
    assert.match(res.text, /^apiVersion: v1\n/m);
    assert.match(res.text, /^kind: APIResourceList\n/m);
    assert.match(res.text, /^groupVersion: stable\.example\.com\/v1\n/m);
    const api = await s.request('GET', '/api');
    assert.deepEqual(api.json.versions, ['v1']);
    const core = await s.request('GET', '/api/v1');
    const ns = core.json.resources.find((r: any) => r.name === 'namespaces');
    assert.deepEqual(ns, {
      name: 'namespaces',
      singularName: 'namespace',
      namespaced: false,
      kind: 'Namespace',
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['ns'],
    });
  });

  it('ends a watch after timeoutSeconds', async () => {
    const started = Date.now();
    const w = watchEvents(s.kapi, `${crontabs}?watch=true&timeoutSeconds=1`, 100, 5000);
    assert.equal(await w.status, 200);
    const created = await s.request('POST', crontabs, { body: cronTab('tick') });
    assert.equal(created.status, 201, created.text);
    const events = await w.events;
    assert.ok(Date.now() - started >= 900, 'stream closed by the server after ~1s');
    assert.deepEqual(events.map((e) => e.type), ['ADDED'], 'no bookmark for a watcher that did not ask');
  });

  it('sends bookmarks only to watchers that ask with allowWatchBookmarks', async (t) => {
    // The watch cache sends bookmarks on a one-minute timer (upstream's frequency). A server of
    // this test's own, with setInterval mocked while the resource is set up, lets the test run
    // that minute at once; everything else keeps real time.
    const own = await startTestServer();
    try {
      t.mock.timers.enable({ apis: ['setInterval'] });
      assert.equal((await own.request('POST', CRDS, { body: CRONTAB_CRD })).status, 201);
      const list = await own.request('GET', crontabs);
      assert.equal(list.status, 200, list.text);
      const rv = list.json.metadata.resourceVersion;
      const asking = watchEvents(own.kapi, `${crontabs}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`, 2, 5000);
      const plain = watchEvents(own.kapi, `${crontabs}?watch=true&resourceVersion=${rv}`, 1, 5000);
      assert.deepEqual(await Promise.all([asking.status, plain.status]), [200, 200]);
      // The same bookmark tick for both; then one write, which each stream carries after anything sent before it.
      t.mock.timers.tick(60_000);
      const created = await own.request('POST', crontabs, { body: cronTab('after-bookmark') });
      assert.equal(created.status, 201, created.text);
      const [withBookmarks, without] = await Promise.all([asking.events, plain.events]);
      assert.deepEqual(withBookmarks.map((e) => e.type), ['BOOKMARK', 'ADDED'], 'allowWatchBookmarks=true: a bookmark, then the event');
      assert.deepEqual(without.map((e) => e.type), ['ADDED'], 'no allowWatchBookmarks: no bookmark');
      const bookmark = withBookmarks[0].object;
      assert.equal(bookmark.kind, 'CronTab');
      assert.equal(bookmark.apiVersion, 'stable.example.com/v1');
      assert.match(bookmark.metadata.resourceVersion, /^[0-9]+$/);
      const bookmarkRV = Number(bookmark.metadata.resourceVersion);
      assert.ok(bookmarkRV >= Number(rv) && bookmarkRV < Number(created.json.metadata.resourceVersion), `bookmark at ${bookmarkRV}: from ${rv}, before ${created.json.metadata.resourceVersion}`);
      assert.equal(without[0].object.metadata.name, 'after-bookmark');
    } finally {
      await own.stop();
      t.mock.timers.reset();
    }
  });
});

describe('metrics', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('counts requests under apiserver metric names', async () => {
    // The in-process controllers are clients too (the namespace controller lists and watches namespaces): count what nobody else asks.
    await s.request('GET', '/api/v1/configmaps');
    await s.request('GET', '/api/v1/namespaces/nope');
    const res = await s.request('GET', '/metrics');
    assert.equal(res.status, 200);
    assert.match(res.text, /apiserver_request_total\{verb="LIST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="cluster",component="apiserver",code="200"\} 1/);
    assert.match(res.text, /apiserver_request_total\{verb="GET",[^}]*resource="namespaces"[^}]*scope="resource"[^}]*code="404"\} 1/);
    assert.match(res.text, /apiserver_request_duration_seconds_bucket\{le="0\.005",verb="LIST"/);
    assert.match(res.text, /apiserver_storage_objects\{resource="namespaces"\} 4/);
    assert.match(res.text, /process_resident_memory_bytes/);
    assert.equal((await s.request('GET', '/metrics', { token: null })).status, 401);
  });
});
