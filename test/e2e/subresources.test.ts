/** The status and scale subresources of custom resources (catalog sections 11, 12; discovery D-03; kubectl scale). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'noxus.mygroup.example.com' },
  spec: {
    group: 'mygroup.example.com',
    scope: 'Namespaced',
    names: { plural: 'noxus', singular: 'nonenglishnoxu', kind: 'WishIHadChosenNoxu', listKind: 'NoxuItemList' },
    versions: [
      {
        name: 'v1beta1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' } },
      },
    ],
  },
};
const base = '/apis/mygroup.example.com/v1beta1/namespaces/default/noxus';
const noxu = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'mygroup.example.com/v1beta1',
  kind: 'WishIHadChosenNoxu',
  metadata: { name },
  spec: { num: 10, replicas: 3 },
  status: { replicas: 7 },
  ...extra,
});
const merge = { contentType: 'application/merge-patch+json' };

describe('status and scale subresources', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRD })).status, 201);
  });
  after(() => s.stop());

  it('lists noxus, noxus/status and noxus/scale in discovery', async () => {
    const res = (await s.request('GET', '/apis/mygroup.example.com/v1beta1')).json.resources;
    assert.deepEqual(res.map((r: any) => r.name), ['noxus', 'noxus/status', 'noxus/scale']);
    assert.deepEqual(res[1], { name: 'noxus/status', singularName: '', namespaced: true, kind: 'WishIHadChosenNoxu', verbs: ['get', 'patch', 'update'] });
    assert.deepEqual(res[2], { name: 'noxus/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
  });

  it('drops status on create, changes only status through /status, ignores status on the main endpoint', async () => {
    const created = (await s.request('POST', base, { body: noxu('foo') })).json;
    assert.equal(created.status, undefined);
    const viaStatus = await s.request('PUT', `${base}/foo/status`, { body: { ...created, spec: { num: 20, replicas: 3 }, status: { num: 20 } } });
    assert.equal(viaStatus.status, 200, viaStatus.text);
    assert.equal(viaStatus.json.spec.num, 10);
    assert.equal(viaStatus.json.status.num, 20);
    assert.equal(viaStatus.json.metadata.generation, 1, 'status writes leave generation alone');
    const viaMain = await s.request('PUT', `${base}/foo`, { body: { ...viaStatus.json, spec: { num: 40, replicas: 3 }, status: { num: 40 } } });
    assert.equal(viaMain.json.spec.num, 40);
    assert.equal(viaMain.json.status.num, 20);
    assert.equal(viaMain.json.metadata.generation, 2);
    const patched = await s.request('PATCH', `${base}/foo/status`, { body: { spec: { num: 999 }, status: { num: 999 } }, ...merge });
    assert.equal(patched.json.status.num, 999);
    assert.equal(patched.json.spec.num, 40);
    const whole = await s.request('GET', `${base}/foo/status`);
    assert.equal(whole.json.kind, 'WishIHadChosenNoxu');
    assert.equal(whole.json.spec.num, 40);
    const smp = await s.request('PATCH', `${base}/foo/status`, { body: {}, contentType: 'application/strategic-merge-patch+json' });
    assert.equal(smp.status, 415);
    const missing = await s.request('PUT', `${base}/nothere/status`, { body: noxu('nothere') });
    assert.equal(missing.status, 404);
    const post = await s.request('POST', `${base}/foo/status`, { body: noxu('foo') });
    assert.equal(post.status, 405);
    assert.equal(post.json.message, 'create is not supported on resources of kind "noxus.mygroup.example.com"');
  });

  it('reads and writes replicas through /scale', async () => {
    await s.request('PATCH', `${base}/foo/status`, { body: { status: { labelSelector: 'bar', replicas: 7 } }, ...merge });
    const scale = await s.request('GET', `${base}/foo/scale`);
    assert.equal(scale.status, 200);
    const obj = (await s.request('GET', `${base}/foo`)).json;
    assert.deepEqual(scale.json, {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'foo', namespace: 'default', uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion, creationTimestamp: obj.metadata.creationTimestamp },
      spec: { replicas: 3 },
      status: { replicas: 7, selector: 'bar' },
    });
    const put = await s.request('PUT', `${base}/foo/scale`, { body: { ...scale.json, spec: { replicas: 5 }, status: { replicas: 1, selector: 'baz' } } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.spec.replicas, 5);
    assert.equal(put.json.status.selector, 'bar');
    const after = (await s.request('GET', `${base}/foo`)).json;
    assert.equal(after.spec.replicas, 5);
    assert.equal(after.metadata.generation, obj.metadata.generation + 1, 'a scale write is a spec change');
    const stale = await s.request('PUT', `${base}/foo/scale`, { body: scale.json });
    assert.equal(stale.status, 409, 'the Scale resourceVersion is a precondition');
    const patched = await s.request('PATCH', `${base}/foo/scale`, { body: { spec: { replicas: 7 }, status: { replicas: 9 } }, ...merge });
    assert.equal(patched.json.spec.replicas, 7);
    assert.equal(patched.json.status.replicas, 7, 'status is not writable through /scale');
    const noop = await s.request('PATCH', `${base}/foo/scale`, { body: {}, ...merge });
    assert.equal(noop.json.metadata.resourceVersion, patched.json.metadata.resourceVersion);
    const negative = await s.request('PATCH', `${base}/foo/scale`, { body: { spec: { replicas: -1 } }, ...merge });
    assert.equal(negative.status, 422);
    // ValidateScaleSpec of the custom resource, on the path as the CRD names it.
    assert.equal(negative.json.message, 'WishIHadChosenNoxu.mygroup.example.com "foo" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer');
    const fraction = await s.request('PATCH', `${base}/foo/scale`, { body: { spec: { replicas: 1.5 } }, ...merge });
    assert.equal(fraction.status, 400);
  });

  it('checks replica fields on every write and reports a missing spec replicas field', async () => {
    const neg = await s.request('POST', base, { body: noxu('neg', { spec: { replicas: -1 } }) });
    assert.equal(neg.status, 422);
    assert.equal(neg.json.message, 'WishIHadChosenNoxu.mygroup.example.com "neg" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer');
    const huge = await s.request('POST', base, { body: `{"apiVersion":"mygroup.example.com/v1beta1","kind":"WishIHadChosenNoxu","metadata":{"name":"huge"},"spec":{"replicas":9223372036854775807}}` });
    assert.equal(huge.status, 422);
    assert.match(huge.json.message, /\.spec\.replicas: Invalid value: 9223372036854775807: should be less than or equal to 2147483647/);
    await s.request('POST', base, { body: noxu('bare', { spec: { num: 1 } }) });
    const missing = await s.request('GET', `${base}/bare/scale`);
    assert.equal(missing.status, 400);
    assert.equal(missing.json.message, 'the spec replicas field ".spec.replicas" does not exist');
  });

  it('applies through /scale, recording the scaler with subresource "scale"', async () => {
    const applied = await s.request('PATCH', `${base}/foo/scale?fieldManager=scaler&force=true`, {
      body: 'apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: foo\nspec:\n  replicas: 6\n',
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(applied.status, 200, applied.text);
    assert.equal(applied.json.kind, 'Scale');
    assert.equal(applied.json.spec.replicas, 6);
    const obj = (await s.request('GET', `${base}/foo`)).json;
    assert.equal(obj.spec.replicas, 6);
    const entry = obj.metadata.managedFields.find((m: any) => m.manager === 'scaler');
    assert.equal(entry.operation, 'Apply');
    assert.equal(entry.subresource, 'scale');
    assert.deepEqual(entry.fieldsV1['f:spec']['f:replicas'], {}, 'the scaler owns the replicas');
    const wrongKind = await s.request('PATCH', `${base}/foo/scale?fieldManager=scaler`, { body: 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: foo\n', contentType: 'application/apply-patch+yaml' });
    assert.equal(wrongKind.status, 400);
  });

  it('scales with kubectl', async () => {
    const r = await s.kubectl(['scale', '--replicas=4', 'noxus/foo']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /scaled/);
    assert.equal((await s.request('GET', `${base}/foo`)).json.spec.replicas, 4);
  });
});
