/** Structural schemas on custom resources: validation messages, pruning, fieldValidation, defaulting, CEL, ratcheting. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, until, watchEvents, type TestServer } from './harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';

/** The seeds' CronTab with validation and defaulting. */
const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'crontabs.stable.example.com' },
  spec: {
    group: 'stable.example.com',
    scope: 'Namespaced',
    names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', shortNames: ['ct'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$', default: '5 0 * * *' },
                  image: { type: 'string' },
                  replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
                  minReplicas: { type: 'integer' },
                },
                'x-kubernetes-validations': [{ rule: '!has(self.minReplicas) || self.minReplicas <= self.replicas', message: 'minReplicas must not exceed replicas' }],
              },
            },
          },
        },
      },
    ],
  },
};
const ct = (name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name }, spec, ...extra });

describe('structural schemas', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    const res = await s.request('POST', CRDS, { body: CRD });
    assert.equal(res.status, 201, res.text);
  });
  after(() => s.stop());

  it('rejects invalid objects with upstream messages', async () => {
    const res = await s.request('POST', CT, { body: ct('my-new-cron-object', { cronSpec: '* * * *', image: 'my-awesome-cron-image', replicas: 15 }) });
    assert.equal(res.status, 422);
    assert.equal(
      res.json.message,
      `CronTab.stable.example.com "my-new-cron-object" is invalid: [spec.cronSpec: Invalid value: "* * * *": spec.cronSpec in body should match '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$', spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10]`,
    );
    assert.deepEqual(res.json.details.causes.map((c: any) => [c.reason, c.field]), [
      ['FieldValueInvalid', 'spec.cronSpec'],
      ['FieldValueInvalid', 'spec.replicas'],
    ]);
    const typed = await s.request('POST', CT, { body: ct('typed', { replicas: 'three' }) });
    assert.equal(typed.status, 422);
    assert.match(typed.json.message, /spec\.replicas: Invalid value: "string": spec\.replicas in body must be of type integer: "string"/);
  });

  it('defaults missing fields on create', async () => {
    const res = await s.request('POST', CT, { body: ct('defaulted', { image: 'img' }) });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.json.spec, { cronSpec: '5 0 * * *', image: 'img', replicas: 1 });
  });

  it('prunes unknown fields, warning by default, failing with fieldValidation=Strict, silent with Ignore', async () => {
    const warned = await s.request('POST', CT, { body: ct('pruned', { image: 'img', unknown1: 'x' }, { extra: 1 }) });
    assert.equal(warned.status, 201, warned.text);
    assert.equal(warned.json.spec.unknown1, undefined);
    assert.equal(warned.json.extra, undefined);
    assert.match(String(warned.headers.warning), /unknown field \\"spec\.unknown1\\"/);
    const strict = await s.request('POST', `${CT}?fieldValidation=Strict`, { body: '{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"strict"},"spec":{"image":"a","image":"b","unknown1":1}}' });
    assert.equal(strict.status, 400);
    assert.match(strict.json.message, /^strict decoding error: /);
    assert.match(strict.json.message, /duplicate field "image"/);
    assert.match(strict.json.message, /unknown field "spec\.unknown1"/);
    const ignored = await s.request('POST', `${CT}?fieldValidation=Ignore`, { body: ct('ignored', { image: 'img', unknown1: 'x' }) });
    assert.equal(ignored.status, 201);
    assert.equal(ignored.headers.warning, undefined);
    const bad = await s.request('POST', `${CT}?fieldValidation=Sometimes`, { body: ct('x', {}) });
    assert.equal(bad.status, 422);
  });

  it('evaluates CEL rules', async () => {
    const res = await s.request('POST', CT, { body: ct('cel', { image: 'img', replicas: 2, minReplicas: 5 }) });
    assert.equal(res.status, 422);
    assert.match(res.json.message, /spec: Invalid value: (?:"object": )?minReplicas must not exceed replicas/);
    const bad = structuredClone(CRD) as any;
    bad.metadata.name = 'badrules.stable.example.com';
    bad.spec.names = { plural: 'badrules', kind: 'BadRule' };
    bad.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [{ rule: 'self.nosuchfield > 1' }];
    const rejected = await s.request('POST', CRDS, { body: bad });
    assert.equal(rejected.status, 422);
    assert.match(rejected.json.message, /undefined field 'nosuchfield'/);
  });

  it('refuses a non-structural schema in v1 and reports it in a condition for v1beta1', async () => {
    const v1 = structuredClone(CRD) as any;
    v1.metadata.name = 'loose.stable.example.com';
    v1.spec.names = { plural: 'loose', kind: 'Loose' };
    v1.spec.versions[0].schema.openAPIV3Schema = { type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } };
    const res = await s.request('POST', CRDS, { body: v1 });
    assert.equal(res.status, 422);
    assert.match(res.json.message, /spec\.validation\.openAPIV3Schema\.properties\[spec\]\.type: Required value: must not be empty for specified object fields/);
    const beta = {
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'loose.stable.example.com' },
      spec: { group: 'stable.example.com', version: 'v1', scope: 'Namespaced', names: { plural: 'loose', kind: 'Loose' }, validation: { openAPIV3Schema: v1.spec.versions[0].schema.openAPIV3Schema } },
    };
    const accepted = await s.request('POST', '/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions', { body: beta });
    assert.equal(accepted.status, 201, accepted.text);
    const cond = accepted.json.status.conditions.find((c: any) => c.type === 'NonStructuralSchema');
    assert.equal(cond?.status, 'True');
    assert.equal(cond.reason, 'Violations');
    // nonstructuralschema's calculateCondition: preserveUnknownFields (true for a v1beta1 CRD without the
    // field), then each version's schema under spec.versions[i].
    assert.equal(
      cond.message,
      '[spec.preserveUnknownFields: Invalid value: true: must be false, spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields]',
    );
  });

  it('ratchets: an unchanged invalid field does not fail an update; defaults apply on read', async () => {
    await s.request('POST', CT, { body: ct('ratchet', { image: 'img', replicas: 8 }) });
    const crd = (await s.request('GET', `${CRDS}/crontabs.stable.example.com`)).json;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas.maximum = 5;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.image.default = 'default-image';
    assert.equal((await s.request('PUT', `${CRDS}/crontabs.stable.example.com`, { body: crd })).status, 200);
    const ok = await s.request('PATCH', `${CT}/ratchet`, { body: { metadata: { labels: { a: 'b' } }, spec: { cronSpec: '1 * * * *' } }, contentType: 'application/merge-patch+json' });
    assert.equal(ok.status, 200, ok.text);
    const worse = await s.request('PATCH', `${CT}/ratchet`, { body: { spec: { replicas: 9 } }, contentType: 'application/merge-patch+json' });
    assert.equal(worse.status, 422);
    await s.request('POST', CT, { body: ct('noimage', { replicas: 2 }) });
    const read = await s.request('GET', `${CT}/noimage`);
    assert.equal(read.json.spec.image, 'default-image', 'a default added to the schema shows on read');
  });

  // The storage codec defaults what it decodes (unstructuredDefaulter): an object stored before a default
  // was added reads with it, its resourceVersion unchanged; writing it back changes no spec, so no generation.
  it('defaults objects stored before the default on get, list and watch; persisting it keeps the generation', async () => {
    const created = await s.request('POST', CT, { body: ct('stored-before', { image: 'img' }) });
    assert.equal(created.status, 201, created.text);
    const rv = created.json.metadata.resourceVersion;
    assert.equal(created.json.spec.suspend, undefined);
    const crd = (await s.request('GET', `${CRDS}/crontabs.stable.example.com`)).json;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.suspend = { type: 'boolean', default: false };
    assert.equal((await s.request('PUT', `${CRDS}/crontabs.stable.example.com`, { body: crd })).status, 200);
    let got: any;
    await until('the new schema is served', async () => {
      got = (await s.request('GET', `${CT}/stored-before`)).json;
      return got.spec.suspend === false;
    });
    assert.equal(got.metadata.resourceVersion, rv);
    assert.equal(got.metadata.generation, 1);
    const listed = (await s.request('GET', CT)).json.items.find((o: any) => o.metadata.name === 'stored-before');
    assert.equal(listed.spec.suspend, false);
    assert.equal(listed.metadata.resourceVersion, rv);
    const w = watchEvents(s.kapi, `${CT}?watch=1&resourceVersion=0&fieldSelector=metadata.name%3Dstored-before`, 1);
    const [added] = await w.events;
    assert.equal(added.type, 'ADDED');
    assert.equal(added.object.spec.suspend, false);
    assert.equal(added.object.metadata.resourceVersion, rv);
    // A client writes back what it read (the default included) with a label, and another without the field.
    const put = await s.request('PUT', `${CT}/stored-before`, { body: { ...got, metadata: { ...got.metadata, labels: { a: 'b' } } } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.metadata.generation, 1);
    const { suspend: _, ...spec } = put.json.spec;
    const without = await s.request('PUT', `${CT}/stored-before`, { body: { ...put.json, spec } });
    assert.equal(without.status, 200, without.text);
    assert.equal(without.json.spec.suspend, false);
    assert.equal(without.json.metadata.generation, 1);
    const changed = await s.request('PATCH', `${CT}/stored-before`, { body: { spec: { suspend: true } }, contentType: 'application/merge-patch+json' });
    assert.equal(changed.json.metadata.generation, 2);
  });
});

