/** Server-side apply, managed fields and dry run, over HTTP and with kubectl. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CRONTAB_CRD, startTestServer, type TestServer } from './harness.js';

const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';
const APPLY = 'application/apply-patch+yaml';
const doc = (image: string, replicas = 1) => `apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: applied\nspec:\n  image: ${image}\n  replicas: ${replicas}\n`;

describe('server-side apply', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTAB_CRD })).status, 201);
  });
  after(() => s.stop());

  it('creates with apply, records managers, and reports a conflict with another manager', async () => {
    const created = await s.request('PATCH', `${CT}/applied?fieldManager=alice`, { body: doc('one'), contentType: APPLY });
    assert.equal(created.status, 201, created.text);
    const mf = created.json.metadata.managedFields;
    assert.equal(mf.length, 1);
    assert.equal(mf[0].manager, 'alice');
    assert.equal(mf[0].operation, 'Apply');
    assert.equal(mf[0].apiVersion, 'stable.example.com/v1');
    assert.equal(mf[0].fieldsType, 'FieldsV1');
    assert.deepEqual(mf[0].fieldsV1, { 'f:spec': { 'f:image': {}, 'f:replicas': {} } });
    const bob = await s.request('PATCH', `${CT}/applied?fieldManager=bob`, { body: { spec: { replicas: 5 } }, contentType: 'application/merge-patch+json' });
    assert.equal(bob.status, 200);
    assert.deepEqual(bob.json.metadata.managedFields.map((m: any) => [m.manager, m.operation]), [['alice', 'Apply'], ['bob', 'Update']]);
    const conflict = await s.request('PATCH', `${CT}/applied?fieldManager=alice`, { body: doc('one', 1), contentType: APPLY });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.json.reason, 'Conflict');
    assert.equal(conflict.json.message, 'Apply failed with 1 conflict: conflict with "bob" using stable.example.com/v1: .spec.replicas');
    assert.deepEqual(conflict.json.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "bob" using stable.example.com/v1', field: '.spec.replicas' }]);
    const forced = await s.request('PATCH', `${CT}/applied?fieldManager=alice&force=true`, { body: doc('one', 1), contentType: APPLY });
    assert.equal(forced.status, 200, forced.text);
    assert.equal(forced.json.spec.replicas, 1);
  });

  // Built-in kinds take their merge type from the Go types: containers are a list keyed by name, so two
  // managers each own their own container (k:{"name":...}) and neither conflicts with the other.
  it('merges keyed lists of built-in kinds between managers', async () => {
    const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';
    const deploy = (container: string, image: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: shared\nspec:\n  selector:\n    matchLabels: {app: shared}\n  template:\n    metadata:\n      labels: {app: shared}\n    spec:\n      containers:\n      - name: ${container}\n        image: ${image}\n`;
    assert.equal((await s.request('PATCH', `${DEPLOY}/shared?fieldManager=alice`, { body: deploy('a', 'nginx'), contentType: APPLY })).status, 201);
    const bob = await s.request('PATCH', `${DEPLOY}/shared?fieldManager=bob`, { body: deploy('b', 'busybox'), contentType: APPLY });
    assert.equal(bob.status, 200, bob.text);
    assert.deepEqual(bob.json.spec.template.spec.containers.map((c: any) => c.name), ['a', 'b']);
    const bobs = bob.json.metadata.managedFields.find((m: any) => m.manager === 'bob').fieldsV1;
    assert.deepEqual(Object.keys(bobs['f:spec']['f:template']['f:spec']['f:containers']), ['k:{"name":"b"}']);
    // A change to alice's container by bob is a conflict on that container's field only.
    const clash = await s.request('PATCH', `${DEPLOY}/shared?fieldManager=bob`, { body: deploy('a', 'httpd'), contentType: APPLY });
    assert.equal(clash.status, 409);
    assert.equal(clash.json.details.causes[0].field, '.spec.template.spec.containers[name="a"].image');
  });

  it('removes a field dropped from the applied configuration when the manager owned it alone', async () => {
    const res = await s.request('PATCH', `${CT}/applied?fieldManager=alice`, { body: 'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: applied\nspec:\n  image: one\n', contentType: APPLY });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.spec.replicas, undefined);
    assert.equal(res.json.spec.image, 'one');
  });

  it('checks the patch options', async () => {
    const noManager = await s.request('PATCH', `${CT}/applied`, { body: doc('x'), contentType: APPLY });
    assert.equal(noManager.status, 422);
    assert.equal(noManager.json.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    const force = await s.request('PATCH', `${CT}/applied?force=true`, { body: {}, contentType: 'application/merge-patch+json' });
    assert.equal(force.status, 422);
    assert.match(force.json.message, /force: Forbidden: may not be specified for non-apply patch/);
  });

  it('runs the whole chain on dry run and stores nothing', async () => {
    // The server registers the CRD's APIService in the background: once it has, nothing else writes.
    for (let i = 0; i < 200; i++) {
      const a = await s.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.stable.example.com');
      if (a.json?.status?.conditions?.[0]?.reason === 'Local') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const before = (await s.request('GET', `${CT}/applied`)).json;
    const rv = Number(await s.kapi.storage.currentRevision());
    const dry = await s.request('PATCH', `${CT}/applied?fieldManager=carol&dryRun=All`, { body: { spec: { image: 'dry' } }, contentType: 'application/merge-patch+json' });
    assert.equal(dry.status, 200);
    assert.equal(dry.json.spec.image, 'dry');
    const created = await s.request('PATCH', `${CT}/ghost?fieldManager=carol&dryRun=All`, { body: doc('g').replace('name: applied', 'name: ghost'), contentType: APPLY });
    assert.equal(created.status, 201, created.text);
    const del = await s.request('DELETE', `${CT}/applied?dryRun=All`);
    assert.equal(del.status, 200);
    assert.deepEqual((await s.request('GET', `${CT}/applied`)).json, before);
    assert.equal((await s.request('GET', `${CT}/ghost`)).status, 404);
    assert.equal(Number(await s.kapi.storage.currentRevision()), rv, 'no revision consumed');
  });

  it('works with kubectl apply --server-side, --force-conflicts and kubectl diff', async () => {
    const yaml = (image: string) => `apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: kubectl-ssa\n  namespace: default\nspec:\n  image: ${image}\n`;
    const first = await s.kubectl(['apply', '--server-side', '-f', '-'], { input: yaml('a') });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /serverside-applied/);
    await s.request('PATCH', `${CT}/kubectl-ssa?fieldManager=other`, { body: { spec: { image: 'b' } }, contentType: 'application/merge-patch+json' });
    const conflict = await s.kubectl(['apply', '--server-side', '-f', '-'], { input: yaml('c') });
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /conflict with "other"/);
    const forced = await s.kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: yaml('c') });
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal((await s.request('GET', `${CT}/kubectl-ssa`)).json.spec.image, 'c');
    const diff = await s.kubectl(['diff', '-f', '-'], { input: yaml('d') });
    assert.equal(diff.code, 1, diff.stderr);
    assert.match(diff.stdout, /-  image: c/);
    assert.match(diff.stdout, /\+  image: d/);
    const client = await s.kubectl(['apply', '-f', '-'], { input: yaml('e') });
    assert.equal(client.code, 0, client.stderr);
    const obj = (await s.request('GET', `${CT}/kubectl-ssa`)).json;
    assert.equal(obj.spec.image, 'e');
    assert.ok(obj.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
  });
});
