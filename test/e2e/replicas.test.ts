/** Several kapi replicas on one etcd behave as one server (issue 7). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findEtcd, startEtcdCluster, type EtcdCluster } from '../storage/etcd-helper.js';
import { Foo } from '../../examples/foo-controller/foo.js';
import { CRONTAB_CRD, cronTab, startTestServer, watchEvents, type TestServer } from './harness.js';

const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';

async function until(cond: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<number> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}

describe('replicas on etcd', { skip: findEtcd().reason }, () => {
  let etcd: EtcdCluster;
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    etcd = await startEtcdCluster({ size: 1 });
    const opts = {
      storage: { kind: 'etcd' as const, endpoints: etcd.endpoints, prefix: '/kapi-replicas' },
      leaderElection: { leaseDurationSeconds: 2, retryPeriodMs: 200 },
    };
    a = await startTestServer(opts);
    b = await startTestServer(opts);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.cleanup();
  });

  it('serves on B, within a second, a CRD created through A', async () => {
    assert.equal((await a.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTAB_CRD })).status, 201);
    const ms = await until(async () => (await b.request('GET', CT)).status === 200, 'the CRD served by B', 5000);
    assert.ok(ms < 1000, `B served the CRD after ${ms} ms`);
    assert.equal((await b.request('GET', '/apis/stable.example.com/v1')).status, 200);
  });

  it('shows writes through A to watchers on B, in order', async () => {
    const list = await b.request('GET', CT);
    assert.equal(list.status, 200, list.text);
    const w = watchEvents(b.kapi, `${CT}?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`, 3);
    assert.equal(await w.status, 200);
    const created = await a.request('POST', CT, { body: cronTab('r1') });
    assert.equal(created.status, 201, created.text);
    const patched = await a.request('PATCH', `${CT}/r1`, { body: { spec: { image: 'v2' } }, contentType: 'application/merge-patch+json' });
    assert.equal(patched.status, 200, patched.text);
    const deleted = await a.request('DELETE', `${CT}/r1`);
    assert.equal(deleted.status, 200, deleted.text);
    const events = await w.events;
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
    assert.deepEqual(events.map((e) => e.object.metadata.name), ['r1', 'r1', 'r1']);
    assert.deepEqual(events.slice(0, 2).map((e) => e.object.metadata.resourceVersion), [created.json.metadata.resourceVersion, patched.json.metadata.resourceVersion]);
  });

  it('loses no update when replicas race: the loser gets 409', async () => {
    const created = await a.request('POST', CT, { body: cronTab('race') });
    assert.equal(created.status, 201, created.text);
    const obj = created.json;
    const [ra, rb] = await Promise.all([
      a.request('PUT', `${CT}/race`, { body: { ...obj, spec: { image: 'from-a' } } }),
      b.request('PUT', `${CT}/race`, { body: { ...obj, spec: { image: 'from-b' } } }),
    ]);
    assert.deepEqual([ra.status, rb.status].sort(), [200, 409]);
    const winner = ra.status === 200 ? 'from-a' : 'from-b';
    assert.equal((await b.request('GET', `${CT}/race`)).json.spec.image, winner);
  });

  it('runs the controllers on exactly one replica, and hands them over when it stops', async () => {
    await until(() => a.kapi.isLeader() !== b.kapi.isLeader(), 'exactly one leader');
    const [leader, follower] = a.kapi.isLeader() ? [a, b] : [b, a];
    const created = await follower.request('POST', CT, { body: cronTab('gc-owner') });
    assert.equal(created.status, 201, created.text);
    const owner = created.json;
    const dep = await follower.request('POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gc-dep', ownerReferences: [{ apiVersion: owner.apiVersion, kind: owner.kind, name: 'gc-owner', uid: owner.metadata.uid }] } },
    });
    assert.equal(dep.status, 201, dep.text);
    await leader.kapi.stop();
    const ms = await until(() => follower.kapi.isLeader(), 'the follower taking over', 10_000);
    assert.ok(ms < 5000, `took over after ${ms} ms`);
    assert.equal((await follower.request('GET', '/api/v1/namespaces/default/configmaps/gc-dep')).status, 200, 'the dependent is there before its owner goes');
    const del = await follower.request('DELETE', `${CT}/gc-owner`);
    assert.equal(del.status, 200, del.text);
    await until(async () => (await follower.request('GET', '/api/v1/namespaces/default/configmaps/gc-dep')).status === 404, 'garbage collected by the new leader');
  });
});

describe('kapi on a three-member etcd cluster', { skip: findEtcd().reason }, () => {
  let etcd: EtcdCluster;
  let s: TestServer;
  before(async () => {
    etcd = await startEtcdCluster({ size: 3 });
    s = await startTestServer({ storage: { kind: 'etcd', endpoints: etcd.endpoints, prefix: '/kapi-members', requestTimeoutMs: 2000 } });
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTAB_CRD })).status, 201);
  });
  after(async () => {
    await s?.stop();
    await etcd?.cleanup();
  });

  it('keeps serving with one member down, answers 5xx without hanging with two down, and recovers', async () => {
    await etcd.stop(0);
    // The member stopped may have led: writes go on once the other two have elected one (an election timeout, a
    // second or so; a write in that time may time out, as kube-apiserver's would). An attempt that timed out may
    // have been committed: its retry is then 409.
    const statuses: number[] = [];
    await until(async () => {
      statuses.push((await s.request('POST', CT, { body: cronTab('one-down') })).status);
      return statuses.at(-1) === 201 || (statuses.length > 1 && statuses.at(-1) === 409);
    }, 'a write with one member down', 10_000);
    assert.ok(statuses.every((c) => c === 201 || c === 409 || c === 503 || c === 504), `statuses: ${statuses.join(', ')}`);
    assert.equal((await s.request('GET', `${CT}/one-down`)).status, 200);
    await etcd.stop(1);
    const started = Date.now();
    const res = await s.request('POST', CT, { body: cronTab('two-down'), timeoutMs: 15_000 });
    assert.ok(res.status >= 500 && res.status < 600, `got ${res.status}: ${res.text}`);
    assert.equal(res.json.kind, 'Status');
    assert.ok(Date.now() - started < 10_000, 'answered within the request timeout, no hang');
    await etcd.start(0);
    await etcd.start(1);
    await until(async () => (await s.request('POST', CT, { body: cronTab(`back-${Date.now()}`) })).status === 201, 'writes again after the members return', 20_000);
  });
});

describe('resources defined in TypeScript, on replicas', { skip: findEtcd().reason }, () => {
  it('starts replicas together, each serving the resource with its strategy', async () => {
    const etcd = await startEtcdCluster({ size: 1 });
    const opts = {
      storage: { kind: 'etcd' as const, endpoints: etcd.endpoints, prefix: '/kapi-defined' },
      leaderElection: { leaseDurationSeconds: 2, retryPeriodMs: 200 },
      resources: [Foo],
    };
    const [a, b] = await Promise.all([startTestServer(opts), startTestServer(opts)]);
    try {
      const foo = (name: string, replicas: number) => ({ apiVersion: 'foo.example.com/v1', kind: 'Foo', metadata: { name }, spec: { replicas } });
      assert.equal((await a.request('POST', '/apis/foo.example.com/v1/namespaces/default/foos', { body: foo('ok', 1) })).status, 201);
      const refused = await b.request('POST', '/apis/foo.example.com/v1/namespaces/default/foos', { body: foo('big', 101) });
      assert.equal(refused.status, 422, refused.text);
      assert.match(refused.json.message, /spec\.replicas: Invalid value: 101: must be no more than 100/);
    } finally {
      await a.stop();
      await b.stop();
      await etcd.cleanup();
    }
  });
});
