/** Namespaces: the initial ones, lifecycle admission, deletion that empties them first. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, until, type TestServer } from './harness.js';

describe('namespaces', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  const cm = (name: string, namespace: string, finalizers?: string[]) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, finalizers }, data: { a: '1' } });

  it('starts with default, kube-system, kube-public and kube-node-lease, all Active', async () => {
    const list = await s.request('GET', '/api/v1/namespaces');
    assert.deepEqual(list.json.items.map((n: any) => n.metadata.name), ['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    assert.ok(list.json.items.every((n: any) => n.status.phase === 'Active' && n.spec.finalizers[0] === 'kubernetes'));
    assert.equal(list.json.kind, 'NamespaceList');
    assert.equal(list.json.metadata.continue, undefined, 'typed lists omit an empty continue');
  });

  // The service account controller and the root CA publisher of kube-controller-manager, run by kapi.
  it('gives every namespace its default ServiceAccount and kube-root-ca.crt', async () => {
    assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'furnished' } } })).status, 201);
    for (const ns of ['default', 'kube-system', 'furnished']) {
      await until(`the defaults of ${ns}`, async () =>
        (await s.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200 && (await s.request('GET', `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`)).status === 200,
      );
    }
    const ca = (await s.request('GET', '/api/v1/namespaces/furnished/configmaps/kube-root-ca.crt')).json;
    assert.equal(ca.data['ca.crt'], s.kapi.caCertPem);
    const managers = ca.metadata.managedFields.map((m: any) => m.manager);
    assert.deepEqual(managers, ['kube-controller-manager']);
    // Deleted, they come back.
    await s.request('DELETE', '/api/v1/namespaces/furnished/serviceaccounts/default');
    await s.request('PATCH', '/api/v1/namespaces/furnished', { body: { metadata: { labels: { touch: '1' } } }, contentType: 'application/merge-patch+json' });
    await until('the default ServiceAccount again', async () => (await s.request('GET', '/api/v1/namespaces/furnished/serviceaccounts/default')).status === 200);
  });

  // The master endpoint reconciler's objects: where the kubernetes Service leads.
  it('publishes the kubernetes Service\'s Endpoints and EndpointSlice', async () => {
    const port = Number(new URL(s.kapi.url).port);
    const ep = (await s.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).json;
    assert.deepEqual(ep.subsets, [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port, protocol: 'TCP' }] }]);
    const slice = (await s.request('GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes')).json;
    assert.equal(slice.metadata.labels['kubernetes.io/service-name'], 'kubernetes');
    assert.deepEqual([slice.addressType, slice.endpoints[0].addresses, slice.ports[0].port], ['IPv4', ['127.0.0.1'], port]);
    const svc = (await s.request('GET', '/api/v1/namespaces/default/services/kubernetes')).json;
    assert.equal(svc.spec.ports[0].targetPort, port);
  });

  it('refuses to delete the system namespaces', async () => {
    const res = await s.request('DELETE', '/api/v1/namespaces/kube-system');
    assert.equal(res.status, 403);
    assert.equal(res.json.message, 'namespaces "kube-system" is forbidden: this namespace may not be deleted');
  });

  it('marks a deleted namespace Terminating, refuses new objects in it, and removes it once its objects are gone', async () => {
    await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } } });
    assert.equal((await s.request('POST', '/api/v1/namespaces/doomed/configmaps', { body: cm('held', 'doomed', ['example.com/hold']) })).status, 201);
    assert.equal((await s.request('POST', '/api/v1/namespaces/doomed/configmaps', { body: cm('free', 'doomed') })).status, 201);
    const del = await s.request('DELETE', '/api/v1/namespaces/doomed');
    assert.equal(del.status, 200);
    assert.equal(del.json.status.phase, 'Terminating');
    assert.ok(del.json.metadata.deletionTimestamp);
    const refused = await s.request('POST', '/api/v1/namespaces/doomed/configmaps', { body: cm('late', 'doomed') });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.message, 'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated');
    assert.deepEqual(refused.json.details.causes, [{ reason: 'NamespaceTerminating', message: 'namespace doomed is being terminated', field: 'metadata.namespace' }]);
    const until = async (cond: () => Promise<boolean>, what: string) => {
      const deadline = Date.now() + 10_000;
      while (!(await cond())) {
        if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await until(async () => (await s.request('GET', '/api/v1/namespaces/doomed/configmaps/free')).status === 404, 'free configmap deleted');
    assert.equal((await s.request('GET', '/api/v1/namespaces/doomed')).status, 200, 'held by the finalized configmap');
    await until(async () => ((await s.request('GET', '/api/v1/namespaces/doomed')).json.status.conditions ?? []).length > 0, 'conditions reported');
    const conditions = Object.fromEntries((await s.request('GET', '/api/v1/namespaces/doomed')).json.status.conditions.map((c: any) => [c.type, c]));
    assert.equal(conditions.NamespaceContentRemaining.status, 'True');
    assert.equal(conditions.NamespaceContentRemaining.message, 'Some resources are remaining: configmaps has 1 resource instances');
    assert.equal(conditions.NamespaceFinalizersRemaining.message, 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances');
    assert.equal(conditions.NamespaceDeletionContentFailure.status, 'False');
    await s.request('PATCH', '/api/v1/namespaces/doomed/configmaps/held', { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    await until(async () => (await s.request('GET', '/api/v1/namespaces/doomed')).status === 404, 'namespace removed');
  });

  it('finalizes through the /finalize subresource', async () => {
    await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'manual' } } });
    const ns = (await s.request('GET', '/api/v1/namespaces/manual')).json;
    const res = await s.request('PUT', '/api/v1/namespaces/manual/finalize', { body: { ...ns, spec: { finalizers: ['example.com/mine'] } } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.spec.finalizers, ['example.com/mine']);
  });

  it('refuses objects in a namespace that does not exist', async () => {
    const res = await s.request('POST', '/api/v1/namespaces/nowhere/configmaps', { body: cm('x', 'nowhere') });
    assert.equal(res.status, 404);
    assert.equal(res.json.message, 'namespaces "nowhere" not found');
  });
});
