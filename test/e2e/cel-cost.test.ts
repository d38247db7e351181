/**
 * The static cost limits of x-kubernetes-validations rules on a real server (issue #39): a CRD
 * whose rule is estimated over StaticEstimatedCostLimit is refused at create and update with
 * kube-apiserver's 422 (Forbidden causes, upstream's messages); the same rule with maxItems and
 * maxLength is accepted and enforced.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, until, type TestServer } from './harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const RULE = "self.items.all(x, self.items.all(y, self.items.all(z, x+y+z != 'zzz')))";
const TAIL = ' (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';
const RULE_PATH = 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule';
const RULE_COST = `estimated rule cost exceeds budget by factor of more than 100x${TAIL}`;
const CONTRIBUTED = 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema';
const TOTAL = `x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x${TAIL}`;

/** A CRD whose spec.items is a list of strings, with the cubic rule on spec. */
function crd(name: string, bounds: { maxItems?: number; maxLength?: number } = {}) {
  const items: Record<string, unknown> = { type: 'string' };
  if (bounds.maxLength !== undefined) items.maxLength = bounds.maxLength;
  const list: Record<string, unknown> = { type: 'array', items };
  if (bounds.maxItems !== undefined) list.maxItems = bounds.maxItems;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${name}s.cost.example.com` },
    spec: {
      group: 'cost.example.com',
      scope: 'Namespaced',
      names: { plural: `${name}s`, singular: name, kind: name[0].toUpperCase() + name.slice(1) },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { items: list }, 'x-kubernetes-validations': [{ rule: RULE }] } } } },
        },
      ],
    },
  };
}

/** The 422 kube-apiserver answers for the unbounded rule. */
function assertRefused(res: { status: number; json: any; text: string }, name: string): void {
  assert.equal(res.status, 422, res.text);
  assert.equal(res.json.kind, 'Status');
  assert.equal(res.json.status, 'Failure');
  assert.equal(res.json.reason, 'Invalid');
  assert.equal(res.json.code, 422);
  assert.deepEqual(res.json.details.group, 'apiextensions.k8s.io');
  assert.deepEqual(res.json.details.kind, 'CustomResourceDefinition');
  assert.deepEqual(res.json.details.name, name);
  assert.equal(
    res.json.message,
    `CustomResourceDefinition.apiextensions.k8s.io "${name}" is invalid: [` +
      `${RULE_PATH}: Forbidden: ${RULE_COST}, ` +
      `${RULE_PATH}: Forbidden: ${CONTRIBUTED}, ` +
      `spec.validation.openAPIV3Schema: Forbidden: ${TOTAL}]`,
  );
  assert.deepEqual(res.json.details.causes, [
    { reason: 'FieldValueForbidden', message: `Forbidden: ${RULE_COST}`, field: RULE_PATH },
    { reason: 'FieldValueForbidden', message: `Forbidden: ${CONTRIBUTED}`, field: RULE_PATH },
    { reason: 'FieldValueForbidden', message: `Forbidden: ${TOTAL}`, field: 'spec.validation.openAPIV3Schema' },
  ]);
}

describe('CEL cost limits on CRDs', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('refuses a rule whose estimated cost is over the limit, creating nothing', async () => {
    const res = await s.request('POST', CRDS, { body: crd('widget') });
    assertRefused(res, 'widgets.cost.example.com');
    assert.equal((await s.request('GET', `${CRDS}/widgets.cost.example.com`)).status, 404);
    // a dry run answers the same
    assertRefused(await s.request('POST', `${CRDS}?dryRun=All`, { body: crd('widget') }), 'widgets.cost.example.com');
  });

  it('accepts the rule with maxItems and maxLength, and enforces it', async () => {
    const res = await s.request('POST', CRDS, { body: crd('gadget', { maxItems: 10, maxLength: 10 }) });
    assert.equal(res.status, 201, res.text);
    const path = '/apis/cost.example.com/v1/namespaces/default/gadgets';
    const obj = (name: string, items: string[]) => ({ apiVersion: 'cost.example.com/v1', kind: 'Gadget', metadata: { name }, spec: { items } });
    let ok: { status: number; text: string } = { status: 0, text: '' };
    await until('gadgets are served', async () => (ok = await s.request('POST', path, { body: obj('fine', ['a', 'b']) })).status !== 404);
    assert.equal(ok.status, 201, ok.text);
    const bad = await s.request('POST', path, { body: obj('zzz', ['a', 'z']) });
    assert.equal(bad.status, 422, bad.text);
    assert.equal((bad as any).json.reason, 'Invalid');
    assert.match((bad as any).json.message, /^Gadget\.cost\.example\.com "zzz" is invalid: spec: Invalid value: (?:"object": )?failed rule: self\.items\.all\(x, /);
  });

  it('refuses an update that lifts the bounds', async () => {
    const path = `${CRDS}/gadgets.cost.example.com`;
    const cur = (await s.request('GET', path)).json;
    delete cur.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.items.maxItems;
    delete cur.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.items.items.maxLength;
    const res = await s.request('PUT', path, { body: cur });
    assertRefused(res, 'gadgets.cost.example.com');
    // the stored CRD is unchanged and can still be changed otherwise
    const again = (await s.request('GET', path)).json;
    assert.equal(again.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.items.maxItems, 10);
    again.metadata.labels = { team: 'a' };
    const labelled = await s.request('PUT', path, { body: again });
    assert.equal(labelled.status, 200, labelled.text);
  });
});
