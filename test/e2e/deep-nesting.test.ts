/**
 * Objects nested as deep as kube-apiserver decodes them (encoding/json's 10,000
 * levels): created, read as JSON, YAML and Table, replaced, merge patched, JSON
 * patched and applied, with managedFields that nest a few levels deeper still;
 * 10,001 levels refused with kube-apiserver's errors; managedFields whose fieldsV1
 * a client wrote 9,990 levels deep kept through every kind of update; and YAML
 * of deeply nested objects written at the cost of its bytes. (issue #39)
 */
import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import { startTestServer, until, type TestServer } from './harness.js';
import { stringifyYaml } from '../../src/machinery/yaml-emit.js';

const N = 10_000;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const deeps = '/apis/example.com/v1/namespaces/default/deeps';
const configMaps = '/api/v1/namespaces/default/configmaps';

const DEEP_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'deeps.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'deeps', singular: 'deep', kind: 'Deep' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        additionalPrinterColumns: [{ name: 'Spec', type: 'string', jsonPath: '.spec' }],
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
      },
    ],
  },
};

/** JSON text of `{"a":{"a":...leaf}}`, `depth` objects deep (built as text: JSON.stringify gives up far sooner). */
const nestText = (depth: number, leaf = '1', key = 'a') => `{"${key}":`.repeat(depth) + leaf + '}'.repeat(depth);

const deep = (name: string, spec: string, metadata = '') => `{"apiVersion":"example.com/v1","kind":"Deep","metadata":{"name":"${name}"${metadata}},"spec":${spec}}`;

/** How many objects nest in a chain under `key` (the last member of each, "." left out). */
function chainDepth(v: unknown): number {
  let n = 0;
  for (let x = v; typeof x === 'object' && x !== null && !Array.isArray(x); n++) {
    const keys = Object.keys(x).filter((k) => k !== '.');
    if (keys.length === 0) return n + 1;
    x = (x as Record<string, unknown>)[keys[keys.length - 1]];
  }
  return n;
}

const managers = (obj: any): string[] => (obj.metadata.managedFields ?? []).map((e: any) => e.manager);
const fieldsOf = (obj: any, manager: string): unknown => obj.metadata.managedFields.find((e: any) => e.manager === manager)?.fieldsV1;

/**
 * A GET whose answer is counted as it streams, keeping only its first and last bytes (YAML of
 * deep nesting runs to hundreds of megabytes).
 */
