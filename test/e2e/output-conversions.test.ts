/**
 * What a response becomes on the way out, as kube-apiserver negotiates it:
 * PartialObjectMetadata(List) for metadata-only clients (client-go's metadata
 * client and informers, controller-runtime's metadata watches), Tables in JSON
 * and YAML, watch streams only in a format that can stream; and bodies of
 * built-in kinds without apiVersion and kind (the typed models of the Python
 * and JavaScript clients), defaulted from the URL.
 */
import assert from 'node:assert/strict';
import { decodeStruct } from '../../src/machinery/protobuf/codec.js';
import { decodeEnvelope } from '../../src/machinery/protobuf/envelope.js';
import { after, before, describe, it } from 'node:test';
import { CRONTAB_CRD, cronTab, startTestServer, watchEvents, type TestServer } from './harness.js';

const POM = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const POM_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
/** What client-go's metadata client sends for a list (protobuf first, then JSON, then plain JSON). */
const METADATA_CLIENT_LIST = `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,${POM_LIST},application/json`;
const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';
const CM = '/api/v1/namespaces/default/configmaps';

describe('output conversions and kind-less bodies', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTAB_CRD })).status, 201);
    const labelled = cronTab('first');
    (labelled.metadata as Record<string, unknown>).labels = { app: 'x' };
    assert.equal((await s.request('POST', CT, { body: labelled })).status, 201);
    assert.equal((await s.request('POST', CT, { body: cronTab('second') })).status, 201);
    assert.equal((await s.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { secret: 'value' } } })).status, 201);
  });
  after(() => s.stop());

  it('answers PartialObjectMetadata for one object, with no field outside metadata', async () => {
    for (const path of [`${CT}/first`, `${CM}/c1`]) {
      const res = await s.request('GET', path, { accept: POM });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.deepEqual(Object.keys(res.json), ['kind', 'apiVersion', 'metadata']);
      assert.equal(res.json.kind, 'PartialObjectMetadata');
      assert.equal(res.json.apiVersion, 'meta.k8s.io/v1');
      assert.equal(res.json.metadata.name, path.endsWith('first') ? 'first' : 'c1');
      assert.match(res.json.metadata.uid, /^[0-9a-f-]{36}$/);
      assert.match(res.json.metadata.resourceVersion, /^\d+$/);
      assert.ok(!res.text.includes('"value"') && !res.text.includes('my-awesome-cron-image'), res.text);
    }
    const v1beta1 = await s.request('GET', `${CT}/first`, { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1' });
    assert.equal(v1beta1.json.apiVersion, 'meta.k8s.io/v1beta1');
    assert.deepEqual(v1beta1.json.metadata.labels, { app: 'x' });
  });

  it('answers PartialObjectMetadataList for a list, as client-go\'s metadata client asks for it', async () => {
    // The metadata client asks for protobuf first: it gets the list message.
    const pb = await s.request('GET', `${CT}?limit=1`, { accept: METADATA_CLIENT_LIST });
    assert.equal(pb.status, 200, pb.text);
    assert.equal(pb.headers['content-type'], 'application/vnd.kubernetes.protobuf');
    const env = decodeEnvelope(pb.body);
    assert.deepEqual([env.apiVersion, env.kind], ['meta.k8s.io/v1', 'PartialObjectMetadataList']);
    const items = decodeStruct('meta/v1.PartialObjectMetadataList', env.raw).items as any[];
    assert.deepEqual(items.map((i) => i.metadata.name), ['first']);
    const res = await s.request('GET', `${CT}?limit=1`, { accept: METADATA_CLIENT_LIST.replace(/^[^,]*,/, '') });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.json.kind, 'PartialObjectMetadataList');
    assert.equal(res.json.apiVersion, 'meta.k8s.io/v1');
    assert.match(res.json.metadata.resourceVersion, /^\d+$/);
    assert.ok(res.json.metadata.continue, 'a continue token for the next page');
    assert.equal(res.json.metadata.remainingItemCount, 1);
    assert.deepEqual(res.json.items.map((i: any) => [i.kind, i.apiVersion, i.metadata.name]), [['PartialObjectMetadata', 'meta.k8s.io/v1', 'first']]);
    assert.equal(res.json.items[0].spec, undefined);
    const next = await s.request('GET', `${CT}?limit=1&continue=${encodeURIComponent(res.json.metadata.continue)}`, { accept: POM_LIST });
    assert.deepEqual(next.json.items.map((i: any) => i.metadata.name), ['second']);
    const empty = await s.request('GET', `${CT}?labelSelector=app%3Dnone`, { accept: POM_LIST });
    assert.deepEqual(empty.json.items, []);
  });

  it('refuses a list where one object was asked for and the other way round, with upstream\'s 406', async () => {
    const list = await s.request('GET', CT, { accept: POM });
    assert.equal(list.status, 406);
    assert.equal(list.json.reason, 'NotAcceptable');
    assert.equal(list.json.message, 'you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)');
    const one = await s.request('GET', `${CM}/c1`, { accept: POM_LIST });
    assert.equal(one.status, 406);
    assert.equal(one.json.message, 'you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)');
  });

  it('skips conversions it does not know and falls back to the next clause', async () => {
    const unknown = await s.request('GET', `${CT}/first`, { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2' });
    assert.equal(unknown.status, 406);
    assert.equal(unknown.json.message, 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf');
    const fallback = await s.request('GET', `${CT}/first`, { accept: 'application/json;as=Other;g=meta.k8s.io;v=v1, application/json' });
    assert.equal(fallback.status, 200);
    assert.equal(fallback.json.kind, 'CronTab');
  });

  it('converts the object a write answers with', async () => {
    const created = await s.request('POST', CM, { accept: POM, body: { metadata: { name: 'c2' }, data: { a: 'b' } } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.kind, 'PartialObjectMetadata');
    assert.equal(created.json.metadata.name, 'c2');
    const patched = await s.request('PATCH', `${CT}/first`, { accept: POM, body: { metadata: { labels: { b: 'c' } } }, contentType: 'application/merge-patch+json' });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.json.metadata.labels, { app: 'x', b: 'c' });
    assert.equal(patched.json.spec, undefined);
  });

  it('answers PartialObjectMetadata and Tables in YAML', async () => {
    const pom = await s.request('GET', `${CT}/first`, { accept: 'application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' });
    assert.equal(pom.status, 200);
    assert.equal(pom.headers['content-type'], 'application/yaml');
    assert.match(pom.text, /^apiVersion: meta\.k8s\.io\/v1\nkind: PartialObjectMetadata\nmetadata:\n/);
    const table = await s.request('GET', CT, { accept: 'application/yaml;as=Table;g=meta.k8s.io;v=v1' });
    assert.equal(table.status, 200);
    assert.match(table.text, /^apiVersion: meta\.k8s\.io\/v1\n/);
    assert.match(table.text, /\nkind: Table\n/);
  });

  it('streams watch events as PartialObjectMetadata', async () => {
    const w = watchEvents(s.kapi, `${CT}?watch=true&fieldSelector=metadata.name%3Dsecond`, 2, 5000, POM);
    assert.equal(await w.status, 200);
    const patched = await s.request('PATCH', `${CT}/second`, { body: { metadata: { labels: { w: '1' } } }, contentType: 'application/merge-patch+json' });
    assert.equal(patched.status, 200);
    const [added, modified] = await w.events;
    assert.equal(added.type, 'ADDED');
    assert.deepEqual([added.object.kind, added.object.apiVersion, added.object.metadata.name], ['PartialObjectMetadata', 'meta.k8s.io/v1', 'second']);
    assert.equal(added.object.spec, undefined);
    assert.equal(modified.type, 'MODIFIED');
    assert.deepEqual(modified.object.metadata.labels, { w: '1' });
    // A plain watch of the same object, at the same time, still gets the whole object.
    const plain = watchEvents(s.kapi, `${CT}?watch=true&fieldSelector=metadata.name%3Dsecond`, 1, 5000);
    const [full] = await plain.events;
    assert.equal(full.object.kind, 'CronTab');
    assert.equal(full.object.spec.cronSpec, '* * * * */5');
  });

  it('refuses a watch in a format that cannot stream', async () => {
    const res = await s.request('GET', `${CT}?watch=true`, { accept: 'application/yaml' });
    assert.equal(res.status, 406);
    // The Status itself goes out in the client's media type (ErrorNegotiated): YAML here.
    assert.equal(res.headers['content-type'], 'application/yaml');
    assert.match(res.text, /^message: 'only the following media types are accepted: application\/json, application\/json;stream=watch'$/m);
  });

  it('defaults apiVersion and kind of built-in kinds from the URL, not a custom resource\'s kind', async () => {
    const ns = await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'kindless' } } });
    assert.equal(ns.status, 201, ns.text);
    assert.equal(ns.json.kind, 'Namespace');
    assert.equal(ns.json.apiVersion, 'v1');
    const cm = await s.request('POST', '/api/v1/namespaces/kindless/configmaps', { body: { apiVersion: null, kind: null, metadata: { name: 'c' }, data: { k: 'v' } } });
    assert.equal(cm.status, 201, cm.text);
    assert.equal(cm.json.kind, 'ConfigMap');
    const put = await s.request('PUT', '/api/v1/namespaces/kindless/configmaps/c', { body: { metadata: { name: 'c', resourceVersion: cm.json.metadata.resourceVersion }, data: { k: 'w' } } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.data.k, 'w');
    const crd = structuredClone(CRONTAB_CRD) as any;
    delete crd.apiVersion;
    delete crd.kind;
    crd.metadata.name = 'widgets.stable.example.com';
    crd.spec.names = { plural: 'widgets', singular: 'widget', kind: 'Widget' };
    const createdCrd = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
    assert.equal(createdCrd.status, 201, createdCrd.text);
    // A known kind of another type decodes, then does not convert into a ConfigMap (upstream's 400).
    const wrongKind = await s.request('POST', CM, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } } });
    assert.equal(wrongKind.status, 400);
    assert.equal(wrongKind.json.message, 'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion');
    const noKind = await s.request('POST', CT, { body: { apiVersion: 'stable.example.com/v1', metadata: { name: 'nokind' } } });
    assert.equal(noKind.status, 400);
    assert.equal(noKind.json.message, `CronTab in version "v1" cannot be handled as a CronTab: Object 'Kind' is missing in '{"apiVersion":"stable.example.com/v1","metadata":{"name":"nokind"}}'`);
  });
});
