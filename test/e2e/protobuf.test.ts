/**
 * Kubernetes protobuf on the wire, as Go clients use it: built-in objects in requests and responses,
 * lists, watch streams of length-framed WatchEvents, DeleteOptions, errors as Status messages, and
 * PartialObjectMetadata of custom resources. The codec's bytes match upstream's round-trip fixtures
 * (scripts/check-protobuf-fixtures.mjs); here the server speaks it end to end.
 */
import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import { decodeStruct } from '../../src/machinery/protobuf/codec.js';
import { decodeEnvelope, encodeEnvelope } from '../../src/machinery/protobuf/envelope.js';
import { encodeObject, protobufStruct } from '../../src/machinery/protobuf/objects.js';
import { readFields, Writer } from '../../src/machinery/protobuf/wire.js';
import { GO_STRUCTS } from '../../src/api/go-types.js';
import { CRONTAB_CRD, cronTab, startTestServer, until, type TestServer } from './harness.js';

const PB = 'application/vnd.kubernetes.protobuf';
const CMS = '/api/v1/namespaces/default/configmaps';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** An answer's object: its envelope's apiVersion and kind, and the message as JSON. */
function decoded(body: Buffer): Record<string, any> {
  const env = decodeEnvelope(body);
  const id = protobufStruct(env.apiVersion, env.kind);
  assert.ok(id, `a message for ${env.apiVersion} ${env.kind}`);
  return { apiVersion: env.apiVersion, kind: env.kind, ...decodeStruct(id, env.raw) };
}

