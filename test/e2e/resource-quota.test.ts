/**
 * The ResourceQuota admission plugin (#41), with the quota's status written by hand as a quota controller would
 * (kapi's own quota controller off): usage charged at admission with a compare-and-swap, upstream's 403s (exceeded,
 * status unknown, must specify), scopes, dry runs not charged, and concurrent creates never over the limit. Then
 * kapi's quota controller: status computed, given back when objects go, and enforced.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, until, type TestServer } from './harness.js';

const NS = '/api/v1/namespaces/q';

/** A quota in a namespace, with its status as a quota controller writes it (`used` absent: not computed yet). */
async function quotaWithStatus(s: TestServer, namespace: string, name: string, spec: Record<string, unknown>, used?: Record<string, string>): Promise<void> {
  const created = await s.request('POST', `/api/v1/namespaces/${namespace}/resourcequotas`, { body: { metadata: { name }, spec } });
  assert.equal(created.status, 201, created.text);
  const status = await s.request('PUT', `/api/v1/namespaces/${namespace}/resourcequotas/${name}/status`, { body: { ...created.json, status: { hard: spec.hard, ...(used ? { used } : {}) } } });
  assert.equal(status.status, 200, status.text);
}

describe('ResourceQuota admission', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ builtinControllers: ['*', '-resourcequota-controller'] });
    assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'q' } } })).status, 201);
  });
  after(() => s.stop());

  const quota = (name: string, spec: Record<string, unknown>, used?: Record<string, string>) => quotaWithStatus(s, 'q', name, spec, used);
  const used = async (name: string) => (await s.request('GET', `${NS}/resourcequotas/${name}`)).json.status.used;
  const pod = (name: string, resources?: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'nginx', ...(resources ? { resources } : {}) }], ...extra },
  });

  it('refuses what a quota limits while its usage is unknown, then charges each create and refuses the one over', async () => {
    await quota('counts', { hard: { configmaps: '3', 'count/secrets': '1' } });
    const unknown = await s.request('POST', `${NS}/configmaps`, { body: { metadata: { name: 'early' } } });
    assert.equal(unknown.status, 403, unknown.text);
    assert.equal(unknown.json.message, 'configmaps "early" is forbidden: status unknown for quota: counts, resources: configmaps');
    assert.equal(unknown.json.reason, 'Forbidden');
    // The controller's first count (the namespace's root CA ConfigMap, kapi's, is one).
    const q = (await s.request('GET', `${NS}/resourcequotas/counts`)).json;
    assert.equal((await s.request('PUT', `${NS}/resourcequotas/counts/status`, { body: { ...q, status: { hard: q.spec.hard, used: { configmaps: '1', 'count/secrets': '0' } } } })).status, 200);

    const dry = await s.request('POST', `${NS}/configmaps?dryRun=All`, { body: { metadata: { name: 'dry' } } });
    assert.equal(dry.status, 201, dry.text);
    assert.deepEqual(await used('counts'), { configmaps: '1', 'count/secrets': '0' }, 'a dry run is not charged');
    for (const name of ['a', 'b']) assert.equal((await s.request('POST', `${NS}/configmaps`, { body: { metadata: { name } } })).status, 201);
    assert.deepEqual(await used('counts'), { configmaps: '3', 'count/secrets': '0' });
    const over = await s.request('POST', `${NS}/configmaps`, { body: { metadata: { generateName: 'c-' } } });
    assert.equal(over.status, 403, over.text);
    // Named as upstream names it: the generated name is there by validating admission.
    assert.match(over.json.message, /^configmaps "c-[a-z0-9]{5}" is forbidden: exceeded quota: counts, requested: configmaps=1, used: configmaps=3, limited: configmaps=3$/);
    // kubectl shows the server's error as it would kube-apiserver's.
    const cli = await s.kubectl(['-n', 'q', 'create', 'configmap', 'd']);
    assert.notEqual(cli.code, 0);
    assert.match(cli.stderr, /Error from server \(Forbidden\): configmaps "d" is forbidden: exceeded quota: counts, requested: configmaps=1, used: configmaps=3, limited: configmaps=3/);
    // An update creates nothing: not charged, not refused.
    assert.equal((await s.request('PATCH', `${NS}/configmaps/a`, { body: { data: { k: 'v' } }, contentType: 'application/merge-patch+json' })).status, 200);
  });

  it('never lets concurrent creates past the limit', async () => {
    await quota('secrets', { hard: { secrets: '5' } }, { secrets: '0' });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.request('POST', `${NS}/secrets`, { body: { metadata: { name: `s${i}` } } })));
    const created = results.filter((r) => r.status === 201).length;
    // count/secrets of the other quota is 1: the first secret is the only one both quotas let in.
    assert.equal(created, 1, results.map((r) => r.status).join());
    assert.deepEqual(await used('secrets'), { secrets: '1' });
    assert.ok(results.filter((r) => r.status === 403).every((r) => /exceeded quota: counts, requested: count\/secrets=1/.test(r.json.message)));
  });

  it('charges pods\' compute requests and limits, and refuses a pod that does not say what a quota limits', async () => {
    await quota('compute', { hard: { pods: '2', 'requests.cpu': '1', 'limits.memory': '1Gi' } }, { pods: '0', 'requests.cpu': '0', 'limits.memory': '0' });
    const bare = await s.request('POST', `${NS}/pods`, { body: pod('bare') });
    assert.equal(bare.status, 403, bare.text);
    assert.equal(bare.json.message, 'pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: c; requests.cpu for: c');
    const first = await s.request('POST', `${NS}/pods`, { body: pod('p1', { requests: { cpu: '600m' }, limits: { memory: '512Mi' } }) });
    assert.equal(first.status, 201, first.text);
    assert.deepEqual(await used('compute'), { pods: '1', 'requests.cpu': '600m', 'limits.memory': '512Mi' });
    const second = await s.request('POST', `${NS}/pods`, { body: pod('p2', { requests: { cpu: '500m' }, limits: { memory: '512Mi' } }) });
    assert.equal(second.status, 403, second.text);
    assert.equal(second.json.message, 'pods "p2" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1');
    const third = await s.request('POST', `${NS}/pods`, { body: pod('p3', { requests: { cpu: '400m' }, limits: { memory: '512Mi' } }) });
    assert.equal(third.status, 201, third.text);
    assert.deepEqual(await used('compute'), { pods: '2', 'requests.cpu': '1', 'limits.memory': '1Gi' }, 'sums in canonical form');
  });

  it('applies a quota with scopes only to the pods in them', async () => {
    // In a namespace of their own (the compute quota above is full).
    assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'q2' } } })).status, 201);
    const inQ2 = (name: string, spec: Record<string, unknown>) => quotaWithStatus(s, 'q2', name, spec, { pods: '0' });
    await inQ2('best-effort', { hard: { pods: '1' }, scopes: ['BestEffort'] });
    await inQ2('terminating', { hard: { pods: '0' }, scopes: ['Terminating'] });
    await inQ2('high', { hard: { pods: '0' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } });
    assert.equal((await s.request('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { body: { metadata: { name: 'high' }, value: 1000 } })).status, 201);
    const high = await s.request('POST', '/api/v1/namespaces/q2/pods', { body: pod('high', { requests: { cpu: '100m' } }, { priorityClassName: 'high' }) });
    assert.equal(high.status, 403);
    assert.match(high.json.message, /exceeded quota: high, requested: pods=1, used: pods=0, limited: pods=0/);
    const burstable = await s.request('POST', '/api/v1/namespaces/q2/pods', { body: pod('burstable', { requests: { cpu: '100m' } }) });
    assert.equal(burstable.status, 201, burstable.text);
    assert.equal((await s.request('POST', '/api/v1/namespaces/q2/pods', { body: pod('be1') })).status, 201);
    const be2 = await s.request('POST', '/api/v1/namespaces/q2/pods', { body: pod('be2') });
    assert.equal(be2.status, 403);
    assert.match(be2.json.message, /exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1/);
    const deadline = await s.request('POST', '/api/v1/namespaces/q2/pods', { body: pod('job', { requests: { cpu: '100m' } }, { activeDeadlineSeconds: 60 }) });
    assert.equal(deadline.status, 403);
    assert.match(deadline.json.message, /exceeded quota: terminating, requested: pods=1, used: pods=0, limited: pods=0/);
  });
});

