/**
 * Objects the watch cache keeps as text (past the process's decoded set, here two objects): every way of reading
 * them answers as for decoded ones. Lists as JSON (answered from the text), pages with continue, label selectors,
 * Tables, metadata-only and protobuf; a typed list (ConfigMaps, items without their kind); a CRD's new default
 * applied to them; and after a restart, when they are kept as their stored values.
 */
import assert from 'node:assert/strict';
import https from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodedObjectLimit, setDecodedObjectLimit } from '../../src/cache/watch-cache.js';
import { startKapi, type Kapi } from '../../src/kapi/index.js';
import { startTestServer, until, type TestServer } from './harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const things = '/apis/packed.example.com/v1/namespaces/default/things';
const configMaps = '/api/v1/namespaces/default/configmaps';
const N = 12;

const crd = (spec: Record<string, unknown>) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'things.packed.example.com' },
  spec: {
    group: 'packed.example.com',
    scope: 'Namespaced',
    names: { plural: 'things', singular: 'thing', kind: 'Thing' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: spec } } } } }],
  },
});

type Obj = { metadata: { name: string; resourceVersion: string; labels?: Record<string, string> }; spec?: Record<string, unknown>; kind?: string; apiVersion?: string };

const names = (list: { items: Obj[] }) => list.items.map((o) => o.metadata.name);

