/** Owner references and garbage collection: background, foreground, orphan, dangling owners, cycles, restart. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startKapi } from '../../src/kapi.js';
import { openStorage } from '../../src/storage/index.js';
import { CRONTAB_CRD, cronTab, startTestServer, type TestServer } from './harness.js';

const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';
const CM = '/api/v1/namespaces/default/configmaps';

async function until(cond: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('garbage collection', () => {
  let s: TestServer;
  const exists = async (path: string) => (await s.request('GET', path)).status === 200;
  const owner = async (name: string) => (await s.request('POST', CT, { body: cronTab(name) })).json;
  const ref = (o: any, extra: Record<string, unknown> = {}) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid, ...extra });
  const dependent = async (name: string, owners: any[], finalizers?: string[]) => {
    const res = await s.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ownerReferences: owners, finalizers } } });
    assert.equal(res.status, 201, res.text);
    return res.json;
  };

  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTAB_CRD })).status, 201);
  });
  after(() => s.stop());

  it('deletes dependents of a deleted owner in the background (custom resource owning built-ins)', async () => {
    const o = await owner('bg-owner');
    await dependent('bg-dep-1', [ref(o)]);
    await dependent('bg-dep-2', [ref(o)]);
    const del = await s.request('DELETE', `${CT}/bg-owner`);
    assert.equal(del.status, 200);
    assert.equal(del.json.kind, 'Status', 'background deletion removes the owner at once');
    await until(async () => !(await exists(`${CM}/bg-dep-1`)) && !(await exists(`${CM}/bg-dep-2`)), 'dependents collected');
  });

  it('orphans dependents: references removed, dependents kept', async () => {
    const o = await owner('orphan-owner');
    await dependent('orphan-dep', [ref(o)]);
    const del = await s.request('DELETE', `${CT}/orphan-owner`, { body: { propagationPolicy: 'Orphan' } });
    assert.equal(del.status, 200);
    assert.deepEqual(del.json.metadata.finalizers, ['orphan']);
    await until(async () => !(await exists(`${CT}/orphan-owner`)), 'owner gone');
    const dep = (await s.request('GET', `${CM}/orphan-dep`)).json;
    assert.equal(dep.metadata.ownerReferences, undefined);
  });

  it('deletes in the foreground: the owner waits for blocking dependents', async () => {
    const o = await owner('fg-owner');
    await dependent('fg-dep', [ref(o, { blockOwnerDeletion: true })], ['example.com/hold']);
    const del = await s.request('DELETE', `${CT}/fg-owner?propagationPolicy=Foreground`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.json.metadata.finalizers, ['foregroundDeletion']);
    await until(async () => Boolean((await s.request('GET', `${CM}/fg-dep`)).json.metadata.deletionTimestamp), 'dependent marked for deletion');
    assert.ok(await exists(`${CT}/fg-owner`), 'the owner stays while a blocking dependent exists');
    await s.request('PATCH', `${CM}/fg-dep`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    await until(async () => !(await exists(`${CT}/fg-owner`)), 'owner removed after its dependent');
  });

  it('collects dependents whose owner is missing or has another uid, and keeps those with a live owner', async () => {
    const o = await owner('live-owner');
    await dependent('dangling', [{ apiVersion: 'stable.example.com/v1', kind: 'CronTab', name: 'never-there', uid: '00000000-0000-0000-0000-000000000000' }]);
    await dependent('wrong-uid', [{ ...ref(o), uid: '11111111-1111-1111-1111-111111111111' }]);
    await dependent('two-owners', [ref(o), { apiVersion: 'stable.example.com/v1', kind: 'CronTab', name: 'gone', uid: '22222222-2222-2222-2222-222222222222' }]);
    await until(async () => !(await exists(`${CM}/dangling`)) && !(await exists(`${CM}/wrong-uid`)), 'dangling dependents collected');
    await until(async () => (await s.request('GET', `${CM}/two-owners`)).json.metadata.ownerReferences?.length === 1, 'dangling reference dropped');
    assert.ok(await exists(`${CM}/two-owners`));
  });

  it('handles cluster-scoped owners of namespaced dependents and built-ins owning custom resources', async () => {
    const ns = (await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'owned-ns-owner' } } })).json;
    const cm = await dependent('cm-owner', [ref(ns)]);
    const ct = await s.request('POST', CT, { body: { ...cronTab('owned-by-cm'), metadata: { name: 'owned-by-cm', ownerReferences: [ref(cm)] } } });
    assert.equal(ct.status, 201);
    await s.request('DELETE', '/api/v1/namespaces/owned-ns-owner');
    await until(async () => !(await exists(`${CM}/cm-owner`)), 'configmap owned by a namespace collected');
    await until(async () => !(await exists(`${CT}/owned-by-cm`)), 'crontab owned by the configmap collected');
  });

  it('does not hang on an ownership cycle deleted in the foreground', async () => {
    const a = await dependent('cycle-a', []);
    const b = await dependent('cycle-b', [ref(a, { blockOwnerDeletion: true })]);
    await s.request('PATCH', `${CM}/cycle-a`, { body: { metadata: { ownerReferences: [ref(b, { blockOwnerDeletion: true })] } }, contentType: 'application/merge-patch+json' });
    await s.request('DELETE', `${CM}/cycle-a`, { body: { propagationPolicy: 'Foreground' } });
    await until(async () => !(await exists(`${CM}/cycle-a`)) && !(await exists(`${CM}/cycle-b`)), 'both members of the cycle deleted');
  });

  it('refuses an unknown propagation policy', async () => {
    await owner('policy');
    const res = await s.request('DELETE', `${CT}/policy?propagationPolicy=Sometimes`);
    assert.equal(res.status, 422);
    assert.equal(res.json.message, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sometimes": supported values: "Foreground", "Background", "Orphan"');
  });
});

it('finishes collection after a restart: dependents of an owner deleted while kapi was down', async () => {
  const s = await startTestServer();
  const dataDir = join(s.dir, 'data');
  await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTAB_CRD });
  const o = (await s.request('POST', CT, { body: cronTab('restart-owner') })).json;
  await s.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'restart-dep', ownerReferences: [{ apiVersion: o.apiVersion, kind: o.kind, name: 'restart-owner', uid: o.metadata.uid }] } } });
  await s.kapi.stop();
  const storage = openStorage({ kind: 'sqlite', path: join(dataDir, 'state.db') });
  await storage.delete('/registry/stable.example.com/crontabs/default/restart-owner');
  await storage.close();
  const kapi = await startKapi({ dataDir, port: 0 });
  try {
    await kapi.gcIdle();
    const dep = await kapi.registry.lookup('', 'v1', 'configmaps')!.store.get('default', 'restart-dep').catch((e) => e);
    assert.equal(dep.code, 404, 'the dependent was collected after the restart');
  } finally {
    await kapi.stop();
    await s.stop();
  }
});

describe('kubectl delete --cascade', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTAB_CRD })).status, 201);
  });
  after(() => s.stop());

  for (const cascade of ['orphan', 'background', 'foreground'] as const) {
    it(`--cascade=${cascade}`, async () => {
      const o = (await s.request('POST', CT, { body: cronTab(`k-${cascade}`) })).json;
      const ownerRef = { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid, blockOwnerDeletion: true };
      await s.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `k-dep-${cascade}`, ownerReferences: [ownerRef] } } });
      const r = await s.kubectl(['delete', 'crontab', `k-${cascade}`, `--cascade=${cascade}`, '--timeout=20s']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`crontab.stable.example.com "k-${cascade}" deleted`));
      await until(async () => (await s.request('GET', `${CT}/k-${cascade}`)).status === 404, 'owner gone');
      const dep = await s.request('GET', `${CM}/k-dep-${cascade}`);
      if (cascade === 'orphan') {
        assert.equal(dep.status, 200);
        assert.equal(dep.json.metadata.ownerReferences, undefined);
      } else {
        await until(async () => (await s.request('GET', `${CM}/k-dep-${cascade}`)).status === 404, 'dependent gone');
      }
    });
  }
});
