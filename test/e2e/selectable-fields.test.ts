/**
 * A CRD version's selectableFields (GA in 1.32): field selectors on those
 * fields filter list and watch (absent fields compare as ""), other labels stay
 * refused with upstream's message, and the published schemas list them as
 * x-kubernetes-selectable-fields. The Shirt example of the Kubernetes docs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, until, watchEvents, type TestServer } from './harness.js';

const SHIRTS = '/apis/stable.example.com/v1/namespaces/default/shirts';
const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'shirts.stable.example.com' },
  spec: {
    group: 'stable.example.com',
    scope: 'Namespaced',
    names: { plural: 'shirts', singular: 'shirt', kind: 'Shirt' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { color: { type: 'string' }, size: { type: 'string' }, quantity: { type: 'integer' }, branded: { type: 'boolean' } } } } } },
        selectableFields: [{ jsonPath: '.spec.color' }, { jsonPath: '.spec.size' }, { jsonPath: '.spec.quantity' }, { jsonPath: '.spec.branded' }],
      },
    ],
  },
};

const shirt = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'stable.example.com/v1', kind: 'Shirt', metadata: { name }, spec });

describe('selectableFields', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRD })).status, 201);
    for (const [name, spec] of [
      ['example1', { color: 'blue', size: 'S', quantity: 2, branded: true }],
      ['example2', { color: 'blue', size: 'M', quantity: 5 }],
      ['example3', { color: 'green', size: 'M' }],
    ] as const) {
      assert.equal((await s.request('POST', SHIRTS, { body: shirt(name, spec) })).status, 201);
    }
  });
  after(() => s.stop());

  it('filters lists on the selectable fields, strings, integers and booleans alike', async () => {
    const names = async (selector: string) => {
      const res = await s.request('GET', `${SHIRTS}?fieldSelector=${encodeURIComponent(selector)}`);
      assert.equal(res.status, 200, res.text);
      return res.json.items.map((i: any) => i.metadata.name);
    };
    assert.deepEqual(await names('spec.color=blue'), ['example1', 'example2']);
    assert.deepEqual(await names('spec.color=blue,spec.size=M'), ['example2']);
    assert.deepEqual(await names('spec.color!=blue'), ['example3']);
    assert.deepEqual(await names('spec.quantity=5'), ['example2']);
    assert.deepEqual(await names('spec.branded=true'), ['example1']);
    assert.deepEqual(await names('spec.quantity='), ['example3'], 'an absent field is ""');
    const kubectl = await s.kubectl(['get', 'shirts', '--field-selector', 'spec.color=green', '-o', 'name']);
    assert.equal(kubectl.stdout.trim(), 'shirt.stable.example.com/example3', kubectl.stderr);
  });

  it('reads a built-in\'s absent boolean and integer field labels as their Go zero values', async () => {
    // kube-controller-manager and the e2e framework list nodes with spec.unschedulable=false: a Node that does not say it is schedulable.
    assert.equal((await s.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'plain' } } })).status, 201);
    assert.equal((await s.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'cordoned' }, spec: { unschedulable: true } } })).status, 201);
    const nodes = async (selector: string) => (await s.request('GET', `/api/v1/nodes?fieldSelector=${encodeURIComponent(selector)}`)).json.items.map((i: any) => i.metadata.name);
    assert.deepEqual(await nodes('spec.unschedulable=false'), ['plain']);
    assert.deepEqual(await nodes('spec.unschedulable!=false'), ['cordoned']);
    const rc = { metadata: { name: 'rc' }, spec: { selector: { a: 'b' }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } };
    assert.equal((await s.request('POST', '/api/v1/namespaces/default/replicationcontrollers', { body: rc })).status, 201);
    assert.deepEqual((await s.request('GET', '/api/v1/namespaces/default/replicationcontrollers?fieldSelector=status.replicas%3D0')).json.items.map((i: any) => i.metadata.name), ['rc']);
  });

  it('filters watches, and refuses fields that are not selectable', async () => {
    const w = watchEvents(s.kapi, `${SHIRTS}?watch=true&fieldSelector=spec.color%3Dgreen`, 2, 5000);
    assert.equal(await w.status, 200);
    await s.request('PATCH', `${SHIRTS}/example2`, { body: { spec: { color: 'green' } }, contentType: 'application/merge-patch+json' });
    const events = await w.events;
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'example3'], ['ADDED', 'example2']]);
    const bad = await s.request('GET', `${SHIRTS}?fieldSelector=spec.fabric%3Dcotton`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json.message, 'field label not supported: spec.fabric');
  });

  it('publishes them as x-kubernetes-selectable-fields', async () => {
    const expected = [{ fieldPath: 'spec.color' }, { fieldPath: 'spec.size' }, { fieldPath: 'spec.quantity' }, { fieldPath: 'spec.branded' }];
    const v3 = await s.request('GET', '/openapi/v3/apis/stable.example.com/v1');
    assert.deepEqual(v3.json.components.schemas['com.example.stable.v1.Shirt']['x-kubernetes-selectable-fields'], expected);
    const v2 = await s.request('GET', '/openapi/v2');
    assert.deepEqual(v2.json.definitions['com.example.stable.v1.Shirt']['x-kubernetes-selectable-fields'], expected);
  });
});

// ValidateCustomResourceSelectableFields: simple paths to string, boolean or integer fields outside
// metadata, each once, at most 8; a set already over the limit may stay unchanged on update.
describe('selectableFields validation', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  const crdWith = (name: string, fields: Array<{ jsonPath: string }>, props: Record<string, unknown> = {}) => {
    const c = structuredClone(CRD) as any;
    c.metadata.name = `${name}s.stable.example.com`;
    c.spec.names = { plural: `${name}s`, kind: name[0].toUpperCase() + name.slice(1) };
    Object.assign(c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties, props);
    c.spec.versions[0].selectableFields = fields;
    return c;
  };

  it('refuses invalid selectable fields with upstream\'s messages', async () => {
    const fields = [
      { jsonPath: '.spec.color' },
      { jsonPath: '.spec.color' },
      { jsonPath: '.spec.nosuch' },
      { jsonPath: '.spec.obj' },
      { jsonPath: '.spec.list[0]' },
      { jsonPath: '' },
    ];
    const res = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: crdWith('pant', fields, { obj: { type: 'object' }, list: { type: 'array', items: { type: 'string' } } }),
    });
    assert.equal(res.status, 422);
    // The internal form (v1 → apiextensions conversion) moves one version's fields to the top level.
    const p = 'spec.selectableFields';
    assert.deepEqual(
      res.json.details.causes.map((c: any) => `${c.field}: ${c.message}`),
      [
        `${p}[1].jsonPath: Duplicate value: ".spec.color"`,
        `${p}[2].jsonPath: Invalid value: ".spec.nosuch": is an invalid path: does not refer to a valid field`,
        `${p}[3].jsonPath: Invalid value: ".spec.obj": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.`,
        `${p}[4].jsonPath: Invalid value: ".spec.list[0]": is an invalid path: array notation is not allowed`,
        `${p}[5].jsonPath: Required value`,
      ],
    );
  });

  it('allows at most 8, unless a stored set over the limit stays unchanged', async () => {
    const props = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`f${i}`, { type: 'string' }]));
    const nine = Array.from({ length: 9 }, (_, i) => ({ jsonPath: `.spec.f${i}` }));
    const res = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crdWith('sock', nine, props) });
    assert.equal(res.status, 422);
    assert.equal(res.json.message, 'CustomResourceDefinition.apiextensions.k8s.io "socks.stable.example.com" is invalid: spec.selectableFields: Too many: 9: must have at most 8 items');
    const ok = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crdWith('sock', nine.slice(0, 8), props) });
    assert.equal(ok.status, 201, ok.text);
    // A CRD stored with nine (as an older server allowed) keeps them through an update that leaves them be.
    const key = '/registry/apiextensions.k8s.io/customresourcedefinitions/socks.stable.example.com';
    const kv = (await s.kapi.storage.get(key))!;
    const stored = JSON.parse(kv.value);
    stored.spec.versions[0].selectableFields = nine;
    await s.kapi.storage.update(key, JSON.stringify(stored), kv.modRevision);
    const url = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/socks.stable.example.com';
    let cur: any;
    await until('the stored CRD is read', async () => ((cur = (await s.request('GET', url)).json), cur.spec.versions[0].selectableFields.length === 9));
    const labelled = await s.request('PUT', url, { body: { ...cur, metadata: { ...cur.metadata, labels: { a: 'b' } } } });
    assert.equal(labelled.status, 200, labelled.text);
    const changed = structuredClone(labelled.json);
    changed.spec.versions[0].selectableFields[8] = { jsonPath: '.spec.color' };
    assert.equal((await s.request('PUT', url, { body: changed })).status, 422);
  });
});