function get(kapi: Kapi, path: string, accept?: string): Promise<{ status: number; body: Buffer; json: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(path, kapi.url), { ca: kapi.caCertPem, headers: { authorization: `Bearer ${kapi.adminToken}`, ...(accept ? { accept } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        let json: unknown;
        try {
          json = JSON.parse(body.toString());
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, body, json });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('objects the watch cache keeps as text', () => {
  let s: TestServer;
  const created: Obj[] = [];
  const createdMaps: Obj[] = [];
  const limit = decodedObjectLimit();

  before(async () => {
    setDecodedObjectLimit(2);
    s = await startTestServer();
    assert.equal((await s.request('POST', CRDS, { body: crd({ n: { type: 'integer' } }) })).status, 201);
    await until('things served', async () => (await s.request('GET', things)).status === 200);
    for (let i = 0; i < N; i++) {
      const r = await s.request('POST', things, { body: { apiVersion: 'packed.example.com/v1', kind: 'Thing', metadata: { name: `t${String(i).padStart(2, '0')}`, labels: { parity: i % 2 ? 'odd' : 'even' } }, spec: { n: i } } });
      assert.equal(r.status, 201, r.text);
      created.push(r.json);
      const m = await s.request('POST', configMaps, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `m${String(i).padStart(2, '0')}` }, data: { i: String(i) } } });
      assert.equal(m.status, 201, m.text);
      createdMaps.push(m.json);
    }
  });
  after(async () => {
    await s?.stop();
    setDecodedObjectLimit(limit);
  });

  it('lists them as JSON, in pages and by label, as they were written', async () => {
    const all = await s.request('GET', things);
    assert.deepEqual(all.json.items, created);
    const pages: Obj[] = [];
    let cont = '';
    do {
      const page = await s.request('GET', `${things}?limit=5${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
      assert.equal(page.status, 200);
      pages.push(...page.json.items);
      cont = page.json.metadata.continue ?? '';
      // A write between pages: the next page is read at the first one's revision.
      if (cont) assert.equal((await s.request('PATCH', `${things}/t00`, { body: { metadata: { annotations: { seen: String(pages.length) } } }, contentType: 'application/merge-patch+json' })).status, 200);
    } while (cont);
    assert.deepEqual(pages.map((o) => o.metadata.name), created.map((o) => o.metadata.name));
    assert.deepEqual(pages.slice(1), created.slice(1), 'the pages after the first as of its revision');
    const odd = await s.request('GET', `${things}?labelSelector=parity%3Dodd`);
    assert.deepEqual(names(odd.json), created.filter((_, i) => i % 2).map((o) => o.metadata.name));
  });

  it('answers Tables, metadata-only lists and protobuf for them', async () => {
    const table = await s.request('GET', things, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.deepEqual(
      table.json.rows.map((r: { cells: unknown[] }) => r.cells[0]),
      created.map((o) => o.metadata.name),
    );
    const meta = await s.request('GET', things, { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' });
    assert.equal(meta.json.kind, 'PartialObjectMetadataList');
    assert.deepEqual(
      meta.json.items.map((o: Obj) => [o.metadata.name, o.metadata.labels?.parity, o.spec]),
      created.map((o) => [o.metadata.name, o.metadata.labels?.parity, undefined]),
    );
    const proto = await s.request('GET', configMaps, { accept: 'application/vnd.kubernetes.protobuf' });
    assert.equal(proto.status, 200);
    for (const m of createdMaps) assert.ok(proto.body.includes(Buffer.from(m.metadata.name)), `${m.metadata.name} in the protobuf list`);
  });

  it('lists a typed resource without its items\' kind', async () => {
    const list = await s.request('GET', `${configMaps}?labelSelector=`);
    const mine = list.json.items.filter((o: Obj) => o.metadata.name.startsWith('m'));
    assert.deepEqual(
      mine,
      createdMaps.map(({ kind: _k, apiVersion: _a, ...rest }) => rest),
    );
  });

  it('applies a CRD\'s new default to them', async () => {
    const cur = await s.request('GET', `${CRDS}/things.packed.example.com`);
    const next = crd({ n: { type: 'integer' }, color: { type: 'string', default: 'blue' } });
    assert.equal((await s.request('PUT', `${CRDS}/things.packed.example.com`, { body: { ...next, metadata: { ...next.metadata, resourceVersion: cur.json.metadata.resourceVersion } } })).status, 200);
    await until('every listed thing defaulted', async () => {
      const list = await s.request('GET', things);
      return list.json.items.length === N && list.json.items.every((o: Obj) => o.spec?.color === 'blue');
    });
    assert.equal((await s.request('GET', `${things}/t05`)).json.spec.color, 'blue');
  });

  it('writes a list of more items than one turn encodes, a slice per turn, as one answer', async () => {
    const total = 2100;
    for (let from = 0; from < total; from += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, total - from) }, async (_, j) => {
          const r = await s.request('POST', things, { body: { apiVersion: 'packed.example.com/v1', kind: 'Thing', metadata: { name: `many-${String(from + j).padStart(4, '0')}` }, spec: { n: from + j } } });
          assert.equal(r.status, 201, r.text);
        }),
      );
    }
    const whole = await s.request('GET', things, { timeoutMs: 30_000 });
    assert.equal(whole.status, 200);
    assert.equal(Number(whole.headers['content-length']), whole.body.length);
    const pages: Obj[] = [];
    let cont = '';
    do {
      const page = await s.request('GET', `${things}?limit=700${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
      pages.push(...page.json.items);
      cont = page.json.metadata.continue ?? '';
    } while (cont);
    assert.equal(whole.json.items.length, N + total);
    assert.deepEqual(whole.json.items, pages);
  });

  it('reads them after a restart, kept as their stored values', async () => {
    const before = (await s.request('GET', things)).json.items as Obj[];
    await s.kapi.stop();
    const kapi = await startKapi({ dataDir: join(s.dir, 'data'), port: 0 });
    try {
      await until('things served again', async () => (await get(kapi, things)).status === 200);
      assert.deepEqual((await get(kapi, things)).json.items, before);
      assert.deepEqual(names((await get(kapi, `${things}?labelSelector=parity%3Deven`)).json), before.filter((o) => o.metadata.labels?.parity === 'even').map((o) => o.metadata.name));
      assert.deepEqual((await get(kapi, `${things}/t07`)).json, before.find((o) => o.metadata.name === 't07'));
    } finally {
      await kapi.stop();
    }
    // The harness's stop removes the data dir (the first server is stopped already).
    s.kapi = kapi;
  });
});
