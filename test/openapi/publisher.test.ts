// The OpenAPI publisher: v2 JSON and protobuf, ETags and 304s, v3 discovery and group-version documents, incremental updates.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { OpenApiPublisher } from '../../src/openapi/index.js';
import { BUILTINS, crontabCrd } from './fixtures.js';
import { Message } from './proto-decode.js';

const PROTO = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const NOW = new Date('2024-05-01T12:00:00Z');

function publisher() {
  const p = new OpenApiPublisher({ version: 'v1.32.0', now: () => NOW });
  p.setBuiltins(BUILTINS);
  p.setCrd(crontabCrd());
  return p;
}

function v2(p: OpenApiPublisher) {
  const r = p.handle('/openapi/v2', { accept: 'application/json' })!;
  assert.equal(r.status, 200);
  return JSON.parse(r.body!.toString());
}

describe('OpenAPI publisher', () => {
  it('publishes every served CRD version, built-in kinds and meta types in /openapi/v2', () => {
    const doc = v2(publisher());
    assert.equal(doc.swagger, '2.0');
    assert.deepEqual(doc.info, { title: 'Kubernetes', version: 'v1.32.0' });
    assert.deepEqual(Object.keys(doc), ['swagger', 'info', 'paths', 'definitions', 'parameters', 'securityDefinitions', 'security']);
    for (const name of [
      'com.example.stable.v1.CronTab',
      'com.example.stable.v1.CronTabList',
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
      'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta',
      'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
      'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
      'io.k8s.api.core.v1.Namespace',
      'io.k8s.api.core.v1.ConfigMap',
      'io.k8s.api.apps.v1.Deployment',
      'io.k8s.api.coordination.v1.Lease',
      'io.k8s.api.events.v1.Event',
      'io.k8s.api.autoscaling.v1.Scale',
      'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
    ]) {
      assert.ok(doc.definitions[name], name);
    }
    assert.deepEqual(doc.definitions['io.k8s.api.core.v1.Namespace']['x-kubernetes-group-version-kind'], [{ group: '', kind: 'Namespace', version: 'v1' }]);
    assert.deepEqual(doc.definitions['io.k8s.api.example.v1.Gadget'], { type: 'object', 'x-kubernetes-group-version-kind': [{ group: 'example.kapi.dev', kind: 'Gadget', version: 'v1' }] });
    const keys = Object.keys(doc.definitions);
    assert.deepEqual(keys, [...keys].sort());
    assert.equal(doc.definitions['com.example.stable.v1.CronTab'].properties.spec.properties.cronSpec.description, 'The cron spec defining the interval a CronJob is run');
    assert.ok(doc.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale']);
    assert.ok(doc.paths['/api/v1/namespaces/{name}/status']);
    // Shared parameters are published once and referenced.
    const pretty = doc.paths['/api/v1/namespaces/{name}'].parameters.find((x: { $ref?: string }) => x.$ref?.startsWith('#/parameters/pretty-'));
    assert.ok(pretty, 'pretty is a shared parameter');
    assert.equal(doc.parameters[pretty.$ref.slice('#/parameters/'.length)].name, 'pretty');
    assert.deepEqual(doc.securityDefinitions, { BearerToken: { description: 'Bearer Token authentication', type: 'apiKey', name: 'authorization', in: 'header' } });
  });

  it('serves the gnostic protobuf document that decodes with the OpenAPIv2.proto field numbers', () => {
    const p = publisher();
    const r = p.handle('/openapi/v2', { accept: `${PROTO}, application/json` })!;
    assert.equal(r.status, 200);
    assert.equal(r.headers['Content-Type'], 'application/octet-stream');
    const doc = Message.decode(r.body!);
    assert.equal(doc.string(1), '2.0');
    assert.equal(doc.message(2)!.string(1), 'Kubernetes');
    assert.equal(doc.message(2)!.string(2), 'v1.32.0');
    const json = v2(p);
    const defs = doc.message(9)!.named(1);
    assert.deepEqual([...defs.keys()], Object.keys(json.definitions));
    const crontab = defs.get('com.example.stable.v1.CronTab')!;
    assert.deepEqual(crontab.message(22)!.strings(1), ['object']);
    const props = crontab.message(25)!.named(1);
    assert.deepEqual([...props.keys()], ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    assert.equal(props.get('metadata')!.string(1), '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    const spec = props.get('spec')!.message(25)!.named(1);
    assert.equal(spec.get('cronSpec')!.string(4), 'The cron spec defining the interval a CronJob is run');
    assert.equal(spec.get('replicas')!.message(22)!.strings(1)[0], 'integer');
    assert.equal(spec.get('replicas')!.double(9), undefined, 'minimum 0 is a proto3 default');
    const ext = crontab.named(31);
    assert.equal(ext.get('x-kubernetes-group-version-kind')!.string(2), '[{"group":"stable.example.com","kind":"CronTab","version":"v1"}]\n');
    // Paths, operations and parameters.
    const paths = doc.message(8)!.named(2);
    assert.deepEqual([...paths.keys()], Object.keys(json.paths));
    const item = paths.get('/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}')!;
    const get = item.message(2)!;
    assert.equal(get.string(5), 'readStableExampleComV1NamespacedCronTab');
    assert.deepEqual(get.strings(1), ['stableExampleCom_v1']);
    const responses = get.message(9)!.named(1);
    assert.equal(responses.get('200')!.message(1)!.string(1), 'OK');
    assert.equal(responses.get('200')!.message(1)!.message(2)!.message(1)!.string(1), '#/definitions/com.example.stable.v1.CronTab');
    const nameParam = item
      .messages(9)
      .map((x) => x.message(1))
      .find((x) => x)!
      .message(2)!
      .message(4)!;
    assert.equal(nameParam.string(4), 'name');
    assert.equal(nameParam.string(2), 'path');
    assert.equal(nameParam.bool(1), true);
    const sharedRef = item.messages(9).find((x) => x.has(2))!.message(2)!.string(1)!;
    assert.match(sharedRef, /^#\/parameters\/(namespace|pretty)-/);
    assert.ok(doc.message(10)!.named(1).has(sharedRef.slice('#/parameters/'.length)));
    assert.equal(doc.message(13)!.named(1).get('BearerToken')!.message(2)!.string(1), 'apiKey');
  });

  it('negotiates, sets a strong ETag and answers If-None-Match with 304', () => {
    const p = publisher();
    const r = p.handle('/openapi/v2', {})!;
    assert.equal(r.headers['Content-Type'], 'application/json');
    assert.match(r.headers.ETag, /^"[0-9A-F]{128}"$/);
    assert.equal(r.headers['Last-Modified'], NOW.toUTCString());
    assert.match(r.headers.Vary, /^Accept/);
    assert.equal(r.headers['Content-Length'], String(r.body!.length));
    const again = p.handle('/openapi/v2', { 'if-none-match': r.headers.ETag })!;
    assert.equal(again.status, 304);
    assert.equal(again.body, undefined);
    assert.equal(again.headers.ETag, r.headers.ETag);
    assert.equal(p.handle('/openapi/v2', { 'if-none-match': '"other"' })!.status, 200);
    assert.equal(p.handle('/openapi/v2', { 'if-modified-since': NOW.toUTCString() })!.status, 304);
    assert.equal(p.handle('/openapi/v2', { accept: 'text/html' })!.status, 406);
    assert.equal(p.handle('/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf' })!.headers['Content-Type'], 'application/octet-stream');
    const gz = p.handle('/openapi/v2', { 'accept-encoding': 'gzip' })!;
    assert.equal(gz.headers['Content-Encoding'], 'gzip');
    assert.deepEqual(gunzipSync(gz.body!), r.body);
    assert.equal(p.handle('/apis', {}), undefined);
    // A change gives a new ETag.
    p.setCrd(crontabCrd({ group: 'other.example.com' }));
    const changed = p.handle('/openapi/v2', { 'if-none-match': r.headers.ETag })!;
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.ETag, r.headers.ETag);
  });

  it('follows CRD changes: renamed, unserved and deleted versions, unestablished and non-structural CRDs', () => {
    const p = publisher();
    const crd = crontabCrd();
    crd.spec!.versions![0].name = 'v2';
    p.setCrd(crd);
    let doc = v2(p);
    assert.ok(doc.definitions['com.example.stable.v2.CronTab']);
    assert.equal(doc.definitions['com.example.stable.v1.CronTab'], undefined);
    assert.equal(doc.paths['/apis/stable.example.com/v1/crontabs'], undefined);
    crd.spec!.versions![0].served = false;
    p.setCrd(crd);
    doc = v2(p);
    assert.equal(doc.definitions['com.example.stable.v2.CronTab'], undefined);
    const ns = crontabCrd();
    ns.status!.conditions!.push({ type: 'NonStructuralSchema', status: 'True' });
    p.setCrd(ns);
    assert.deepEqual(v2(p).definitions['com.example.stable.v1.CronTab'], { type: 'object', 'x-kubernetes-group-version-kind': [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }] });
    const pending = crontabCrd();
    pending.status!.conditions = [{ type: 'Established', status: 'False' }];
    p.setCrd(pending);
    assert.equal(v2(p).definitions['com.example.stable.v1.CronTab'], undefined);
    p.setCrd(crontabCrd());
    assert.ok(v2(p).definitions['com.example.stable.v1.CronTab']);
    p.removeCrd('crontabs.stable.example.com');
    doc = v2(p);
    assert.equal(doc.definitions['com.example.stable.v1.CronTab'], undefined);
    assert.equal(Object.keys(doc.paths).some((k) => k.includes('crontabs')), false);
  });

  it('rebuilds only the fragment of the CRD that changed, for the forms that are served', () => {
    const p = new OpenApiPublisher({ now: () => NOW });
    p.setBuiltins(BUILTINS);
    for (let i = 0; i < 20; i++) p.setCrd(crontabCrd({ group: `g${i}.example.com` }));
    const first = v2(p);
    assert.equal(Object.keys(first.definitions).filter((k) => k.endsWith('.v1.CronTab')).length, 20);
    // Each form is serialized on first use, from a fragment built for it: 21 sources, JSON only so far.
    assert.equal(p.fragmentBuilds, 21);
    p.handle('/openapi/v2', { accept: PROTO });
    assert.equal(p.fragmentBuilds, 42);
    const built = p.fragmentBuilds;
    const crd = crontabCrd({ group: 'g7.example.com', extraProps: 1 });
    p.setCrd(crd);
    const doc = v2(p);
    p.handle('/openapi/v2', { accept: PROTO });
    // The changed CRD's fragment, once for each form served.
    assert.equal(p.fragmentBuilds, built + 2);
    assert.ok(doc.definitions['com.example.g7.v1.CronTab'].properties.spec.properties.field0);
    assert.deepEqual(doc.definitions['com.example.g3.v1.CronTab'], first.definitions['com.example.g3.v1.CronTab']);
  });

  it('prepares a cold form in steps once, whoever asks meanwhile, and then serves it without building again', async () => {
    const p = new OpenApiPublisher({ now: () => NOW });
    p.setBuiltins(BUILTINS);
    for (let i = 0; i < 3; i++) p.setCrd(crontabCrd({ group: `g${i}.example.com` }));
    await Promise.all([p.prepare('/openapi/v2', { accept: 'application/json' }), p.prepare('/openapi/v2?x=1', { accept: 'application/json' })]);
    assert.equal(p.fragmentBuilds, 4, 'one fragment per source, for both requests');
    assert.equal(Object.keys(v2(p).definitions).filter((k) => k.endsWith('.v1.CronTab')).length, 3);
    assert.equal(p.fragmentBuilds, 4, 'served from what was prepared');
    await p.prepare('/openapi/v3', {});
    const index = p.handle('/openapi/v3', {})!;
    assert.equal(index.status, 200);
    assert.equal(p.fragmentBuilds, 4, 'the v3 index makes no document: its hashes come from the sources\' inputs');
    const url = JSON.parse(index.body!.toString()).paths['apis/g1.example.com/v1'].serverRelativeURL;
    await p.prepare(url, {});
    const doc = p.handle(url, {})!;
    assert.equal(doc.status, 200);
    assert.equal(`"${url.split('hash=')[1]}"`, doc.headers.ETag, 'the document carries the hash the index gave');
    assert.equal(p.fragmentBuilds, 5, 'v3: a form of its own, of that group-version\'s sources only');
  });

  it('makes the documents clients asked for again after a change, in the background, and no others', async () => {
    const p = new OpenApiPublisher({ now: () => NOW });
    p.setBuiltins(BUILTINS);
    for (let i = 0; i < 3; i++) p.setCrd(crontabCrd({ group: `g${i}.example.com` }));
    const gzip = { accept: 'application/json', 'accept-encoding': 'gzip' };
    await p.prepare('/openapi/v2', gzip);
    await p.prepare('/openapi/v3/apis/g1.example.com/v1', {});
    // A group-version without a document is not kept up (any path can be asked for).
    await p.prepare('/openapi/v3/apis/none.example.com/v1', {});
    const before = p.fragmentBuilds;
    p.setCrd(crontabCrd({ group: 'g1.example.com', extraProps: 2 }));
    await p.warmed();
    // The changed CRD made for the two forms in use (v2 JSON, v3), not for protobuf nobody asked for.
    assert.equal(p.fragmentBuilds, before + 2);
    const made = p.fragmentBuilds;
    const r = p.handle('/openapi/v2', gzip)!;
    assert.equal(r.headers['Content-Encoding'], 'gzip');
    const doc = JSON.parse(gunzipSync(r.body!).toString());
    assert.ok(doc.definitions['com.example.g1.v1.CronTab'].properties.spec.properties.field1, 'the new document');
    const v3 = JSON.parse(p.handle('/openapi/v3/apis/g1.example.com/v1', {})!.body!.toString());
    assert.ok(v3.components.schemas['com.example.g1.v1.CronTab'].properties.spec.properties.field1);
    assert.equal(p.fragmentBuilds, made, 'served as made, nothing built while answering');
    // Closed, it makes nothing more.
    p.close();
    p.setCrd(crontabCrd({ group: 'g2.example.com', extraProps: 3 }));
    await p.warmed();
    assert.equal(p.fragmentBuilds, made);
  });

  it('stops making a document again once no client has asked for it in 15 minutes (its own passes do not count)', async () => {
    let now = NOW.getTime();
    const p = new OpenApiPublisher({ now: () => new Date(now) });
    p.setBuiltins(BUILTINS);
    p.setCrd(crontabCrd({ group: 'g0.example.com' }));
    await p.prepare('/openapi/v2', { accept: 'application/json' });
    const minutes = (n: number) => n * 60_000;
    now += minutes(10);
    p.setCrd(crontabCrd({ group: 'g0.example.com', extraProps: 1 }));
    await p.warmed();
    const made = p.fragmentBuilds;
    assert.equal(made, 3, 'made again 10 minutes after the request');
    now += minutes(6);
    p.setCrd(crontabCrd({ group: 'g0.example.com', extraProps: 2 }));
    await p.warmed();
    assert.equal(p.fragmentBuilds, made, '16 minutes after the request: not made in the background');
    assert.ok(v2(p).definitions['com.example.g0.v1.CronTab'].properties.spec.properties.field1, 'a client still gets the new document');
  });

  it('serves the document prepare made for the request even when a change came after it, making nothing in one step', async () => {
    const p = publisher();
    const prepared = await p.prepare('/openapi/v2', { accept: 'application/json' });
    assert.ok(prepared);
    p.setCrd(crontabCrd({ group: 'late.example.com' }));
    const builds = p.fragmentBuilds;
    const r = p.handle('/openapi/v2', { accept: 'application/json' }, prepared)!;
    assert.equal(r.status, 200);
    assert.equal(r.body, prepared.body);
    assert.equal(p.fragmentBuilds, builds, 'nothing made while answering');
    // The next request gets the new document.
    assert.ok(v2(p).definitions['com.example.late.v1.CronTab']);
  });

  it('answers a client that has the document 304 from its inputs, without making it (another replica, a restart)', () => {
    const first = publisher();
    const v2 = first.handle('/openapi/v2', { accept: 'application/json' })!;
    const index = JSON.parse(first.handle('/openapi/v3', {})!.body!.toString()).paths;
    const v3url = index['apis/stable.example.com/v1'].serverRelativeURL as string;
    const v3 = first.handle(v3url, {})!;
    const fresh = publisher();
    const again = fresh.handle('/openapi/v2', { accept: 'application/json', 'if-none-match': v2.headers.ETag })!;
    assert.deepEqual([again.status, again.headers.ETag], [304, v2.headers.ETag]);
    assert.equal(fresh.handle(v3url, { 'if-none-match': v3.headers.ETag })!.status, 304);
    assert.equal(fresh.fragmentBuilds, 0, 'nothing made for them');
    // The same CRD set again (a reconcile) changes nothing; another spec changes the ETags.
    const generation = fresh.generation;
    fresh.setCrd(crontabCrd());
    assert.equal(fresh.generation, generation);
    fresh.setCrd(crontabCrd({ extraProps: 3 }));
    assert.equal(fresh.handle('/openapi/v2', { accept: 'application/json', 'if-none-match': v2.headers.ETag })!.status, 200);
  });

  it('serves the v3 discovery document and group-version documents with hash-based caching', () => {
    const p = publisher();
    const disc = p.handle('/openapi/v3', {})!;
    assert.equal(disc.status, 200);
    assert.equal(disc.headers['Content-Type'], 'application/json');
    const paths = JSON.parse(disc.body!.toString()).paths as Record<string, { serverRelativeURL: string }>;
    assert.deepEqual(Object.keys(paths), [
      'api/v1',
      'apis/apiextensions.k8s.io/v1',
      'apis/apps/v1',
      'apis/coordination.k8s.io/v1',
      'apis/events.k8s.io/v1',
      'apis/example.kapi.dev/v1',
      'apis/stable.example.com/v1',
    ]);
    const url = paths['apis/stable.example.com/v1'].serverRelativeURL;
    assert.match(url, /^\/openapi\/v3\/apis\/stable\.example\.com\/v1\?hash=[0-9A-F]{128}$/);
    const r = p.handle(url, { accept: 'application/json' })!;
    assert.equal(r.status, 200);
    assert.equal(r.headers['Cache-Control'], 'public, immutable');
    assert.equal(r.headers.Expires, new Date(NOW.getTime() + 365 * 24 * 3600 * 1000).toUTCString());
    assert.equal(`"${url.split('hash=')[1]}"`, r.headers.ETag);
    const doc = JSON.parse(r.body!.toString());
    assert.equal(doc.openapi, '3.0.0');
    const schemas = doc.components.schemas;
    const crontab = schemas['com.example.stable.v1.CronTab'];
    assert.deepEqual(crontab['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
    assert.deepEqual(crontab.properties.metadata, {
      description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }],
    });
    assert.equal(crontab.properties.spec.properties.replicas.default, 1);
    for (const n of ['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry', 'io.k8s.api.autoscaling.v1.Scale', 'io.k8s.apimachinery.pkg.apis.meta.v1.Status']) {
      assert.ok(schemas[n], n);
    }
    const list = doc.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs'];
    const limit = list.get.parameters.find((x: { $ref?: string }) => x.$ref?.startsWith('#/components/parameters/limit-'));
    assert.deepEqual(doc.components.parameters[limit.$ref.slice('#/components/parameters/'.length)].schema, { type: 'integer', uniqueItems: true });
    assert.equal(list.post.parameters.find((x: { name?: string }) => x.name === 'dryRun').in, 'query');
    // Without a hash: no immutable caching; a stale hash redirects to the current one.
    const plain = p.handle('/openapi/v3/apis/stable.example.com/v1', {})!;
    assert.equal(plain.headers['Cache-Control'], undefined);
    const stale = p.handle('/openapi/v3/apis/stable.example.com/v1?hash=ABC', {})!;
    assert.equal(stale.status, 301);
    assert.equal(stale.headers.Location, url);
    assert.equal(p.handle('/openapi/v3/apis/stable.example.com/v1', { 'if-none-match': r.headers.ETag })!.status, 304);
    assert.equal(p.handle('/openapi/v3/apis/nothing.example.com/v1', {})!.status, 404);
    const core = JSON.parse(p.handle(paths['api/v1'].serverRelativeURL, {})!.body!.toString());
    assert.deepEqual(core.components.schemas['io.k8s.api.core.v1.Namespace']['x-kubernetes-group-version-kind'], [{ group: '', kind: 'Namespace', version: 'v1' }]);
    assert.ok(core.components.schemas['io.k8s.api.core.v1.NamespaceSpec']);
    // Changing one CRD changes only its group-version's hash.
    p.setCrd(crontabCrd({ extraProps: 2 }));
    const after = JSON.parse(p.handle('/openapi/v3', {})!.body!.toString()).paths;
    assert.notEqual(after['apis/stable.example.com/v1'].serverRelativeURL, url);
    assert.equal(after['api/v1'].serverRelativeURL, paths['api/v1'].serverRelativeURL);
  });
});
