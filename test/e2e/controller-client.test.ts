/**
 * The in-process controllers are clients of the API: their requests go through
 * the whole request path (authentication as their service accounts,
 * authorization, admission, managed fields) over the loopback transport, and
 * they retry what fails. The client and informer they use, against a real server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Attributes, Decision } from '../../src/api/authorization.js';
import { Client, ResourceClient } from '../../src/sdk/client.js';
import { Informer } from '../../src/sdk/informer.js';
import { CRONTAB_CRD, cronTab, startTestServer, until, type TestServer } from './harness.js';

const NS_CONTROLLER = 'system:serviceaccount:kube-system:namespace-controller';
const GC = 'system:serviceaccount:kube-system:generic-garbage-collector';
const CM = { group: '', version: 'v1', resource: 'configmaps' };

describe('in-process controllers as API clients', () => {
  let s: TestServer;
  const seen: Attributes[] = [];
  let denyNamespaceController = false;
  let denyCollector = false;
  before(async () => {
    s = await startTestServer({
      authorizer: {
        authorize: (a: Attributes): Decision => {
          seen.push(a);
          if (denyNamespaceController && a.user?.name === NS_CONTROLLER) return { decision: 'deny', reason: 'not now' };
          if (denyCollector && a.user?.name === GC) return { decision: 'deny', reason: 'not now' };
          return { decision: 'allow' };
        },
      },
    });
  });
  after(() => s.stop());

  it('deletes a namespace as the namespace controller, authorized as its service account, retrying what is refused', async () => {
    const ns = 'going';
    // With a label, the namespace has managed fields from its creation on (a bare one has none, as upstream).
    assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns, labels: { team: 'a' } } } })).status, 201);
    const held = { metadata: { name: 'held', finalizers: ['example.com/hold'] }, data: { a: 'b' } };
    assert.equal((await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: held })).status, 201);
    assert.equal((await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'free' } } })).status, 201);
    assert.equal((await s.request('DELETE', `/api/v1/namespaces/${ns}`)).status, 200);
    // The controller empties what it can and reports what holds the namespace, as itself.
    await until('the conditions', async () => {
      const got = await s.request('GET', `/api/v1/namespaces/${ns}`);
      return (got.json.status?.conditions ?? []).some((c: any) => c.type === 'NamespaceFinalizersRemaining' && c.status === 'True');
    });
    const got = await s.request('GET', `/api/v1/namespaces/${ns}`);
    const remaining = got.json.status.conditions.find((c: any) => c.type === 'NamespaceFinalizersRemaining');
    assert.equal(remaining.message, 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances');
    const byController = got.json.metadata.managedFields.find((m: any) => m.subresource === 'status');
    assert.equal(byController.manager, 'kube-controller-manager');
    assert.equal((await s.request('GET', `/api/v1/namespaces/${ns}/configmaps/free`)).status, 404);
    const asController = seen.filter((a) => a.user?.name === NS_CONTROLLER);
    assert.ok(asController.some((a) => a.verb === 'deletecollection' && a.resource === 'configmaps' && a.namespace === ns), 'deletecollection, authorized');
    assert.ok(asController.some((a) => a.verb === 'update' && a.resource === 'namespaces' && a.subresource === 'status'));
    assert.deepEqual(asController[0].user?.groups, ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated']);
    // Refused, the controller keeps trying; allowed again, it finishes.
    denyNamespaceController = true;
    const patch = await s.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/held`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    assert.equal(patch.status, 200);
    const refusedBefore = seen.filter((a) => a.user?.name === NS_CONTROLLER).length;
    await until('a refused attempt', () => seen.filter((a) => a.user?.name === NS_CONTROLLER).length > refusedBefore);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await s.request('GET', `/api/v1/namespaces/${ns}`)).status, 200, 'still there while the controller is refused');
    denyNamespaceController = false;
    await until('the namespace to go', async () => (await s.request('GET', `/api/v1/namespaces/${ns}`)).status === 404);
    assert.ok(seen.some((a) => a.user?.name === NS_CONTROLLER && a.resource === 'namespaces' && a.subresource === 'finalize' && a.verb === 'update'));
  });

  it('collects garbage as the garbage collector, authorized as its service account, retrying what is refused', async () => {
    const cm = '/api/v1/namespaces/default/configmaps';
    const owner = await s.request('POST', cm, { body: { metadata: { name: 'owner' } } });
    assert.equal(owner.status, 201);
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.json.metadata.uid };
    assert.equal((await s.request('POST', cm, { body: { metadata: { name: 'dependent', ownerReferences: [ref] } } })).status, 201);
    denyCollector = true;
    assert.equal((await s.request('DELETE', `${cm}/owner`)).status, 200);
    await until('a refused attempt', () => seen.some((a) => a.user?.name === GC));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await s.request('GET', `${cm}/dependent`)).status, 200, 'kept while the collector is refused');
    denyCollector = false;
    await until('the dependent to go', async () => (await s.request('GET', `${cm}/dependent`)).status === 404);
    const byCollector = seen.filter((a) => a.user?.name === GC);
    assert.ok(byCollector.some((a) => a.verb === 'delete' && a.resource === 'configmaps' && a.name === 'dependent'), 'deleted by the collector');
    assert.ok(byCollector.some((a) => a.verb === 'get' && a.name === 'owner'), 'looked up the owner');
  });

  it('finalizes a deleted CRD through the API as the apiserver itself, once its held instances go', async () => {
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTAB_CRD })).status, 201);
    const ct = '/apis/stable.example.com/v1/namespaces/default/crontabs';
    const held = cronTab('held');
    (held.metadata as Record<string, unknown>).finalizers = ['example.com/hold'];
    assert.equal((await s.request('POST', ct, { body: held })).status, 201);
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRONTAB_CRD.metadata.name}`;
    assert.equal((await s.request('DELETE', crdPath)).status, 200);
    const terminating = await s.request('GET', crdPath);
    assert.equal(terminating.status, 200, 'held by its instance');
    assert.equal(terminating.json.status.conditions.find((c: any) => c.type === 'Terminating').reason, 'InstanceDeletionInProgress');
    assert.equal((await s.request('PATCH', `${ct}/held`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' })).status, 200);
    await until('the CRD to go', async () => (await s.request('GET', crdPath)).status === 404);
    const byApiserver = seen.filter((a) => a.user?.name === 'system:apiserver');
    assert.ok(byApiserver.some((a) => a.verb === 'update' && a.resource === 'customresourcedefinitions' && a.subresource === 'status'), 'the finalizer dropped through /status');
    assert.deepEqual(byApiserver[0].user?.groups, ['system:masters', 'system:authenticated']);
  });

  it('holds a leader-election Lease of its own through the API, as kube-controller-manager holds its one', async () => {
    // kube-controller-manager's own Lease is left to the real one, should it run against kapi.
    assert.equal((await s.request('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager')).status, 404);
    const lease = await s.request('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kapi-controller-manager');
    assert.equal(lease.status, 200);
    assert.ok(lease.json.spec.holderIdentity);
    assert.deepEqual(lease.json.metadata.managedFields.map((m: any) => m.manager), ['kube-controller-manager']);
  });

  it('has a client and an informer that list, watch, and list again after a 410', async () => {
    const client = new Client((req, sink) => s.kapi.loopback(req, sink), s.kapi.adminToken, 'test-client/1.0');
    const configmaps = client.resource(CM);
    await configmaps.create('default', { metadata: { name: 'first' }, data: { a: '1' } });
    await assert.rejects(configmaps.get('default', 'nope'), (err: any) => err.code === 404 && err.reason === 'NotFound' && err.message === 'configmaps "nope" not found');
    let lists = 0;
    // The first list claims an old revision: the informer's watch gets a 410 and it must list again.
    class OldFirstList extends ResourceClient {
      override async list(ns: string | undefined, query?: Record<string, string | undefined>, accept?: string) {
        const list = await super.list(ns, query, accept);
        if (++lists === 1) list.metadata.resourceVersion = '1';
        return list;
      }
    }
    const events: string[] = [];
    // Every namespace also has kube-root-ca.crt (published by kapi's controller, as upstream's).
    const informer = new Informer(new OldFirstList(client, CM), {
      added: (o) => o.metadata.name !== 'kube-root-ca.crt' && events.push(`added ${o.metadata.name}`),
      updated: (o) => events.push(`updated ${o.metadata.name} ${o.data?.a}`),
      deleted: (o) => events.push(`deleted ${o.metadata.name}`),
    }, { namespace: 'default' });
    await informer.start();
    try {
      assert.ok(informer.hasSynced);
      await until('a second list', () => lists >= 2);
      await configmaps.create('default', { metadata: { name: 'second' } });
      await configmaps.patch('default', 'first', { data: { a: '2' } });
      await configmaps.delete('default', 'second');
      await until('the events', () => events.includes('deleted second'));
      assert.deepEqual(events, ['added first', 'added second', 'updated first 2', 'deleted second']);
      assert.equal(informer.get('default/first')?.data.a, '2');
      const managers = (await configmaps.get('default', 'first')).metadata.managedFields.map((m: any) => m.manager);
      assert.ok(managers.includes('test-client'), `the client's user agent manages its fields: ${managers}`);
    } finally {
      informer.stop();
    }
  });
});

describe('--controllers: kube-controller-manager\'s selection of the in-process controllers', () => {
  it('runs what the list names (aliases too), and refuses names it does not know, as kube-controller-manager', async () => {
    const s = await startTestServer({ builtinControllers: ['-namespace', '*'] });
    try {
      assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'kept' } } })).status, 201);
      // The service account controller runs: the namespace gets its default account.
      await until('the default service account', async () => (await s.request('GET', '/api/v1/namespaces/kept/serviceaccounts/default')).status === 200);
      assert.equal((await s.request('DELETE', '/api/v1/namespaces/kept')).status, 200);
      // No namespace controller: the namespace stays, terminating.
      await new Promise((r) => setTimeout(r, 300));
      const kept = await s.request('GET', '/api/v1/namespaces/kept');
      assert.equal(kept.status, 200);
      assert.equal(kept.json.status.phase, 'Terminating');
    } finally {
      await s.stop();
    }
    await assert.rejects(
      startTestServer({ builtinControllers: ['*', '-deployment-controller', 'nope'] }),
      /validation failed for '--controllers': \["deployment-controller" is not in the list of known controllers, "nope" is not in the list of known controllers\]/,
    );
  });
});