describe('ResourceQuota evaluators, as upstream\'s 1.36', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ builtinControllers: ['*', '-resourcequota-controller'] });
    assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'e' } } })).status, 201);
  });
  after(() => s.stop());

  it('charges sidecars beside the containers, cross-namespace affinity by its scope, and claims by their class in whole units', async () => {
    const quota = (name: string, spec: Record<string, unknown>, used: Record<string, string>) => quotaWithStatus(s, 'e', name, spec, used);
    await quota('cpu', { hard: { 'requests.cpu': '100' } }, { 'requests.cpu': '0' });
    await quota('cross', { hard: { pods: '0' }, scopeSelector: { matchExpressions: [{ scopeName: 'CrossNamespacePodAffinity', operator: 'Exists' }] } }, { pods: '0' });
    await quota('bronze', { hard: { 'bronze.storageclass.storage.k8s.io/requests.storage': '3' } }, { 'bronze.storageclass.storage.k8s.io/requests.storage': '0' });
    const cpu = (v: string) => ({ requests: { cpu: v } });
    const pod = await s.request('POST', '/api/v1/namespaces/e/pods', {
      body: {
        metadata: { name: 'sidecars' },
        spec: {
          initContainers: [{ name: 'log', image: 'x', restartPolicy: 'Always', resources: cpu('4') }, { name: 'setup', image: 'x', resources: cpu('10') }],
          containers: [{ name: 'app', image: 'x', resources: cpu('4') }],
        },
      },
    });
    assert.equal(pod.status, 201, pod.text);
    // The sidecar runs beside the app (4 + 4); setup ran with the sidecar started before it (10 + 4): 14.
    const used = async (name: string) => (await s.request('GET', `/api/v1/namespaces/e/resourcequotas/${name}`)).json.status.used;
    assert.deepEqual(await used('cpu'), { 'requests.cpu': '14' });
    const affinity = { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: {}, topologyKey: 'kubernetes.io/hostname', namespaceSelector: {} }] } };
    const cross = await s.request('POST', '/api/v1/namespaces/e/pods', { body: { metadata: { name: 'cross' }, spec: { affinity, containers: [{ name: 'c', image: 'x', resources: cpu('1') }] } } });
    assert.equal(cross.status, 403, cross.text);
    assert.match(cross.json.message, /exceeded quota: cross, requested: pods=1, used: pods=0, limited: pods=0/);
    // The beta annotation names the class (as the provisioner reads it); 500m is charged as 1.
    const claim = (name: string) => ({ metadata: { name, annotations: { 'volume.beta.kubernetes.io/storage-class': 'bronze' } }, spec: { storageClassName: 'gold', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '500m' } } } });
    for (const name of ['a', 'b', 'c']) assert.equal((await s.request('POST', '/api/v1/namespaces/e/persistentvolumeclaims', { body: claim(name) })).status, 201);
    const fourth = await s.request('POST', '/api/v1/namespaces/e/persistentvolumeclaims', { body: claim('d') });
    assert.equal(fourth.status, 403, fourth.text);
    assert.match(fourth.json.message, /exceeded quota: bronze, requested: bronze.storageclass.storage.k8s.io\/requests.storage=1, used: bronze.storageclass.storage.k8s.io\/requests.storage=3/);
  });
});