describe('Kubernetes protobuf', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', CRDS, { body: CRONTAB_CRD })).status, 201);
  });
  after(() => s.stop());

  it('creates, reads, lists and updates built-in objects in protobuf', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pb', labels: { a: 'b' } }, data: { key: 'value' }, binaryData: { bin: Buffer.from([0, 1, 255]).toString('base64') } };
    const created = await s.request('POST', CMS, { body: encodeObject(cm), contentType: PB, accept: PB });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.headers['content-type'], PB);
    const obj = decoded(created.body);
    assert.equal(obj.kind, 'ConfigMap');
    assert.deepEqual(obj.data, { key: 'value' });
    assert.equal(obj.binaryData.bin, 'AAH/');
    assert.ok(obj.metadata.uid && obj.metadata.resourceVersion && obj.metadata.creationTimestamp);
    // The same object in JSON.
    const json = (await s.request('GET', `${CMS}/pb`)).json;
    assert.deepEqual(json.data, { key: 'value' });
    assert.equal(json.metadata.uid, obj.metadata.uid);
    // Get and list in protobuf; the list's items in the list message.
    const got = decoded((await s.request('GET', `${CMS}/pb`, { accept: PB })).body);
    assert.equal(got.metadata.resourceVersion, obj.metadata.resourceVersion);
    const list = decoded((await s.request('GET', CMS, { accept: PB })).body);
    assert.equal(list.kind, 'ConfigMapList');
    assert.ok(list.metadata.resourceVersion);
    assert.ok(list.items.some((i: any) => i.metadata.name === 'pb' && i.data.key === 'value'));
    // An update in protobuf, as a typed Go client sends it.
    const updated = await s.request('PUT', `${CMS}/pb`, { body: encodeObject({ ...got, data: { key: 'new' } }), contentType: PB, accept: PB });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(decoded(updated.body).data.key, 'new');
    // A Deployment: pointers, int-or-string, quantities and nested templates survive the trip.
    const deploy = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: '500m' } } }] } },
      },
    };
    const d = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: encodeObject(deploy), contentType: PB, accept: PB });
    assert.equal(d.status, 201, d.text);
    const dd = decoded(d.body);
    assert.equal(dd.spec.replicas, 0);
    assert.deepEqual(dd.spec.strategy.rollingUpdate, { maxUnavailable: 1, maxSurge: '25%' });
    assert.equal(dd.spec.template.spec.containers[0].resources.limits.cpu, '500m');
  });

  it('deletes with protobuf DeleteOptions and answers errors as Status messages', async () => {
    await s.request('POST', CMS, { body: { metadata: { name: 'gone' } } });
    const opts = encodeObject({ apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions', preconditions: { uid: 'not-the-uid' } });
    const refused = await s.request('DELETE', `${CMS}/gone`, { body: opts, contentType: PB, accept: PB });
    assert.equal(refused.status, 409);
    assert.equal(refused.headers['content-type'], PB);
    const status = decoded(refused.body);
    assert.equal(status.kind, 'Status');
    assert.equal(status.reason, 'Conflict');
    assert.match(status.message, /^Operation cannot be fulfilled on ConfigMap "gone": the UID in the precondition \(not-the-uid\) does not match/);
    const deleted = await s.request('DELETE', `${CMS}/gone`, { body: encodeObject({ apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 }), contentType: PB, accept: PB });
    assert.equal(deleted.status, 200, deleted.text);
    const missing = await s.request('GET', `${CMS}/gone`, { accept: PB });
    assert.equal(missing.status, 404);
    const notFound = decoded(missing.body);
    assert.equal(notFound.message, 'configmaps "gone" not found');
    assert.deepEqual(notFound.details, { name: 'gone', kind: 'configmaps' });
    assert.equal(notFound.code, 404);
  });

  it('refuses undecodable protobuf bodies with the decoder\'s 400', async () => {
    const bad = await s.request('POST', CMS, { body: Buffer.from('{"not":"protobuf"}'), contentType: PB });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.message, 'the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({"not":"protobuf"})');
    const truncated = Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), Buffer.from([0x12, 0x40, 0x0a])]);
    const t = await s.request('POST', CMS, { body: truncated, contentType: PB });
    assert.equal(t.status, 400);
    assert.match(t.json.message, /^the object provided is unrecognized \(must be of type ConfigMap\): unexpected EOF \(6b387300[0-9a-f]+\)$/);
    assert.equal((await s.request('GET', CMS)).status, 200, 'the server is fine');
  });

  it('streams watch events as length-framed WatchEvent messages', async () => {
    const list = decoded((await s.request('GET', CMS, { accept: PB })).body);
    const frames: Buffer[] = [];
    const url = new URL(`${CMS}?watch=1&resourceVersion=${list.metadata.resourceVersion}`, s.kapi.url);
    let contentType = '';
    const done = new Promise<void>((resolve, reject) => {
      const req = https.get(url, { ca: s.kapi.caCertPem, headers: { Authorization: `Bearer ${s.kapi.adminToken}`, Accept: `${PB};stream=watch` } }, (res) => {
        contentType = String(res.headers['content-type']);
        let buf = Buffer.alloc(0);
        res.on('data', (c: Buffer) => {
          buf = Buffer.concat([buf, c]);
          while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
            const n = buf.readUInt32BE(0);
            frames.push(buf.subarray(4, 4 + n));
            buf = buf.subarray(4 + n);
          }
          if (frames.length >= 2) {
            req.destroy();
            resolve();
          }
        });
      });
      req.on('error', (e) => (frames.length >= 2 ? resolve() : reject(e)));
      setTimeout(() => reject(new Error(`${frames.length} frames`)), 5000).unref();
    });
    await new Promise((r) => setTimeout(r, 100));
    await s.request('POST', CMS, { body: { metadata: { name: 'watched' } } });
    await s.request('DELETE', `${CMS}/watched`);
    await done;
    assert.equal(contentType, `${PB};stream=watch`);
    const events = frames.map((f) => {
      // The stream's own serializer is the raw one: a WatchEvent message, no envelope; its object has one.
      const fields = readFields(f);
      const type = Buffer.from(fields.find((x) => x.field === 1)!.data!).toString();
      const raw = readFields(fields.find((x) => x.field === 2)!.data!).find((x) => x.field === 1)!.data!;
      return { type, object: decoded(Buffer.from(raw)) };
    });
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'DELETED']);
    assert.equal(events[0].object.kind, 'ConfigMap');
    assert.equal(events[0].object.metadata.name, 'watched');
  });

  // client-go's discovery asks for aggregated discovery in protobuf first; the legacy documents come in protobuf too.
  it('serves discovery in protobuf', async () => {
    const agg = await s.request('GET', '/apis', { accept: `${PB};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json` });
    assert.equal(agg.headers['content-type'], `${PB};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`);
    const groups = decoded(agg.body);
    assert.equal(groups.kind, 'APIGroupDiscoveryList');
    const apps = groups.items.find((g: any) => g.metadata.name === 'apps');
    assert.ok(apps.versions[0].resources.some((r: any) => r.resource === 'deployments' && r.responseKind.kind === 'Deployment'));
    const legacy = await s.request('GET', '/api/v1', { accept: PB });
    assert.equal(legacy.headers['content-type'], PB);
    const resources = decoded(legacy.body);
    assert.equal(resources.kind, 'APIResourceList');
    assert.ok(resources.resources.some((r: any) => r.name === 'configmaps' && r.verbs.includes('watch')));
    // JSON stays the answer for JSON clients, v2beta1 included.
    const beta = await s.request('GET', '/apis', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList' });
    assert.equal(beta.json.apiVersion, 'apidiscovery.k8s.io/v2beta1');
  });

  it('serves custom resources protobuf only as PartialObjectMetadata', async () => {
    const path = '/apis/stable.example.com/v1/namespaces/default/crontabs';
    await s.request('POST', path, { body: cronTab('pbct') });
    const meta = await s.request('GET', path, { accept: `${PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json` });
    assert.equal(meta.headers['content-type'], PB);
    const list = decoded(meta.body);
    assert.equal(list.kind, 'PartialObjectMetadataList');
    assert.equal(list.apiVersion, 'meta.k8s.io/v1');
    assert.equal(list.items[0].metadata.name, 'pbct');
    // A Go client's plain protobuf clause falls through to JSON; protobuf alone is not acceptable.
    const fallback = await s.request('GET', `${path}/pbct`, { accept: `${PB}, application/json` });
    assert.equal(fallback.headers['content-type'], 'application/json');
    const refused = await s.request('GET', `${path}/pbct`, { accept: PB });
    assert.equal(refused.status, 406);
    // The 406 itself goes out in the media type the client accepts (ErrorNegotiated), as does a 401.
    assert.equal(refused.headers['content-type'], PB);
    assert.equal(decoded(refused.body).reason, 'NotAcceptable');
    const unauthorized = await s.request('GET', CMS, { accept: PB, token: 'nope' });
    assert.equal(unauthorized.status, 401);
    assert.deepEqual([decoded(unauthorized.body).kind, decoded(unauthorized.body).code], ['Status', 401]);
    const body = await s.request('POST', path, { body: encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }), contentType: PB });
    assert.equal(body.status, 415);
    // Tables are JSON or YAML only.
    assert.equal((await s.request('GET', CMS, { accept: `${PB};as=Table;g=meta.k8s.io;v=v1` })).status, 406);
  });
});