describe('the seeds walkthrough of validation and defaulting with kubectl', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', CRDS, { body: CRD })).status, 201);
  });
  after(() => s.stop());

  it('refuses an invalid CronTab and defaults a valid one', async () => {
    const invalid = `apiVersion: "stable.example.com/v1"\nkind: CronTab\nmetadata:\n  name: my-new-cron-object\nspec:\n  cronSpec: "* * * *"\n  image: my-awesome-cron-image\n  replicas: 15\n`;
    const refused = await s.kubectl(['apply', '-f', '-'], { input: invalid });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /The CronTab "my-new-cron-object" is invalid/);
    assert.match(refused.stderr, /spec\.replicas: Invalid value: 15: spec\.replicas in body should be less than or equal to 10/);
    const valid = `apiVersion: "stable.example.com/v1"\nkind: CronTab\nmetadata:\n  name: my-new-cron-object\nspec:\n  image: my-awesome-cron-image\n`;
    const created = await s.kubectl(['apply', '-f', '-'], { input: valid });
    assert.equal(created.code, 0, created.stderr);
    const got = JSON.parse((await s.kubectl(['get', 'crontab', 'my-new-cron-object', '-o', 'json'])).stdout);
    assert.equal(got.spec.cronSpec, '5 0 * * *');
    assert.equal(got.spec.replicas, 1);
  });
});