function streamGet(s: TestServer, path: string, accept: string): Promise<{ status: number; type: string; bytes: number; head: string; tail: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, s.kapi.url);
    const t0 = performance.now();
    const req = https.get(url, { ca: s.kapi.caCertPem, headers: { Authorization: `Bearer ${s.kapi.adminToken}`, Accept: accept }, timeout: 120_000 }, (res) => {
      let bytes = 0;
      let head = Buffer.alloc(0);
      let last: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (head.length < 4096) head = Buffer.concat([head, c]).subarray(0, 4096);
        last = [last[last.length - 1] ?? Buffer.alloc(0), c];
      });
      res.on('end', () => {
        const ms = performance.now() - t0;
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), bytes, head: head.toString(), tail: Buffer.concat(last).toString(), ms });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: timed out`)));
    req.on('error', reject);
  });
}

/**
 * What writing a byte costs on this machine (filling and decoding a buffer, fastest of three): the
 * yardstick for YAML responses, whose cost must stay a small multiple of their size.
 */
function byteCost(): number {
  const size = 32 << 20;
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const text = Buffer.alloc(size, 0x20).toString('latin1');
    assert.equal(text.length, size);
    best = Math.min(best, performance.now() - t0);
  }
  return best / size;
}

/** A YAML response costs at most this many times writing its bytes (serving it is some 4 times; 12 s for 72 MB was 120 times). */
const YAML_COST = 25;

describe('objects nested 10,000 levels deep', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', CRDS, { body: DEEP_CRD })).status, 201);
    await until('deeps served', async () => (await s.request('GET', deeps)).status === 200);
  });
  after(() => s.stop());

  it('creates, reads, replaces, patches and applies a custom resource nested 10,000 levels deep', async () => {
    const opts = { timeoutMs: 60_000 };
    // Root and spec: the chain below spec makes the object exactly N levels deep.
    const created = await s.request('POST', `${deeps}?fieldManager=creator`, { body: deep('d', nestText(N - 1)), ...opts });
    assert.equal(created.status, 201, created.text.slice(0, 500));
    assert.equal(chainDepth(created.json.spec), N - 1);
    assert.deepEqual(managers(created.json), ['creator']);
    // The fieldsV1 object, then one per path element (f:spec and an f:a per level below it):
    // managedFields nest deeper than the object.
    assert.equal(chainDepth(fieldsOf(created.json, 'creator')), N + 1);

    const got = await s.request('GET', `${deeps}/d`, opts);
    assert.equal(got.status, 200);
    assert.equal(chainDepth(got.json.spec), N - 1);

    const rv = got.json.metadata.resourceVersion;
    const put = await s.request('PUT', `${deeps}/d?fieldManager=putter`, { body: deep('d', `{"b":${nestText(N - 2)}}`, `,"resourceVersion":"${rv}"`), ...opts });
    assert.equal(put.status, 200, put.text.slice(0, 500));

    const merged = await s.request('PATCH', `${deeps}/d?fieldManager=merger`, { body: `{"spec":{"c":${nestText(N - 2)}}}`, contentType: 'application/merge-patch+json', ...opts });
    assert.equal(merged.status, 200, merged.text.slice(0, 500));

    const patched = await s.request('PATCH', `${deeps}/d?fieldManager=patcher`, { body: `[{"op":"add","path":"/spec/d","value":${nestText(N - 2)}}]`, contentType: 'application/json-patch+json', ...opts });
    assert.equal(patched.status, 200, patched.text.slice(0, 500));

    const applied = await s.request('PATCH', `${deeps}/d?fieldManager=applier`, { body: deep('d', `{"e":${nestText(N - 2)}}`), contentType: 'application/apply-patch+yaml', ...opts });
    assert.equal(applied.status, 200, applied.text.slice(0, 500));

    const final = await s.request('GET', `${deeps}/d`, opts);
    assert.deepEqual(Object.keys(final.json.spec).sort(), ['b', 'c', 'd', 'e']);
    for (const k of ['b', 'c', 'd', 'e']) assert.equal(chainDepth(final.json.spec[k]), N - 2, k);
    // The PUT replaced what the creator had set below spec (it keeps spec itself): each writer owns its own chain.
    assert.deepEqual(managers(final.json).sort(), ['applier', 'creator', 'merger', 'patcher', 'putter']);
    assert.deepEqual(fieldsOf(final.json, 'creator'), { 'f:spec': {} });
    for (const m of ['applier', 'merger', 'patcher', 'putter']) assert.equal(chainDepth(fieldsOf(final.json, m)), N + 1, m);

    const table = await s.request('GET', `${deeps}/d`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io', ...opts });
    assert.equal(table.status, 200);
    assert.ok(table.json.rows[0].cells[1].startsWith('{"b":{"a":{"a":'));
  });

  it('answers GET as YAML for objects nested 10,000 levels deep', async () => {
    // Maps: each level two columns further in, some N² bytes in all (as go-yaml writes them).
    assert.equal((await s.request('POST', deeps, { body: deep('m', nestText(N - 1)), timeoutMs: 60_000 })).status, 201);
    const maps = await streamGet(s, `${deeps}/m`, 'application/yaml');
    assert.equal(maps.status, 200);
    assert.equal(maps.type, 'application/yaml');
    assert.ok(maps.head.startsWith('apiVersion: example.com/v1\nkind: Deep\nmetadata:\n'), maps.head.slice(0, 200));
    assert.ok(maps.tail.endsWith(`\n${' '.repeat(2 * (N - 1))}a: 1\n`), maps.tail.slice(-200));
    assert.ok(maps.bytes > N * N, `${maps.bytes} bytes`);
    // Its cost is that of its bytes.
    const perByte = maps.ms / maps.bytes / byteCost();
    assert.ok(perByte < YAML_COST, `${maps.bytes} bytes of YAML in ${maps.ms.toFixed(0)} ms: ${perByte.toFixed(1)} times the cost of writing them`);

    // Lists: nested sequences share a line.
    const lists = '['.repeat(N - 2) + '1' + ']'.repeat(N - 2);
    assert.equal((await s.request('POST', deeps, { body: deep('l', `{"l":${lists}}`), timeoutMs: 60_000 })).status, 201);
    const yaml = await s.request('GET', `${deeps}/l`, { accept: 'application/yaml', timeoutMs: 60_000 });
    assert.equal(yaml.status, 200);
    assert.ok(yaml.text.endsWith(`spec:\n  l:\n  ${'- '.repeat(N - 2)}1\n`), yaml.text.slice(-100));
  });

  it("refuses 10,001 levels with kube-apiserver's errors", async () => {
    assert.equal((await s.request('POST', deeps, { body: deep('r', '{"x":1}') })).status, 201);
    const tooDeep = nestText(N);
    const unrecognized = `the object provided is unrecognized (must be of type Deep): couldn't get version/kind; json parse error: invalid character '{' exceeded max depth`;

    const create = await s.request('POST', deeps, { body: deep('r2', tooDeep) });
    assert.equal(create.status, 400);
    assert.equal(create.json.message, `${unrecognized} ({"apiVersion":"example.com/v1" ...)`);

    const put = await s.request('PUT', `${deeps}/r`, { body: deep('r', tooDeep) });
    assert.equal(put.status, 400);
    assert.equal(put.json.message, `${unrecognized} ({"apiVersion":"example.com/v1" ...)`);

    for (const [contentType, body] of [
      ['application/merge-patch+json', `{"spec":${nestText(N)}}`],
      ['application/json-patch+json', `[{"op":"add","path":"/spec/x","value":${nestText(N - 1)}}]`],
    ]) {
      const res = await s.request('PATCH', `${deeps}/r`, { body, contentType });
      assert.equal(res.status, 400, contentType);
      assert.equal(res.json.message, 'invalid JSON patch', contentType);
    }

    // A JSON patch whose result nests too deep: what decoding the patched object says.
    assert.equal((await s.request('PATCH', `${deeps}/r`, { body: `{"spec":{"x":${nestText(N - 2)}}}`, contentType: 'application/merge-patch+json' })).status, 200);
    const copied = await s.request('PATCH', `${deeps}/r`, { body: '[{"op":"copy","from":"/spec","path":"/spec/y"}]', contentType: 'application/json-patch+json' });
    assert.equal(copied.status, 422);
    assert.equal(copied.json.reason, 'Invalid');
    // (An empty kind before the name, as NewInvalid prints schema.GroupKind{}.)
    assert.ok(copied.json.message.startsWith(' "" is invalid: patch: Invalid value: "{'), copied.json.message.slice(0, 100));
    assert.ok(copied.json.message.endsWith(`": couldn't get version/kind; json parse error: invalid character '{' exceeded max depth`), copied.json.message.slice(-200));

    // YAML nests block and flow levels 10,000 deep each: the JSON it turns into is decoded as JSON.
    const yaml = `apiVersion: example.com/v1\nkind: Deep\nmetadata:\n  name: r3\nspec: ${'{a: '.repeat(N)}1${'}'.repeat(N)}\n`;
    const fromYaml = await s.request('POST', deeps, { body: yaml, contentType: 'application/yaml', timeoutMs: 30_000 });
    assert.equal(fromYaml.status, 400);
    assert.ok(fromYaml.json.message.startsWith(`${unrecognized} (`), fromYaml.json.message);
    const applied = await s.request('PATCH', `${deeps}/r3?fieldManager=m`, { body: yaml, contentType: 'application/apply-patch+yaml', timeoutMs: 30_000 });
    assert.equal(applied.status, 400);
    assert.equal(applied.json.message, 'error decoding patch: error converting YAML to JSON: yaml: exceeded max depth of 10000');

    // ... and one level less is fine, whether parsed in place or on the YAML thread (a larger body).
    const fits = (name: string, pad: string) => `apiVersion: example.com/v1\nkind: Deep\nmetadata:\n  name: ${name}\n  annotations:\n    pad: "${pad}"\nspec: ${'{a: '.repeat(N - 1)}1${'}'.repeat(N - 1)}\n`;
    for (const [name, pad] of [['r4', ''], ['r5', 'x'.repeat(70_000)]]) {
      const ok = await s.request('POST', deeps, { body: fits(name, pad), contentType: 'application/yaml', timeoutMs: 30_000 });
      assert.equal(ok.status, 201, `${name}: ${ok.text.slice(0, 300)}`);
      assert.equal(chainDepth(ok.json.spec), N - 1);
    }

    // Nothing refused changed the object: it holds what the merge patch above set.
    const after = await s.request('GET', `${deeps}/r`);
    assert.deepEqual(Object.keys(after.json.spec), ['x']);
    assert.equal(chainDepth(after.json.spec.x), N - 2);
    assert.equal((await s.request('GET', '/healthz', { token: null })).status, 200);
  });

  it('keeps managedFields a client wrote with fieldsV1 nested 9,990 levels deep, through every kind of update', async () => {
    // 4 levels (object, metadata, managedFields, entry) and the fieldsV1 value: 9,995 levels in all.
    const entry = `{"manager":"editor","operation":"Update","apiVersion":"v1","time":"2024-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":${nestText(9_990, '{}', 'f:x')}}`;
    const created = await s.request('POST', configMaps, { body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","managedFields":[${entry}]},"data":{"a":"b"}}` });
    assert.equal(created.status, 201, created.text.slice(0, 300));
    assert.equal(chainDepth(fieldsOf(created.json, 'editor')), 9_991);

    const got = await s.request('GET', `${configMaps}/cm`);
    const put = await s.request('PUT', `${configMaps}/cm?fieldManager=putter`, { body: got.text.replace('"data":{"a":"b"}', '"data":{"a":"c"}') });
    assert.equal(put.status, 200, put.text.slice(0, 300));
    const merged = await s.request('PATCH', `${configMaps}/cm?fieldManager=merger`, { body: { data: { b: 'd' } }, contentType: 'application/merge-patch+json' });
    assert.equal(merged.status, 200, merged.text.slice(0, 300));
    const strategic = await s.request('PATCH', `${configMaps}/cm?fieldManager=smp`, { body: { data: { s: 's' } }, contentType: 'application/strategic-merge-patch+json' });
    assert.equal(strategic.status, 200, strategic.text.slice(0, 300));
    const patched = await s.request('PATCH', `${configMaps}/cm?fieldManager=patcher`, { body: [{ op: 'add', path: '/data/c', value: 'e' }], contentType: 'application/json-patch+json' });
    assert.equal(patched.status, 200, patched.text.slice(0, 300));
    const applied = await s.request('PATCH', `${configMaps}/cm?fieldManager=applier`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { z: 'z' } }, contentType: 'application/apply-patch+yaml' });
    assert.equal(applied.status, 200, applied.text.slice(0, 300));

    const final = await s.request('GET', `${configMaps}/cm`);
    assert.deepEqual(final.json.data, { a: 'c', b: 'd', c: 'e', s: 's', z: 'z' });
    assert.ok(managers(final.json).includes('editor'), managers(final.json).join());
    assert.equal(chainDepth(fieldsOf(final.json, 'editor')), 9_991);
    const pb = await s.request('GET', `${configMaps}/cm`, { accept: 'application/vnd.kubernetes.protobuf' });
    assert.equal(pb.status, 200);
  });

  it('answers YAML for managedFields nested thousands of levels deep (reproduction 4)', async () => {
    // 8 entries whose fieldsV1 nest 3,000 levels (some 190 KB): YAML indents each level, some 72 MB.
    const entries = Array.from({ length: 8 }, (_, i) => `{"manager":"m${i}","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":${nestText(3_000, '{}', `f:k${i}`)}}`);
    const res = await s.request('POST', configMaps, { body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"eight","managedFields":[${entries.join(',')}]},"data":{"a":"b"}}` });
    assert.equal(res.status, 201, res.text.slice(0, 300));
    let yaml = await streamGet(s, `${configMaps}/eight`, 'application/yaml');
    const again = await streamGet(s, `${configMaps}/eight`, 'application/yaml');
    if (again.ms < yaml.ms) yaml = again;
    assert.equal(yaml.status, 200);
    assert.ok(yaml.bytes > 8 * 3_000 * 3_000, `${yaml.bytes} bytes`);
    assert.ok(yaml.tail.endsWith('  resourceVersion: "' + res.json.metadata.resourceVersion + '"\n  uid: ' + res.json.metadata.uid + '\n'), yaml.tail.slice(-300));
    // Over a megabyte, the YAML is written on the YAML thread: the same document as in place.
    const entries400 = Array.from({ length: 8 }, (_, i) => `{"manager":"m${i}","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":${nestText(400, '{}', `f:k${i}`)}}`);
    const made = await s.request('POST', configMaps, { body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"eight-400","managedFields":[${entries400.join(',')}]},"data":{"a":"b"}}` });
    assert.equal(made.status, 201, made.text.slice(0, 300));
    const threaded = await s.request('GET', `${configMaps}/eight-400`, { accept: 'application/yaml' });
    assert.equal(threaded.headers['content-type'], 'application/yaml');
    assert.ok(threaded.text.length > 1024 * 1024, `${threaded.text.length} characters`);
    assert.equal(threaded.text, stringifyYaml(made.json));
    // Some 70 MB of YAML (from 200 KB of JSON), at the cost of its bytes.
    const perByte = yaml.ms / yaml.bytes / byteCost();
    assert.ok(perByte < YAML_COST, `${yaml.bytes} bytes of YAML in ${yaml.ms.toFixed(0)} ms: ${perByte.toFixed(1)} times the cost of writing them`);
  });
});
