/** Wire conventions around the core: v1beta1 CRDs, the CRD /status subresource, bad input, negotiation, watch options. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CRONTAB_CRD, cronTab, startTestServer, until, watchEvents, type TestServer } from './harness.js';

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

  // handlers/rest.go transformDecodeError: without a decoded kind, the error and the body's first 30 bytes
  // (an object's as text, anything else in hex); SimpleMetaFactory.Interpret's JSON error; go-yaml's texts.
  it('answers undecodable bodies with upstream\'s decoding errors', async () => {
    const cases: [string, string, string | undefined, string][] = [
      [crontabs, '{"a": ', undefined, `the object provided is unrecognized (must be of type CronTab): couldn't get version/kind; json parse error: unexpected end of JSON input ({"a": )`],
      [crontabs, 'a: [1, 2\n', 'application/yaml', `the object provided is unrecognized (must be of type CronTab): yaml: line 1: did not find expected ',' or ']' (613a205b312c20320a)`],
      [crontabs, 'x'.repeat(40), undefined, `the object provided is unrecognized (must be of type CronTab): couldn't get version/kind; json parse error: invalid character 'x' looking for beginning of value (${'78'.repeat(30)} ...)`],
      [crontabs, '[1,2]', undefined, `the object provided is unrecognized (must be of type CronTab): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (5b312c325d)`],
      ['/api/v1/namespaces/default/configmaps', '{"kind": 5, "apiVersion": "v1", "metadata": {"name": "cm"}}', undefined, `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string ({"kind": 5, "apiVersion": "v1" ...)`],
      ['/api/v1/namespaces/default/configmaps', '', undefined, `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)`],
      // The unstructured decoder of a custom resource needs its kind; the decoder named one (the default), so the other form.
      [crontabs, '{"apiVersion": "stable.example.com/v1", "metadata": {"name": "k"}}', undefined, `CronTab in version "v1" cannot be handled as a CronTab: Object 'Kind' is missing in '{"apiVersion": "stable.example.com/v1", "metadata": {"name": "k"}}'`],
      [crontabs, 'metadata: {name: k}\napiVersion: stable.example.com/v1\nx: "<&>"\n', 'application/yaml', `CronTab in version "v1" cannot be handled as a CronTab: Object 'Kind' is missing in '{"apiVersion":"stable.example.com/v1","metadata":{"name":"k"},"x":"\\u003c\\u0026\\u003e"}'`],
    ];
    for (const [path, body, contentType, message] of cases) {
      const res = await s.request('POST', path, { body, contentType });
      assert.equal(res.status, 400, body);
      assert.equal(res.json.reason, 'BadRequest');
      assert.equal(res.json.message, message);
    }
  });

  // patch.go: validateAndTranscodePatch ("invalid JSON patch"); the apply patcher's yaml.ToJSON ("error encoding
  // patch", passing a body that starts with '{' on) and sigs.k8s.io/yaml.Unmarshal ("error converting YAML to JSON").
  it('answers malformed patches with upstream\'s texts', async () => {
    await s.request('POST', crontabs, { body: cronTab('patched') });
    const path = `${crontabs}/patched`;
    for (const contentType of ['application/merge-patch+json', 'application/json-patch+json']) {
      const res = await s.request('PATCH', path, { body: '{"spec": ', contentType });
      assert.equal(res.status, 400);
      assert.equal(res.json.message, 'invalid JSON patch');
    }
    const smp = await s.request('PATCH', '/api/v1/namespaces/default', { body: '{', contentType: 'application/strategic-merge-patch+json' });
    assert.equal(smp.json.message, 'invalid JSON patch');
    const apply = (body: string) => s.request('PATCH', `${path}?fieldManager=m`, { body, contentType: 'application/apply-patch+yaml' });
    const json = await apply('{"spec": {"a": 1\n');
    assert.equal(json.status, 400);
    assert.equal(json.json.message, "error decoding patch: error converting YAML to JSON: yaml: line 1: did not find expected ',' or '}'");
    const yaml = await apply('spec:\n  a: b: c\n');
    assert.equal(yaml.status, 400);
    assert.equal(yaml.json.message, 'error encoding patch: yaml: line 2: mapping values are not allowed in this context');
    await s.request('DELETE', path);
  });

  // A custom resource's strategy checks the patched object's type (customResourceValidator.ValidateTypeMeta, 422);
  // a built-in's patched JSON is decoded into a registered kind (jsonPatcher: 422 on the field "patch").
  it('refuses a patch that changes apiVersion or kind as upstream', async () => {
    await s.request('POST', crontabs, { body: cronTab('typed') });
    const merge = await s.request('PATCH', `${crontabs}/typed`, { body: { apiVersion: 'stable.example.com/v2' }, contentType: 'application/merge-patch+json' });
    assert.equal(merge.status, 422, merge.text);
    assert.equal(merge.json.message, 'CronTab.stable.example.com "typed" is invalid: apiVersion: Invalid value: "stable.example.com/v2": must be stable.example.com/v1');
    assert.deepEqual(merge.json.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "stable.example.com/v2": must be stable.example.com/v1', field: 'apiVersion' }]);
    const ops = [{ op: 'replace', path: '/kind', value: 'Other' }];
    const json = await s.request('PATCH', `${crontabs}/typed`, { body: ops, contentType: 'application/json-patch+json' });
    assert.equal(json.status, 422);
    assert.equal(json.json.message, 'CronTab.stable.example.com "typed" is invalid: kind: Invalid value: "Other": must be CronTab');
    const ns = await s.request('PATCH', '/api/v1/namespaces/default', { body: { apiVersion: 'v2' }, contentType: 'application/merge-patch+json' });
    assert.equal(ns.status, 422);
    assert.match(ns.json.message, /^ "" is invalid: patch: Invalid value: "\{\\"apiVersion\\":\\"v2\\",\\"kind\\":\\"Namespace\\",\\"metadata\\":\{.*\}": no kind "Namespace" is registered for version "v2" in scheme "k8s.io\/kubernetes\/pkg\/api\/legacyscheme\/scheme.go:30"$/);
    assert.equal(ns.json.details.causes[0].field, 'patch');
    // A strategic merge patch is read into the endpoint's type: apiVersion and kind in it are ignored.
    const smp = await s.request('PATCH', '/api/v1/namespaces/default', { body: { apiVersion: 'v2', metadata: { labels: { a: 'b' } } }, contentType: 'application/strategic-merge-patch+json' });
    assert.equal(smp.status, 200, smp.text);
    assert.equal(smp.json.apiVersion, 'v1');
    assert.equal((await s.request('GET', `${crontabs}/typed`)).json.apiVersion, 'stable.example.com/v1');
    await s.request('DELETE', `${crontabs}/typed`);
  });

  // Go's typed lists encode their items' TypeMeta empty (kubectl fills it in); unstructured lists keep each item's.
  it('lists built-in items without apiVersion and kind, custom resources with them', async () => {
    await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'listed' }, data: { a: 'b' } } });
    // A body with kind and apiVersion last is written in Go's order.
    await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'listed-2' }, apiVersion: 'v1', kind: 'ConfigMap' } });
    for (const accept of ['application/json', 'application/yaml', 'application/json;pretty=1']) {
      const cms = await s.request('GET', '/api/v1/namespaces/default/configmaps', { accept });
      assert.equal(cms.status, 200);
      const list = accept === 'application/yaml' ? null : cms.json;
      if (list) {
        assert.equal(list.kind, 'ConfigMapList');
        const item = list.items.find((o: any) => o.metadata.name === 'listed');
        assert.deepEqual(Object.keys(item), ['metadata', 'data'], accept);
        assert.deepEqual(Object.keys(list.items.find((o: any) => o.metadata.name === 'listed-2')), ['metadata']);
      } else {
        assert.doesNotMatch(cms.text, /^- apiVersion|^  kind: ConfigMap$/m);
      }
    }
    const crds = (await s.request('GET', CRDS)).json;
    assert.equal(crds.items[0].kind, undefined);
    assert.equal(crds.items[0].apiVersion, undefined);
    const one = (await s.request('GET', '/api/v1/namespaces/default/configmaps/listed-2')).json;
    assert.deepEqual(Object.keys(one), ['kind', 'apiVersion', 'metadata'], 'a get keeps them, in Go order');
    await s.request('POST', crontabs, { body: cronTab('listed') });
    const cts = (await s.request('GET', crontabs)).json;
    assert.equal(cts.items[0].kind, 'CronTab');
    assert.equal(cts.items[0].apiVersion, 'stable.example.com/v1');
    await s.request('DELETE', `${crontabs}/listed`);
  });

  // registry.Store.DeleteCollection answers with the list it made, not with what each delete returned.
  it('answers a deletecollection with the objects as they were before deletion', async () => {
    const crd = (name: string) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${name}s.dc.example.com`, labels: { dc: 'yes' } },
      spec: { group: 'dc.example.com', scope: 'Namespaced', names: { plural: `${name}s`, kind: name[0].toUpperCase() + name.slice(1) }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
    });
    for (const n of ['alpha', 'beta']) assert.equal((await s.request('POST', CRDS, { body: crd(n) })).status, 201);
    await s.request('POST', '/apis/dc.example.com/v1/namespaces/default/alphas', { body: { apiVersion: 'dc.example.com/v1', kind: 'Alpha', metadata: { name: 'a' } } });
    const res = await s.request('DELETE', `${CRDS}?labelSelector=dc%3Dyes`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.kind, 'CustomResourceDefinitionList');
    assert.equal(res.json.items.length, 2);
    for (const item of res.json.items) {
      assert.equal(item.metadata.deletionTimestamp, undefined);
      assert.equal(item.metadata.finalizers, undefined);
      assert.ok(!item.status.conditions.some((c: any) => c.type === 'Terminating'));
    }
    await until('the CRDs are gone', async () => (await s.request('GET', `${CRDS}?labelSelector=dc%3Dyes`)).json.items.length === 0);
  });

  // ValidateCustomResourceDefinition runs ValidateObjectMeta with the CRD's own name function (DNS subdomain
  // and plural.group), in place of the generic name check: each name error is reported once.
  it('reports a CRD name error once', async () => {
    const bad = { ...CRONTAB_CRD, metadata: { name: 'Crontabs.stable.example.com' } };
    const res = await s.request('POST', CRDS, { body: bad });
    assert.equal(res.status, 422);
    assert.deepEqual(
      res.json.details.causes.map((c: any) => [c.field, c.message.replace(/: a lowercase RFC 1123.*/, ': <dns>')]),
      [
        ['metadata.name', 'Invalid value: "Crontabs.stable.example.com": <dns>'],
        ['metadata.name', 'Invalid value: "Crontabs.stable.example.com": must be spec.names.plural+"."+spec.group'],
      ],
    );
    // The generic checks besides the name still run.
    const label = await s.request('POST', CRDS, { body: { ...CRONTAB_CRD, metadata: { name: 'x.stable.example.com', labels: { 'a b': 'c' } } } });
    assert.equal(label.status, 422);
    assert.ok(label.json.details.causes.some((c: any) => c.field === 'metadata.labels'), label.text);
  });

  // ValidateUpdateCustomResourceDefinitionStatus checks metadata and accepted names only, not storedVersions.
  it('accepts a CRD /status update that drops the storage version from storedVersions', async () => {
    const crd = { ...CRONTAB_CRD, metadata: { name: 'gadgets.sv.example.com' }, spec: { ...CRONTAB_CRD.spec, group: 'sv.example.com', names: { plural: 'gadgets', kind: 'Gadget' } } };
    assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
    const cur = (await s.request('GET', `${CRDS}/gadgets.sv.example.com`)).json;
    assert.deepEqual(cur.status.storedVersions, ['v1']);
    const put = await s.request('PUT', `${CRDS}/gadgets.sv.example.com/status`, { body: { ...cur, status: { ...cur.status, storedVersions: ['v0'] } } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json.status.storedVersions, ['v0']);
    // The main endpoint still checks them.
    const main = await s.request('PUT', `${CRDS}/gadgets.sv.example.com`, { body: put.json });
    assert.equal(main.status, 422);
    assert.match(main.json.message, /status\.storedVersions/);
    await s.request('DELETE', `${CRDS}/gadgets.sv.example.com`);
  });

  // RequestInfoFactory leaves the verb of another method empty: the CRD handler's MethodNotSupported names
  // none; a built-in's go-restful routes have no such method (serviceErrorHandler's generic 405).
  it('answers OPTIONS on an object with upstream\'s 405s', async () => {
    const cr = await s.request('OPTIONS', `${crontabs}/any`);
    assert.equal(cr.status, 405);
    assert.equal(cr.json.reason, 'MethodNotAllowed');
    assert.equal(cr.json.message, ' is not supported on resources of kind "crontabs.stable.example.com"');
    assert.deepEqual(cr.json.details, { group: 'stable.example.com', kind: 'crontabs' });
    const cm = await s.request('OPTIONS', '/api/v1/namespaces/default/configmaps/any');
    assert.equal(cm.status, 405);
    assert.equal(cm.json.message, 'the server does not allow this method on the requested resource');
    assert.deepEqual(cm.json.details, {});
  });

  // The cacher serves resourceVersion=0 and ignores its limit (computeListLimit); other lists page.
  it('ignores limit on a list at resourceVersion 0', async () => {
    for (const n of ['p1', 'p2', 'p3']) await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: n, labels: { paged: 'yes' } } } });
    const base = '/api/v1/namespaces/default/configmaps?labelSelector=paged%3Dyes&limit=2';
    const cached = (await s.request('GET', `${base}&resourceVersion=0`)).json;
    assert.equal(cached.items.length, 3);
    assert.equal(cached.metadata.continue, undefined);
    assert.equal(cached.metadata.remainingItemCount, undefined);
    const paged = (await s.request('GET', base)).json;
    assert.equal(paged.items.length, 2);
    assert.ok(paged.metadata.continue);
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
    // APIObjectVersioner.ParseResourceVersion's error; upstream's watch answers it with a 500, kapi with the 400.
    const parseError = 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax';
    for (const query of ['resourceVersion=abc', 'watch=1&resourceVersion=abc']) {
      const badRV = await s.request('GET', `${crontabs}?${query}`);
      assert.equal(badRV.status, 400, query);
      assert.equal(badRV.json.message, parseError);
    }
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
    assert.equal((await s.request('GET', '/metrics', { token: null })).status, 403, 'system:anonymous may not read metrics');
  });
});