describe('Kubernetes protobuf against hostile bodies and odd stored data', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  /** A message holding `inner` in the field named `json` of struct `id`. */
  const wrap = (id: string, json: string, inner: Buffer): Buffer => {
    const f = GO_STRUCTS[id].fields.find((x) => x.json === json)!;
    const w = new Writer();
    w.tag(f.proto![0], 2);
    w.bytes(inner);
    return Buffer.from(w.finish());
  };

  it('refuses schemas nested past the limit with a 400, not a stack overflow', async () => {
    let schema: Buffer = Buffer.alloc(0);
    for (let i = 0; i < 5000; i++) schema = wrap('apiextensions/v1.JSONSchemaProps', 'not', schema);
    const validation = wrap('apiextensions/v1.CustomResourceValidation', 'openAPIV3Schema', schema);
    const version = wrap('apiextensions/v1.CustomResourceDefinitionVersion', 'schema', validation);
    const spec = wrap('apiextensions/v1.CustomResourceDefinitionSpec', 'versions', version);
    const crd = wrap('apiextensions/v1.CustomResourceDefinition', 'spec', spec);
    const res = await s.request('POST', CRDS, { body: encodeEnvelope('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd), contentType: PB });
    assert.equal(res.status, 400, res.text);
    assert.match(res.json.message, /^CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: exceeded max depth of 200 nested messages$/);
  });

  it('keeps map keys such as __proto__, and refuses times outside RFC 3339', async () => {
    const created = await s.request('POST', CMS, { body: encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'proto-key' }, data: JSON.parse('{"__proto__":"x","a":"b"}') }), contentType: PB });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.entries((await s.request('GET', `${CMS}/proto-key`)).json.data), [['__proto__', 'x'], ['a', 'b']]);
    const ts = new Writer();
    ts.tag(1, 0);
    ts.uvarint(1e13);
    const meta = Buffer.concat([Buffer.from([0x0a, 4]), Buffer.from('late'), wrap('meta/v1.ObjectMeta', 'creationTimestamp', Buffer.from(ts.finish()))]);
    const res = await s.request('POST', CMS, { body: encodeEnvelope('v1', 'ConfigMap', wrap('core/v1.ConfigMap', 'metadata', meta)), contentType: PB });
    assert.equal(res.status, 400, res.text);
    assert.match(res.json.message, /year outside of range/);
  });

  it('sends a stored value its field cannot carry as the zero value instead of failing the list', async () => {
    // Written before built-ins were type-checked: put in the store directly.
    const odd = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'odd', namespace: 'default', uid: 'u-odd', creationTimestamp: '2026-01-01T00:00:00Z' }, data: { a: 1 }, immutable: 'yes' };
    await s.kapi.storage.create('/registry/configmaps/default/odd', JSON.stringify(odd));
    await until('the cache has it', async () => (await s.request('GET', `${CMS}/odd`)).status === 200);
    const list = await s.request('GET', CMS, { accept: PB });
    assert.equal(list.status, 200, list.text);
    const item = decoded(list.body).items.find((i: any) => i.metadata.name === 'odd');
    // The field that does not fit goes as Go's zero value (a nil map, a false bool); the rest is there.
    assert.equal(item.data, undefined);
    assert.equal(item.immutable, undefined);
    assert.equal(item.metadata.namespace, 'default');
    assert.equal((await s.request('GET', `${CMS}/odd`, { accept: PB })).status, 200);
  });
});
