/** Owner references and garbage collection: background, foreground, orphan, dangling owners, cycles, restart. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startKapi, type Kapi } from '../../src/kapi/index.js';
import { openStorage } from '../../src/storage/index.js';
import { CRONTAB_CRD, cronTab, startTestServer, until, type TestServer } from './harness.js';

const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';
const CM = '/api/v1/namespaces/default/configmaps';

describe('garbage collection', () => {
  let s: TestServer;
  const status = async (path: string) => (await s.request('GET', path)).status;
  const exists = async (path: string) => (await status(path)) === 200;
  const gone = async (path: string) => (await status(path)) === 404;
  const owner = async (name: string) => {
    const res = await s.request('POST', CT, { body: cronTab(name) });
    assert.equal(res.status, 201, res.text);
    return res.json;
  };
  const patch = async (path: string, body: unknown) => {
    const res = await s.request('PATCH', path, { body, contentType: 'application/merge-patch+json' });
    assert.equal(res.status, 200, res.text);
    return res.json;
  };
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
    assert.equal(await status(`${CM}/bg-dep-1`), 200);
    assert.equal(await status(`${CM}/bg-dep-2`), 200);
    const del = await s.request('DELETE', `${CT}/bg-owner`);
    assert.equal(del.status, 200);
    assert.equal(del.json.kind, 'Status', 'background deletion removes the owner at once');
    assert.equal(await status(`${CT}/bg-owner`), 404);
    await until('dependents collected', async () => (await gone(`${CM}/bg-dep-1`)) && (await gone(`${CM}/bg-dep-2`)));
  });

  it('orphans dependents: references removed, dependents kept', async () => {
    const o = await owner('orphan-owner');
    await dependent('orphan-dep', [ref(o)]);
    const del = await s.request('DELETE', `${CT}/orphan-owner`, { body: { propagationPolicy: 'Orphan' } });
    assert.equal(del.status, 200);
    assert.deepEqual(del.json.metadata.finalizers, ['orphan']);
    await until('owner gone', async () => await gone(`${CT}/orphan-owner`));
    const dep = await s.request('GET', `${CM}/orphan-dep`);
    assert.equal(dep.status, 200, 'the dependent is kept');
    assert.equal(dep.json.metadata.name, 'orphan-dep');
    assert.equal(dep.json.metadata.ownerReferences, undefined);
  });

  it('deletes in the foreground: the owner waits for blocking dependents', async () => {
    const o = await owner('fg-owner');
    await dependent('fg-dep', [ref(o, { blockOwnerDeletion: true })], ['example.com/hold']);
    const del = await s.request('DELETE', `${CT}/fg-owner?propagationPolicy=Foreground`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.json.metadata.finalizers, ['foregroundDeletion']);
    await until('dependent marked for deletion', async () => Boolean((await s.request('GET', `${CM}/fg-dep`)).json.metadata.deletionTimestamp));
    assert.ok(await exists(`${CT}/fg-owner`), 'the owner stays while a blocking dependent exists');
    await patch(`${CM}/fg-dep`, { metadata: { finalizers: null } });
    await until('owner removed after its dependent', async () => await gone(`${CT}/fg-owner`));
    assert.equal(await status(`${CM}/fg-dep`), 404);
  });

  it('collects dependents whose owner is missing or has another uid, and keeps those with a live owner', async () => {
    const o = await owner('live-owner');
    await dependent('dangling', [{ apiVersion: 'stable.example.com/v1', kind: 'CronTab', name: 'never-there', uid: '00000000-0000-0000-0000-000000000000' }]);
    await dependent('wrong-uid', [{ ...ref(o), uid: '11111111-1111-1111-1111-111111111111' }]);
    await dependent('two-owners', [ref(o), { apiVersion: 'stable.example.com/v1', kind: 'CronTab', name: 'gone', uid: '22222222-2222-2222-2222-222222222222' }]);
    // Each was there: its create answered 201 (a GET now could race the collector).
    await until('dangling dependents collected', async () => (await gone(`${CM}/dangling`)) && (await gone(`${CM}/wrong-uid`)));
    await until('dangling reference dropped', async () => (await s.request('GET', `${CM}/two-owners`)).json.metadata.ownerReferences?.length === 1);
    assert.ok(await exists(`${CM}/two-owners`));
  });

  it('keeps the dependents of a live owner whose resource stops serving a version (its first)', async () => {
    const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.gc.example.com' },
      spec: {
        group: 'gc.example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
        versions: ['v1alpha1', 'v1beta1', 'v1'].map((name) => ({ name, served: true, storage: name === 'v1', schema })),
      },
    };
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status, 201);
    const gadgets = '/apis/gc.example.com/v1/namespaces/default/gadgets';
    await until('gadgets served', async () => (await status(gadgets)) === 200);
    const made = await s.request('POST', gadgets, { body: { apiVersion: 'gc.example.com/v1', kind: 'Gadget', metadata: { name: 'g' } } });
    assert.equal(made.status, 201, made.text);
    await dependent('gadget-dep', [ref(made.json)]);
    await s.kapi.gcIdle();
    const current = (await s.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.gc.example.com')).json;
    current.spec.versions[0].served = false;
    assert.equal((await s.request('PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.gc.example.com', { body: current })).status, 200);
    await until('v1alpha1 no longer served', async () => (await status('/apis/gc.example.com/v1alpha1/namespaces/default/gadgets')) === 404);
    // A new dependent: the collector looks its owner up, alive, through a version still served.
    await dependent('gadget-dep-2', [ref(made.json)]);
    await s.kapi.gcIdle();
    assert.ok(await exists(`${CM}/gadget-dep-2`), 'the dependent of a live owner stays');
    assert.ok(await exists(`${CM}/gadget-dep`));
  });

  it('never collects a cluster-scoped object that names a namespaced owner (upstream reports it and leaves it)', async () => {
    const owner = await s.request('POST', CM, { body: { metadata: { name: 'ns-owner' } } });
    assert.equal(owner.status, 201);
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'ns-owner', uid: owner.json.metadata.uid };
    assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'not-collected', ownerReferences: [ref] } } })).status, 201);
    await s.kapi.gcIdle();
    await new Promise((r) => setTimeout(r, 300));
    await s.kapi.gcIdle();
    const ns = await s.request('GET', '/api/v1/namespaces/not-collected');
    assert.equal(ns.status, 200);
    assert.equal(ns.json.metadata.deletionTimestamp, undefined);
  });

  it('handles cluster-scoped owners of namespaced dependents and built-ins owning custom resources', async () => {
    const nsRes = await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'owned-ns-owner' } } });
    assert.equal(nsRes.status, 201, nsRes.text);
    const cm = await dependent('cm-owner', [ref(nsRes.json)]);
    const ct = await s.request('POST', CT, { body: { ...cronTab('owned-by-cm'), metadata: { name: 'owned-by-cm', ownerReferences: [ref(cm)] } } });
    assert.equal(ct.status, 201, ct.text);
    assert.equal(await status(`${CM}/cm-owner`), 200);
    assert.equal(await status(`${CT}/owned-by-cm`), 200);
    const del = await s.request('DELETE', '/api/v1/namespaces/owned-ns-owner');
    assert.equal(del.status, 200, del.text);
    await until('configmap owned by a namespace collected', async () => await gone(`${CM}/cm-owner`));
    await until('crontab owned by the configmap collected', async () => await gone(`${CT}/owned-by-cm`));
  });

  it('does not hang on an ownership cycle deleted in the foreground', async () => {
    const a = await dependent('cycle-a', []);
    const b = await dependent('cycle-b', [ref(a, { blockOwnerDeletion: true })]);
    const patched = await patch(`${CM}/cycle-a`, { metadata: { ownerReferences: [ref(b, { blockOwnerDeletion: true })] } });
    assert.equal(patched.metadata.ownerReferences[0].uid, b.metadata.uid);
    assert.equal(await status(`${CM}/cycle-a`), 200);
    assert.equal(await status(`${CM}/cycle-b`), 200);
    const del = await s.request('DELETE', `${CM}/cycle-a`, { body: { propagationPolicy: 'Foreground' } });
    assert.equal(del.status, 200, del.text);
    await until('both members of the cycle deleted', async () => (await gone(`${CM}/cycle-a`)) && (await gone(`${CM}/cycle-b`)));
  });

  it('refuses an unknown propagation policy', async () => {
    await owner('policy');
    const res = await s.request('DELETE', `${CT}/policy?propagationPolicy=Sometimes`);
    assert.equal(res.status, 422);
    assert.equal(res.json.message, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sometimes": supported values: "Foreground", "Background", "Orphan"');
    assert.equal(await status(`${CT}/policy`), 200, 'a refused delete deletes nothing');
  });
});

it('finishes collection after a restart: dependents of an owner deleted while kapi was down', async () => {
  const s = await startTestServer();
  const dataDir = join(s.dir, 'data');
  let kapi: Kapi | undefined;
  try {
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTAB_CRD })).status, 201);
    const created = await s.request('POST', CT, { body: cronTab('restart-owner') });
    assert.equal(created.status, 201, created.text);
    const o = created.json;
    const dep = await s.request('POST', CM, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'restart-dep', ownerReferences: [{ apiVersion: o.apiVersion, kind: o.kind, name: 'restart-owner', uid: o.metadata.uid }] } },
    });
    assert.equal(dep.status, 201, dep.text);
    await s.kapi.stop();
    const storage = openStorage({ kind: 'sqlite', path: join(dataDir, 'state.db') });
    try {
      assert.ok(await storage.get('/registry/configmaps/default/restart-dep'), 'the dependent is stored when kapi stops');
      assert.ok(await storage.get('/registry/stable.example.com/crontabs/default/restart-owner'), 'the owner is stored when kapi stops');
      await storage.delete('/registry/stable.example.com/crontabs/default/restart-owner');
      assert.equal(await storage.get('/registry/stable.example.com/crontabs/default/restart-owner'), undefined);
    } finally {
      await storage.close();
    }
    kapi = await startKapi({ dataDir, port: 0 });
    await kapi.gcIdle();
    const after = await kapi.registry.lookup('', 'v1', 'configmaps')!.store.get('default', 'restart-dep').catch((e) => e);
    assert.equal(after.code, 404, 'the dependent was collected after the restart');
  } finally {
    await kapi?.stop();
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
      const created = await s.request('POST', CT, { body: cronTab(`k-${cascade}`) });
      assert.equal(created.status, 201, created.text);
      const o = created.json;
      const ownerRef = { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid, blockOwnerDeletion: true };
      const dependent = await s.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `k-dep-${cascade}`, ownerReferences: [ownerRef] } } });
      assert.equal(dependent.status, 201, dependent.text);
      assert.equal((await s.request('GET', `${CT}/k-${cascade}`)).status, 200);
      assert.equal((await s.request('GET', `${CM}/k-dep-${cascade}`)).status, 200);
      const r = await s.kubectl(['delete', 'crontab', `k-${cascade}`, `--cascade=${cascade}`, '--timeout=20s']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`crontab.stable.example.com "k-${cascade}" deleted`));
      await until('owner gone', async () => (await s.request('GET', `${CT}/k-${cascade}`)).status === 404);
      const dep = await s.request('GET', `${CM}/k-dep-${cascade}`);
      if (cascade === 'orphan') {
        assert.equal(dep.status, 200);
        assert.equal(dep.json.metadata.ownerReferences, undefined);
      } else {
        await until('dependent gone', async () => (await s.request('GET', `${CM}/k-dep-${cascade}`)).status === 404);
      }
    });
  }
});