describe('kapi\'s ResourceQuota controller', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('computes a quota\'s usage, gives it back when objects go, and the admission plugin enforces it', async () => {
    assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'team' } } })).status, 201);
    for (const name of ['a', 'b']) assert.equal((await s.request('POST', '/api/v1/namespaces/team/secrets', { body: { metadata: { name } } })).status, 201);
    const created = await s.request('POST', '/api/v1/namespaces/team/resourcequotas', { body: { metadata: { name: 'q' }, spec: { hard: { secrets: '3', 'count/deployments.apps': '1', 'requests.cpu': '1' } } } });
    assert.equal(created.status, 201, created.text);
    const status = async () => (await s.request('GET', '/api/v1/namespaces/team/resourcequotas/q')).json.status;
    await until('the controller\'s first count', async () => (await status())?.used?.secrets === '2');
    assert.deepEqual(await status(), { hard: { secrets: '3', 'count/deployments.apps': '1', 'requests.cpu': '1' }, used: { secrets: '2', 'count/deployments.apps': '0', 'requests.cpu': '0' } });
    assert.equal((await s.request('POST', '/api/v1/namespaces/team/secrets', { body: { metadata: { name: 'c' } } })).status, 201);
    const over = await s.request('POST', '/api/v1/namespaces/team/secrets', { body: { metadata: { name: 'd' } } });
    assert.equal(over.status, 403);
    assert.equal(over.json.message, 'secrets "d" is forbidden: exceeded quota: q, requested: secrets=1, used: secrets=3, limited: secrets=3');
    // Deleting one gives its unit back (replenishment), and then there is room again.
    assert.equal((await s.request('DELETE', '/api/v1/namespaces/team/secrets/a')).status, 200);
    await until('the controller to give the deleted secret back', async () => (await status())?.used?.secrets === '2');
    assert.equal((await s.request('POST', '/api/v1/namespaces/team/secrets', { body: { metadata: { name: 'd' } } })).status, 201);
  });
});
