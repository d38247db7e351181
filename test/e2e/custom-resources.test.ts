/** Custom resources over HTTP: the catalog's wire behaviors (sections 1, 6-10, 22, 25-28). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CRONTAB_CRD, cronTab, startTestServer, watchEvents, type TestServer } from './harness.js';

const base = '/apis/stable.example.com/v1';
const ns = (n: string) => `${base}/namespaces/${n}/crontabs`;

describe('custom resources over HTTP', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    // Fields beyond the schema are kept in this suite (pruning has its own tests).
    const crd = structuredClone(CRONTAB_CRD) as any;
    crd.spec.versions[0].schema.openAPIV3Schema['x-kubernetes-preserve-unknown-fields'] = true;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-preserve-unknown-fields'] = true;
    const res = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
    assert.equal(res.status, 201, res.text);
    await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } } });
  });
  after(() => s.stop());

  it('creates with server-set metadata, gets the same object, lists with listKind', async () => {
    const res = await s.request('POST', ns('default'), { body: cronTab('a') });
    assert.equal(res.status, 201, res.text);
    const obj = res.json;
    assert.equal(obj.apiVersion, 'stable.example.com/v1');
    assert.equal(obj.kind, 'CronTab');
    assert.match(obj.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.equal(obj.metadata.namespace, 'default');
    assert.equal(obj.metadata.generation, 1);
    assert.match(obj.metadata.resourceVersion, /^[0-9]+$/);
    assert.match(obj.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(res.headers['cache-control'], 'no-cache, private');
    const got = await s.request('GET', `${ns('default')}/a`);
    assert.deepEqual(got.json, obj);
    const list = await s.request('GET', ns('default'));
    assert.equal(list.json.kind, 'CronTabList');
    assert.equal(list.json.apiVersion, 'stable.example.com/v1');
    assert.equal(list.json.metadata.continue, '');
    assert.ok(Number(list.json.metadata.resourceVersion) >= Number(obj.metadata.resourceVersion));
    assert.deepEqual(list.json.items, [obj]);
  });

  it('keeps 64-bit integers exact through create, get and merge patch', async () => {
    const body = cronTab('bigint');
    (body as any).num = { num1: 9223372036854775807n, num2: 1000000 };
    const text = JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? `@@${v}@@` : v)).replace(/"@@(\d+)@@"/g, '$1');
    const res = await s.request('POST', ns('default'), { body: text });
    assert.equal(res.status, 201, res.text);
    assert.match(res.text, /"num1":9223372036854775807/);
    const patched = await s.request('PATCH', `${ns('default')}/bigint`, { body: { num: { num2: 999 } }, contentType: 'application/merge-patch+json' });
    assert.match(patched.text, /"num1":9223372036854775807/);
    assert.match(patched.text, /"num2":999/);
  });

  it('answers errors as metav1.Status with upstream texts', async () => {
    const missing = await s.request('GET', `${ns('default')}/nope`);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'crontabs.stable.example.com "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', group: 'stable.example.com', kind: 'crontabs' },
      code: 404,
    });
    const dup = await s.request('POST', ns('default'), { body: cronTab('a') });
    assert.equal(dup.status, 409);
    assert.equal(dup.json.reason, 'AlreadyExists');
    assert.equal(dup.json.message, 'crontabs.stable.example.com "a" already exists');
    const noKind = await s.request('POST', ns('default'), { body: {} });
    assert.equal(noKind.status, 400);
    // json.Serializer.Decode returns the default kind with the unstructured decoder's error: transformDecodeError's first form.
    assert.equal(noKind.json.message, `CronTab in version "v1" cannot be handled as a CronTab: Object 'Kind' is missing in '{}'`);
    const badVersion = await s.request('POST', ns('default'), { body: { ...cronTab('x'), apiVersion: 'stable.example.com/v2' } });
    assert.equal(badVersion.status, 400);
    assert.equal(badVersion.json.message, 'the API version in the data (stable.example.com/v2) does not match the expected API version (stable.example.com/v1)');
    const badKind = await s.request('POST', ns('default'), { body: { ...cronTab('x'), kind: 'SomethingElse' } });
    assert.equal(badKind.status, 422);
    assert.equal(badKind.json.message, 'SomethingElse.stable.example.com "x" is invalid: kind: Invalid value: "SomethingElse": must be CronTab');
    const noName = await s.request('POST', ns('default'), { body: { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: {} } });
    assert.equal(noName.status, 422);
    assert.equal(noName.json.message, 'CronTab.stable.example.com "" is invalid: metadata.name: Required value: name or generateName is required');
    const badName = await s.request('POST', ns('default'), { body: cronTab('Foo') });
    assert.equal(badName.status, 422);
    assert.match(badName.json.message, /metadata\.name: Invalid value: "Foo": a lowercase RFC 1123 subdomain must consist of/);
    const malformed = await s.request('POST', ns('default'), { body: '{"apiVersion":' });
    assert.equal(malformed.status, 400);
    const typed = await s.request('POST', ns('default'), { body: { ...cronTab('typed'), metadata: { name: 'typed', labels: { foo: 42 } } } });
    assert.equal(typed.status, 400);
    assert.match(typed.json.message, /cannot be handled/);
    const rvOnCreate = await s.request('POST', ns('default'), { body: { ...cronTab('rv'), metadata: { name: 'rv', resourceVersion: '5' } } });
    assert.equal(rvOnCreate.status, 400);
    assert.equal(rvOnCreate.json.message, 'resourceVersion should not be set on objects to be created');
  });

  it('refuses a namespace mismatch and unknown namespaces', async () => {
    const mismatch = await s.request('POST', ns('default'), { body: cronTab('m', 'other') });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.json.message, 'the namespace of the provided object does not match the namespace sent on the request');
    const noNs = await s.request('POST', ns('ghost'), { body: cronTab('g', 'ghost') });
    assert.equal(noNs.status, 404);
    assert.equal(noNs.json.message, 'namespaces "ghost" not found');
  });

  it('routes by scope: cluster path lists across namespaces, other verbs there are plain 404s', async () => {
    await s.request('POST', ns('other'), { body: cronTab('in-other', 'other') });
    const all = await s.request('GET', `${base}/crontabs`);
    assert.equal(all.status, 200);
    const names = all.json.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`);
    assert.ok(names.includes('other/in-other') && names.includes('default/a'));
    const onlyOther = await s.request('GET', ns('other'));
    assert.deepEqual(onlyOther.json.items.map((i: any) => i.metadata.name), ['in-other']);
    const post = await s.request('POST', `${base}/crontabs`, { body: cronTab('x', '') });
    assert.equal(post.status, 404);
    assert.equal(post.text, '404 page not found\n');
    assert.equal(post.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal((await s.request('GET', '/apis/stable.example.com/v9/crontabs')).status, 404);
    const sub = await s.request('GET', `${ns('default')}/a/foo`);
    assert.equal(sub.status, 404);
    assert.equal(sub.json.message, 'crontabs.stable.example.com "a" not found');
  });

  it('updates with compare-and-swap: stale 409, missing resourceVersion 422, name mismatch 400, no-op keeps the version', async () => {
    const cur = (await s.request('GET', `${ns('default')}/a`)).json;
    const next = { ...cur, spec: { ...cur.spec, image: 'v2' } };
    const ok = await s.request('PUT', `${ns('default')}/a`, { body: next });
    assert.equal(ok.status, 200, ok.text);
    assert.notEqual(ok.json.metadata.resourceVersion, cur.metadata.resourceVersion);
    assert.equal(ok.json.metadata.generation, 2, 'a spec change bumps generation');
    const stale = await s.request('PUT', `${ns('default')}/a`, { body: next });
    assert.equal(stale.status, 409);
    assert.equal(stale.json.message, 'Operation cannot be fulfilled on crontabs.stable.example.com "a": the object has been modified; please apply your changes to the latest version and try again');
    const { resourceVersion: _rv, ...metaNoRV } = ok.json.metadata;
    const noRV = await s.request('PUT', `${ns('default')}/a`, { body: { ...ok.json, metadata: metaNoRV } });
    assert.equal(noRV.status, 422);
    assert.equal(noRV.json.message, 'crontabs.stable.example.com "a" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update');
    const rename = await s.request('PUT', `${ns('default')}/a`, { body: { ...ok.json, metadata: { ...ok.json.metadata, name: 'b' } } });
    assert.equal(rename.status, 400);
    assert.equal(rename.json.message, 'the name of the object (b) does not match the name on the URL (a)');
    // As UpdateResource's checkName: an object without a name (or a patch that removes it) is undeterminable.
    const { name: _name, ...metaNoName } = ok.json.metadata;
    const nameless = await s.request('PUT', `${ns('default')}/a`, { body: { ...ok.json, metadata: metaNoName } });
    assert.equal(nameless.status, 400);
    assert.equal(nameless.json.message, 'the name of the object (a based on URL) was undeterminable: name must be provided');
    const unnamed = await s.request('PATCH', `${ns('default')}/a`, { body: [{ op: 'remove', path: '/metadata/name' }], contentType: 'application/json-patch+json' });
    assert.equal(unnamed.status, 400);
    assert.equal(unnamed.json.message, 'the name of the object (a based on URL) was undeterminable: name must be provided');
    const missing = await s.request('PUT', `${ns('default')}/zzz`, { body: { ...ok.json, metadata: { ...ok.json.metadata, name: 'zzz' } } });
    assert.equal(missing.status, 404);
    const noop = await s.request('PATCH', `${ns('default')}/a`, { body: {}, contentType: 'application/merge-patch+json' });
    assert.equal(noop.json.metadata.resourceVersion, ok.json.metadata.resourceVersion);
    const labels = await s.request('PATCH', `${ns('default')}/a`, { body: { metadata: { labels: { app: 'web' } } }, contentType: 'application/merge-patch+json' });
    assert.equal(labels.json.metadata.generation, 2, 'metadata changes leave generation alone');
  });

  it('patches: JSON patch with test, merge patch, 415 for strategic merge patch, 422 for a failed test', async () => {
    const jp = await s.request('PATCH', `${ns('default')}/a`, {
      body: [{ op: 'test', path: '/spec/image', value: 'v2' }, { op: 'add', path: '/dummy', value: 'test' }],
      contentType: 'application/json-patch+json',
    });
    assert.equal(jp.status, 200, jp.text);
    assert.equal(jp.json.dummy, 'test');
    const failed = await s.request('PATCH', `${ns('default')}/a`, { body: [{ op: 'test', path: '/spec/image', value: 'nope' }], contentType: 'application/json-patch+json' });
    assert.equal(failed.status, 422);
    assert.deepEqual(failed.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server rejected our request due to an error in our request',
      reason: 'Invalid',
      details: {},
      code: 422,
    });
    // A JSON patch may write inside managedFields' fieldsV1 sets (which the server shares between objects).
    const live = (await s.request('GET', `${ns('default')}/a`)).json;
    const at = live.metadata.managedFields.findIndex((e: any) => e.fieldsV1?.['f:spec']);
    assert.ok(at >= 0, JSON.stringify(live.metadata.managedFields));
    const intoSet = await s.request('PATCH', `${ns('default')}/a`, {
      body: [{ op: 'add', path: `/metadata/managedFields/${at}/fieldsV1/f:spec/f:kapiTest`, value: {} }],
      contentType: 'application/json-patch+json',
    });
    assert.equal(intoSet.status, 200, intoSet.text);
    assert.ok(intoSet.json.metadata.managedFields.some((e: any) => e.fieldsV1?.['f:spec']?.['f:kapiTest']), JSON.stringify(intoSet.json.metadata.managedFields));
    const other = (await s.request('GET', `${ns('default')}/a`)).json;
    assert.deepEqual(other, intoSet.json);
    const smp = await s.request('PATCH', `${ns('default')}/a`, { body: { spec: {} }, contentType: 'application/strategic-merge-patch+json' });
    assert.equal(smp.status, 415);
    assert.equal(smp.json.reason, 'UnsupportedMediaType');
    assert.equal(smp.json.message, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
    const merge = await s.request('PATCH', `${ns('default')}/a`, { body: { dummy: null }, contentType: 'application/merge-patch+json' });
    assert.equal(merge.json.dummy, undefined);
    const absent = await s.request('PATCH', `${ns('default')}/absent`, { body: {}, contentType: 'application/merge-patch+json' });
    assert.equal(absent.status, 404);
  });

  it('selects by labels and fields, and refuses unsupported field labels', async () => {
    await s.request('POST', ns('default'), { body: { ...cronTab('sel-1'), metadata: { name: 'sel-1', labels: { tier: 'front', env: 'prod' } } } });
    await s.request('POST', ns('default'), { body: { ...cronTab('sel-2'), metadata: { name: 'sel-2', labels: { tier: 'back' } } } });
    const q = async (query: string) => (await s.request('GET', `${ns('default')}?${query}`)).json.items.map((i: any) => i.metadata.name);
    assert.deepEqual(await q('labelSelector=tier%3Dfront'), ['sel-1']);
    assert.deepEqual(await q('labelSelector=tier%20in%20(front,back),!env'), ['sel-2']);
    assert.deepEqual(await q('fieldSelector=metadata.name%3Dsel-2'), ['sel-2']);
    const bad = await s.request('GET', `${ns('default')}?fieldSelector=spec.color%3Dblue`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json.message, 'field label not supported: spec.color');
    const malformed = await s.request('GET', `${ns('default')}?labelSelector=a%20in%20x`);
    assert.equal(malformed.status, 400);
  });

  it('paginates with limit and continue at one snapshot, and checks list options', async () => {
    for (let i = 0; i < 5; i++) await s.request('POST', ns('other'), { body: cronTab(`page-${i}`, 'other') });
    const first = await s.request('GET', `${ns('other')}?limit=2`);
    assert.equal(first.json.items.length, 2);
    assert.ok(first.json.metadata.continue);
    assert.equal(first.json.metadata.remainingItemCount, 4);
    await s.request('POST', ns('other'), { body: cronTab('page-9', 'other') });
    const seen = first.json.items.map((i: any) => i.metadata.name);
    let cont = first.json.metadata.continue;
    while (cont) {
      const page = await s.request('GET', `${ns('other')}?limit=2&continue=${encodeURIComponent(cont)}`);
      assert.equal(page.json.metadata.resourceVersion, first.json.metadata.resourceVersion);
      seen.push(...page.json.items.map((i: any) => i.metadata.name));
      cont = page.json.metadata.continue;
    }
    assert.deepEqual(seen, ['in-other', 'page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
    const withRV = await s.request('GET', `${ns('other')}?limit=2&continue=${encodeURIComponent(first.json.metadata.continue)}&resourceVersion=5`);
    assert.equal(withRV.status, 400);
    assert.equal(withRV.json.message, 'specifying resource version is not allowed when using continue');
    const garbage = await s.request('GET', `${ns('other')}?continue=garbage`);
    assert.equal(garbage.status, 400);
    assert.match(garbage.json.message, /^invalid continue token: /);
    const matchOnly = await s.request('GET', `${ns('other')}?resourceVersionMatch=NotOlderThan`);
    assert.equal(matchOnly.status, 422);
    assert.equal(matchOnly.json.message, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
  });

  it('watches: ADDED/MODIFIED/DELETED from a list revision, field-selected, and 410 as an ERROR event', async () => {
    const list = await s.request('GET', ns('default'));
    const rv = list.json.metadata.resourceVersion;
    const w = watchEvents(s.kapi, `${ns('default')}?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3Dwatched`, 3);
    assert.equal(await w.status, 200);
    await s.request('POST', ns('default'), { body: cronTab('unwatched') });
    const created = await s.request('POST', ns('default'), { body: cronTab('watched') });
    await s.request('PATCH', `${ns('default')}/watched`, { body: { spec: { image: 'x' } }, contentType: 'application/merge-patch+json' });
    await s.request('DELETE', `${ns('default')}/watched`);
    const events = await w.events;
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
    assert.ok(events.every((e) => e.object.metadata.uid === created.json.metadata.uid));
    assert.equal(events[0].object.apiVersion, 'stable.example.com/v1');
    const legacy = watchEvents(s.kapi, `${base}/watch/namespaces/default/crontabs/a`, 1);
    const [initial] = await legacy.events;
    assert.equal(initial.type, 'ADDED');
    assert.equal(initial.object.metadata.name, 'a');
    await s.kapi.storage.compact(await s.kapi.storage.currentRevision());
    const expired = watchEvents(s.kapi, `${ns('default')}?watch=true&resourceVersion=1`, 1);
    const [err] = await expired.events;
    assert.equal(err.type, 'ERROR');
    assert.equal(err.object.code, 410);
    assert.equal(err.object.reason, 'Expired');
    assert.match(err.object.message, /^too old resource version: 1 \(\d+\)$/);
  });

  it('speaks YAML in and out, refuses YAML watches with 406', async () => {
    const yamlBody = 'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: yaml-one\nspec:\n  numVal: 1\n  boolVal: true\n  stringVal: "1"\n';
    const res = await s.request('POST', ns('default'), { body: yamlBody, contentType: 'application/yaml', accept: 'application/yaml' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers['content-type'], 'application/yaml');
    assert.match(res.text, /numVal: 1\n/);
    assert.match(res.text, /boolVal: true\n/);
    assert.match(res.text, /stringVal: "1"\n/);
    const missing = await s.request('GET', `${ns('default')}/nope`, { accept: 'application/yaml' });
    assert.equal(missing.status, 404);
    assert.match(missing.text, /kind: Status\n/);
    assert.match(missing.text, /reason: NotFound\n/);
    const watch = await s.request('GET', `${ns('default')}?watch=true`, { accept: 'application/yaml' });
    assert.equal(watch.status, 406);
  });

  it('deletes: Status with the plural as kind, 404 after, preconditions, finalizers keep the object', async () => {
    const obj = (await s.request('POST', ns('default'), { body: cronTab('del') })).json;
    const wrongUid = await s.request('DELETE', `${ns('default')}/del`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'other' } } });
    assert.equal(wrongUid.status, 409);
    assert.equal(
      wrongUid.json.message,
      `Operation cannot be fulfilled on CronTab.stable.example.com "del": the UID in the precondition (other) does not match the UID in record (${obj.metadata.uid}). The object might have been deleted and then recreated`,
    );
    const del = await s.request('DELETE', `${ns('default')}/del`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'del', group: 'stable.example.com', kind: 'crontabs', uid: obj.metadata.uid },
    });
    assert.equal((await s.request('GET', `${ns('default')}/del`)).status, 404);
    assert.equal((await s.request('DELETE', `${ns('default')}/del`)).status, 404);

    await s.request('POST', ns('default'), { body: { ...cronTab('fin'), metadata: { name: 'fin', finalizers: ['example.com/hold'] } } });
    const marked = await s.request('DELETE', `${ns('default')}/fin`);
    assert.equal(marked.status, 200);
    assert.equal(marked.json.kind, 'CronTab');
    assert.ok(marked.json.metadata.deletionTimestamp);
    assert.equal(marked.json.metadata.deletionGracePeriodSeconds, 0);
    assert.equal(marked.json.metadata.generation, 2);
    const released = await s.request('PATCH', `${ns('default')}/fin`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    assert.equal(released.status, 200, released.text);
    assert.equal((await s.request('GET', `${ns('default')}/fin`)).status, 404);
  });

  it('deletes a collection by label and answers with the deleted items', async () => {
    const res = await s.request('DELETE', `${ns('default')}?labelSelector=tier`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.kind, 'CronTabList');
    assert.deepEqual(res.json.items.map((i: any) => i.metadata.name).sort(), ['sel-1', 'sel-2']);
    const left = (await s.request('GET', `${ns('default')}?labelSelector=tier`)).json.items;
    assert.deepEqual(left, []);
  });

  it('generates names and dry-runs without storing', async () => {
    const gen = await s.request('POST', ns('default'), { body: { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { generateName: 'gen-' } } });
    assert.equal(gen.status, 201);
    assert.match(gen.json.metadata.name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.equal(gen.json.metadata.generateName, 'gen-');
    const dry = await s.request('POST', `${ns('default')}?dryRun=All`, { body: cronTab('dry') });
    assert.equal(dry.status, 201);
    assert.ok(dry.json.metadata.uid);
    assert.equal((await s.request('GET', `${ns('default')}/dry`)).status, 404);
  });

  it('asks for authentication', async () => {
    // No credentials: system:anonymous (--anonymous-auth, on by default), whom RBAC gives nothing here.
    const res = await s.request('GET', ns('default'), { token: null });
    assert.equal(res.status, 403);
    assert.match(res.json.message, /User "system:anonymous" cannot list resource "crontabs" in API group "stable\.example\.com"/);
    const wrong = await s.request('GET', ns('default'), { token: 'wrong' });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json.reason, 'Unauthorized');
    const health = await s.request('GET', '/readyz?verbose', { token: null });
    assert.equal(health.status, 200);
    assert.match(health.text, /readyz check passed\n$/);
  });

  it('refuses bodies over 3 MiB with 413', async () => {
    const big = { ...cronTab('big'), data: 'x'.repeat(3 * 1024 * 1024) };
    const res = await s.request('POST', ns('default'), { body: big });
    assert.equal(res.status, 413);
    assert.equal(res.json.message, 'Request entity too large: limit is 3145728');
  });
});
