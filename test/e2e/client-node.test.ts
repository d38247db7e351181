/** @kubernetes/client-node against kapi: typed calls, custom objects, and an informer that survives a 410 and relists. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { CRONTAB_CRD, cronTab, startTestServer, type TestServer } from './harness.js';

describe('@kubernetes/client-node', () => {
  let s: TestServer;
  let kc: k8s.KubeConfig;
  before(async () => {
    s = await startTestServer();
    kc = new k8s.KubeConfig();
    kc.loadFromFile(s.kapi.kubeconfigPath);
  });
  after(() => s.stop());

  it('creates a CRD and custom objects through the generated clients', async () => {
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    const crd = await ext.createCustomResourceDefinition({ body: CRONTAB_CRD as k8s.V1CustomResourceDefinition });
    assert.equal(crd.status?.conditions?.find((c) => c.type === 'Established')?.status, 'True');
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const created = await custom.createNamespacedCustomObject({ group: 'stable.example.com', version: 'v1', namespace: 'default', plural: 'crontabs', body: cronTab('from-client') });
    assert.equal(created.metadata.name, 'from-client');
    const list = await custom.listNamespacedCustomObject({ group: 'stable.example.com', version: 'v1', namespace: 'default', plural: 'crontabs' });
    assert.deepEqual(list.items.map((i: any) => i.metadata.name), ['from-client']);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const nsList = await core.listNamespace();
    assert.ok(nsList.items.some((n) => n.metadata?.name === 'kube-system'));
    await assert.rejects(
      custom.getNamespacedCustomObject({ group: 'stable.example.com', version: 'v1', namespace: 'default', plural: 'crontabs', name: 'nope' }),
      (err: any) => err.code === 404,
    );
  });

  it('authenticates with the admin client certificate alone, and with a ServiceAccount token it requests', async () => {
    const admin = kc.getCurrentUser()!;
    const cluster = kc.getCurrentCluster()!;
    const only = (user: k8s.User) => {
      const c = new k8s.KubeConfig();
      c.loadFromOptions({ clusters: [cluster], users: [user], contexts: [{ name: 'c', cluster: cluster.name, user: user.name }], currentContext: 'c' });
      return c;
    };
    const certOnly = only({ name: 'cert', certData: admin.certData, keyData: admin.keyData });
    const review = await certOnly.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    assert.equal(review.status?.userInfo?.username, 'kapi-admin');
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'robot' } } });
    const issued = await core.createNamespacedServiceAccountToken({ name: 'robot', namespace: 'default', body: { spec: { audiences: [] } } });
    const robot = only({ name: 'robot', token: issued.status!.token });
    const me = await robot.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    assert.equal(me.status?.userInfo?.username, 'system:serviceaccount:default:robot');
    await assert.rejects(robot.makeApiClient(k8s.CoreV1Api).listNamespacedSecret({ namespace: 'default' }), (err: any) => err.code === 403);
  });

  it('creates built-in objects from typed models without apiVersion and kind, as the docs show', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const ns = await core.createNamespace({ body: { metadata: { name: 'typed-models' } } });
    assert.equal(ns.metadata?.name, 'typed-models');
    assert.equal(ns.kind, 'Namespace');
    const cm = await core.createNamespacedConfigMap({ namespace: 'typed-models', body: { metadata: { name: 'settings' }, data: { mode: 'fast' } } });
    assert.equal(cm.data?.mode, 'fast');
    const read = await core.readNamespacedConfigMap({ namespace: 'typed-models', name: 'settings' });
    assert.equal(read.apiVersion, 'v1');
    assert.equal(read.kind, 'ConfigMap');
    const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
    const lease = await coordination.createNamespacedLease({ namespace: 'typed-models', body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'me' } } });
    assert.equal(lease.spec?.holderIdentity, 'me');
  });

  it('runs an informer that sees adds, updates and deletes, and relists after a 410', async () => {
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const params = { group: 'stable.example.com', version: 'v1', namespace: 'default', plural: 'crontabs' };
    let lists = 0;
    const listFn = async () => {
      lists++;
      const list = (await custom.listNamespacedCustomObject(params)) as k8s.KubernetesListObject<k8s.KubernetesObject>;
      // The first list claims an old revision, so the informer's watch gets a 410 and must relist.
      if (lists === 1) list.metadata!.resourceVersion = '1';
      return list;
    };
    const informer = k8s.makeInformer(kc, '/apis/stable.example.com/v1/namespaces/default/crontabs', listFn);
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update ${o.metadata?.name}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
    const errors: unknown[] = [];
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    const waitFor = async (what: string) => {
      const deadline = Date.now() + 10_000;
      while (!seen.includes(what)) {
        if (Date.now() > deadline) throw new Error(`informer never saw "${what}": ${JSON.stringify(seen)} (errors: ${errors.join('; ')})`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    try {
      await waitFor('add from-client');
      const deadline = Date.now() + 10_000;
      while (lists < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      assert.equal(lists, 2, 'the 410 made the informer list again');
      await custom.createNamespacedCustomObject({ ...params, body: cronTab('later') });
      await waitFor('add later');
      await custom.patchNamespacedCustomObject(
        { ...params, name: 'later', body: { spec: { image: 'new' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await waitFor('update later');
      await custom.deleteNamespacedCustomObject({ ...params, name: 'later' });
      await waitFor('delete later');
      assert.deepEqual(errors, []);
    } finally {
      await informer.stop();
    }
  });
});
