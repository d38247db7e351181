/**
 * The real control plane against kapi (#41): kube-controller-manager and kube-scheduler, built from Debian's
 * kubernetes source (scripts/control-plane.sh), pointed at kapi's admin kubeconfig with leader election on, each
 * controller under its own service account (`--use-service-account-credentials`, so kapi's RBAC bootstrap roles
 * decide), kapi's own copies of its controllers turned off (`--controllers`) and the removed versions they list
 * turned on (`--runtime-config`). A Node is created by hand (there
 * is no kubelet); the cluster then reaches the states a cluster without kubelets reaches. A CronJob's first Job
 * comes at the next minute: the suite takes up to a minute longer for it.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startTestServer, until, type TestServer } from './harness.js';

const BIN = process.env.KAPI_TEST_CONTROL_PLANE_BIN ?? resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '.cache', 'bin');

/** A component's process, its output kept (the last 4 MiB) for the assertions and for a failure's message. */
interface Component {
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

function run(name: string, args: string[]): Component {
  const proc = spawn(join(BIN, name), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (chunk: Buffer) => {
    out += chunk.toString();
    if (out.length > 4 << 20) out = out.slice(-(4 << 20));
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    proc,
    output: () => out,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The log lines of a failed list or watch (a resource the component's informers ask for and kapi does not serve well). */
const failedListsOrWatches = (log: string) => log.split('\n').filter((l) => /[Ff]ailed to (list|watch)|failed to list|forbidden: User /.test(l));

describe('kube-controller-manager and kube-scheduler against kapi', () => {
  let s: TestServer;
  let kcm: Component;
  let scheduler: Component;
  const get = async (path: string) => {
    const res = await s.request('GET', path);
    return res.status === 200 ? res.json : undefined;
  };
  const items = async (path: string): Promise<any[]> => (await get(path))?.items ?? [];

  before(async () => {
    // kapi's own namespace, garbage collection, service account, root CA, token and aggregation controllers are
    // the real kube-controller-manager's here; the policy status controller has no counterpart in 1.20.
    // The removed versions the 1.20 control plane lists (kube-scheduler's PodDisruptionBudgets; the CronJob,
    // disruption and EndpointSlice controllers') are turned on, as the README's "with the real control plane" does.
    s = await startTestServer({
      builtinControllers: ['validatingadmissionpolicy-status-controller'],
      runtimeConfig: { 'batch/v1beta1': 'true', 'policy/v1beta1': 'true', 'discovery.k8s.io/v1beta1': 'true' },
    });
    const pki = join(s.dir, 'data', 'pki');
    const kubeconfig = s.kapi.kubeconfigPath;
    kcm = run('kube-controller-manager', [
      `--kubeconfig=${kubeconfig}`,
      '--leader-elect=true',
      '--port=0',
      '--secure-port=0',
      '--use-service-account-credentials=true',
      `--service-account-private-key-file=${join(pki, 'sa.key')}`,
      `--root-ca-file=${join(pki, 'ca.crt')}`,
      '--concurrent-gc-syncs=5',
      '--v=2',
    ]);
    scheduler = run('kube-scheduler', [`--kubeconfig=${kubeconfig}`, '--leader-elect=true', '--port=0', '--secure-port=0', '--v=2']);
    await until('kube-controller-manager to lead', async () => Boolean((await get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager'))?.spec?.holderIdentity), 30_000);
    await until('kube-scheduler to lead', async () => Boolean((await get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler'))?.spec?.holderIdentity), 30_000);
  });
  after(async () => {
    await Promise.all([kcm?.stop(), scheduler?.stop()]);
    await s?.stop();
  });

  it('elect their leaders on Leases of their own, beside kapi\'s', async () => {
    const lease = await get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager');
    assert.match(lease.spec.holderIdentity, /_/, 'kube-controller-manager holds its Lease as host_uuid');
    const ours = await get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kapi-controller-manager');
    assert.ok(ours?.spec?.holderIdentity, 'kapi keeps a Lease of its own');
    assert.notEqual(ours.spec.holderIdentity, lease.spec.holderIdentity);
  });

  it('schedule and run workloads: Deployments, StatefulSets, DaemonSets and Jobs, with their history, owners, disruption budgets and endpoints', async () => {
    // The Node a kubelet would register (there is none: its pods stay Pending on it).
    const node = await s.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux' } } } });
    assert.equal(node.status, 201, node.text);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const resources = { cpu: '4', memory: '8Gi', pods: '110' };
    const ready = await s.request('PUT', '/api/v1/nodes/n1/status', {
      body: { ...node.json, status: { capacity: resources, allocatable: resources, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now }] } },
    });
    assert.equal(ready.status, 200, ready.text);
    const ns = 'workloads';
    assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status, 201);
    const template = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    const selector = (app: string) => ({ matchLabels: { app } });
    const create = async (path: string, body: object) => {
      const res = await s.request('POST', path, { body });
      assert.equal(res.status, 201, res.text);
    };
    await create(`/apis/apps/v1/namespaces/${ns}/deployments`, { metadata: { name: 'web' }, spec: { replicas: 2, selector: selector('web'), template: template('web') } });
    await create(`/apis/apps/v1/namespaces/${ns}/statefulsets`, { metadata: { name: 'db' }, spec: { replicas: 2, serviceName: 'db', selector: selector('db'), template: template('db') } });
    await create(`/apis/apps/v1/namespaces/${ns}/daemonsets`, { metadata: { name: 'agent' }, spec: { selector: selector('agent'), template: template('agent') } });
    await create(`/apis/batch/v1/namespaces/${ns}/jobs`, { metadata: { name: 'once' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } });
    // Every minute: its first Job comes at the next minute (the last test waits for it).
    await create(`/apis/batch/v1/namespaces/${ns}/cronjobs`, { metadata: { name: 'tick' }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } });

    const pods = () => items(`/api/v1/namespaces/${ns}/pods`);
    const podsOf = async (prefix: string) => (await pods()).filter((p) => p.metadata.name.startsWith(prefix));
    // The Deployment's ReplicaSet makes 2 pods; the StatefulSet its first (the next waits for it to be Ready);
    // the DaemonSet one for the node; the Job one. The scheduler binds each to the node.
    let seen = '';
    await until('the controllers\' pods, bound to the node', async () => {
      // The CronJob's first pod comes at the next minute, which may come first on a busy machine: not counted here.
      const all = (await pods()).filter((p) => !p.metadata.name.startsWith('tick-'));
      seen = all.map((p) => `${p.metadata.name} on ${p.spec.nodeName ?? 'no node'}`).join(', ');
      return all.length === 5 && all.every((p) => p.spec.nodeName === 'n1');
    }, 30_000).catch((err: Error) => Promise.reject(new Error(`${err.message} (the pods: ${seen || 'none'})`)));
    const rs = await items(`/apis/apps/v1/namespaces/${ns}/replicasets`);
    assert.equal(rs.length, 1);
    assert.equal(rs[0].metadata.ownerReferences[0].name, 'web');
    assert.equal((await podsOf('web-')).length, 2);
    assert.deepEqual((await podsOf('db-')).map((p) => p.metadata.name), ['db-0']);
    assert.equal((await podsOf('agent-')).length, 1);
    assert.equal((await podsOf('once-')).length, 1);
    // Its event recorder sends them on its own time, after the bindings.
    let scheduled = 0;
    await until('the scheduler to record its bindings as Events', async () => {
      scheduled = (await s.request('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=reason%3DScheduled`)).json.items.length;
      return scheduled >= 5;
    }, 10_000).catch((err: Error) => Promise.reject(new Error(`${err.message} (${scheduled} Scheduled events)`)));
    // StatefulSet and DaemonSet history.
    const revisions = await items(`/apis/apps/v1/namespaces/${ns}/controllerrevisions`);
    assert.deepEqual(revisions.map((r) => r.metadata.ownerReferences[0].kind).sort(), ['DaemonSet', 'StatefulSet']);
    await until('the Deployment\'s status', async () => (await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`))?.status?.replicas === 2, 15_000);

    // The disruption controller (policy/v1beta1) counts a PodDisruptionBudget's pods; the endpoint and EndpointSlice
    // controllers (discovery.k8s.io/v1beta1) follow a Service (its pods have no IP: no kubelet gave them one).
    await create(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, { metadata: { name: 'db' }, spec: { minAvailable: 1, selector: selector('db') } });
    await until('the PodDisruptionBudget\'s status', async () => (await get(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/db`))?.status?.observedGeneration === 1, 15_000);
    const pdb = await get(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/db`);
    assert.deepEqual([pdb.status.expectedPods, pdb.status.currentHealthy, pdb.status.desiredHealthy, pdb.status.disruptionsAllowed], [1, 0, 1, 0]);
    await create(`/api/v1/namespaces/${ns}/services`, { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } });
    await until('the Service\'s EndpointSlice and Endpoints', async () => (await items(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb`)).length === 1 && Boolean(await get(`/api/v1/namespaces/${ns}/endpoints/web`)), 15_000);

    // Deleting the Deployment: kube-controller-manager's garbage collector removes its ReplicaSet and pods.
    assert.equal((await s.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/web`)).status, 200);
    await until('the Deployment\'s dependents to go', async () => (await items(`/apis/apps/v1/namespaces/${ns}/replicasets`)).length === 0 && (await podsOf('web-')).length === 0, 30_000);
  });

  it('computes ResourceQuota usage, which kapi\'s quota admission charges and enforces, and deletes a namespace with what is in it', async () => {
    const ns = 'quota';
    assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status, 201);
    for (const name of ['a', 'b']) assert.equal((await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name } } })).status, 201);
    // kube-root-ca.crt comes from kube-controller-manager's root CA publisher (kapi's is off).
    await until('the root CA ConfigMap', async () => Boolean(await get(`/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`)), 15_000);
    const quota = await s.request('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { body: { metadata: { name: 'q' }, spec: { hard: { pods: '10', configmaps: '5' } } } });
    assert.equal(quota.status, 201, quota.text);
    let last: unknown;
    await until('the quota controller\'s usage', async () => {
      last = (await get(`/api/v1/namespaces/${ns}/resourcequotas/q`))?.status;
      return (last as { used?: { configmaps?: string } } | undefined)?.used?.configmaps === '3';
    }, 30_000).catch(async (err: Error) => assert.fail(`${err.message}: ${JSON.stringify(last)}; configmaps: ${(await items(`/api/v1/namespaces/${ns}/configmaps`)).map((c) => c.metadata.name).join(', ')}`));
    const q = await get(`/api/v1/namespaces/${ns}/resourcequotas/q`);
    assert.deepEqual(q.status.hard, { configmaps: '5', pods: '10' });
    assert.equal(q.status.used.pods, '0');
    // kapi's ResourceQuota admission charges each create against the controller's numbers, and refuses the one over.
    for (const name of ['c', 'd']) assert.equal((await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name } } })).status, 201);
    const over = await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'e' } } });
    assert.equal(over.status, 403, over.text);
    assert.equal(over.json.message, 'configmaps "e" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=5, limited: configmaps=5');
    // Deleting one gives room back once the quota controller has counted again (it follows deletions).
    assert.equal((await s.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/a`)).status, 200);
    await until('the quota controller to count the deletion', async () => (await get(`/api/v1/namespaces/${ns}/resourcequotas/q`))?.status?.used?.configmaps === '4', 30_000);
    assert.equal((await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'e' } } })).status, 201);
    // Every namespace gets its default ServiceAccount from kube-controller-manager (kapi's controller is off).
    await until('the default ServiceAccount', async () => Boolean(await get(`/api/v1/namespaces/${ns}/serviceaccounts/default`)), 15_000);

    assert.equal((await s.request('DELETE', `/api/v1/namespaces/${ns}`)).status, 200);
    await until('the namespace to go', async () => (await s.request('GET', `/api/v1/namespaces/${ns}`)).status === 404, 30_000);
  });

  it('runs CronJobs on their schedule (kube-controller-manager 1.20 reads them as batch/v1beta1)', async () => {
    // The Job first, then the CronJob's status (lastScheduleTime, the Job as active).
    await until('the CronJob\'s first Job, and its status', async () => {
      const job = (await items('/apis/batch/v1/namespaces/workloads/jobs')).find((j) => j.metadata.ownerReferences?.[0]?.name === 'tick');
      const cron = await get('/apis/batch/v1/namespaces/workloads/cronjobs/tick');
      return Boolean(job && cron?.status?.lastScheduleTime && cron.status.active?.some((r: { name?: string }) => r.name === job.metadata.name));
    }, 130_000);
  });

  it('list and watch everything they ask for', () => {
    assert.deepEqual(failedListsOrWatches(kcm.output()), [], 'kube-controller-manager');
    assert.deepEqual(failedListsOrWatches(scheduler.output()), [], 'kube-scheduler');
    assert.match(kcm.output(), /Caches are synced for garbage collector/);
  });
});
