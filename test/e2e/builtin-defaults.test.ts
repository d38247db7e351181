/**
 * Built-in objects defaulted and checked as kube-apiserver does: the SetDefaults of every struct
 * wherever it appears (containers in templates included), Pods created Pending with their QoS class
 * and the default admission plugins' fields, Services given cluster IPs and node ports from their
 * ranges, Jobs their generated selector, and Pod specs immutable but for what upstream allows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

const BUNDLE = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        ports: [{containerPort: 80}]
        readinessProbe: {httpGet: {port: 80}}
      volumes:
      - name: cfg
        configMap: {name: cfg}
      - name: scratch
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: default}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: run, image: "busybox@sha256:0000000000000000000000000000000000000000000000000000000000000000"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: readers, namespace: default}
roleRef: {kind: ClusterRole, name: view}
subjects: [{kind: User, name: alice}, {kind: ServiceAccount, name: default, namespace: default}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: example.com/fast
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: default}
spec:
  podSelector: {}
  egress: [{ports: [{port: 53}]}]
`;

describe('built-in defaulting and allocation', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    const applied = await s.kubectl(['apply', '-f', '-'], { input: BUNDLE });
    assert.equal(applied.code, 0, applied.stderr);
  });
  after(() => s.stop());

  const get = async (path: string) => {
    const res = await s.request('GET', path);
    assert.equal(res.status, 200, res.text);
    return res.json;
  };

  it('defaults every struct wherever it appears, from kubectl apply', async () => {
    const d = await get('/apis/apps/v1/namespaces/default/deployments/web');
    assert.deepEqual(d.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    assert.deepEqual([d.spec.replicas, d.spec.revisionHistoryLimit, d.spec.progressDeadlineSeconds], [1, 10, 600]);
    const pod = d.spec.template.spec;
    assert.deepEqual(
      [pod.restartPolicy, pod.dnsPolicy, pod.schedulerName, pod.terminationGracePeriodSeconds, pod.securityContext],
      ['Always', 'ClusterFirst', 'default-scheduler', 30, {}],
    );
    const c = pod.containers[0];
    assert.deepEqual([c.imagePullPolicy, c.terminationMessagePath, c.terminationMessagePolicy, c.ports[0].protocol], ['Always', '/dev/termination-log', 'File', 'TCP']);
    assert.deepEqual(c.readinessProbe, { httpGet: { port: 80, path: '/', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
    assert.deepEqual(pod.volumes, [{ name: 'cfg', configMap: { name: 'cfg', defaultMode: 420 } }, { name: 'scratch', emptyDir: {} }]);

    const cj = await get('/apis/batch/v1/namespaces/default/cronjobs/nightly');
    assert.deepEqual([cj.spec.concurrencyPolicy, cj.spec.suspend, cj.spec.successfulJobsHistoryLimit, cj.spec.failedJobsHistoryLimit], ['Allow', false, 3, 1]);
    assert.equal(cj.spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent', 'a digest without a tag is not latest');
    const rb = await get('/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/readers');
    assert.equal(rb.roleRef.apiGroup, 'rbac.authorization.k8s.io');
    assert.deepEqual(rb.subjects.map((x: any) => x.apiGroup), ['rbac.authorization.k8s.io', '']);
    const sc = await get('/apis/storage.k8s.io/v1/storageclasses/fast');
    assert.deepEqual([sc.reclaimPolicy, sc.volumeBindingMode], ['Delete', 'Immediate']);
    const np = await get('/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/deny');
    assert.deepEqual(np.spec.policyTypes, ['Ingress', 'Egress']);
    assert.equal(np.spec.egress[0].ports[0].protocol, 'TCP');
  });

  it('creates Pods Pending with their QoS class and the admission plugins\' defaults; the spec stays immutable but for images', async () => {
    const pods = '/api/v1/namespaces/default/pods';
    const body = (name: string, resources: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      metadata: { name },
      spec: { containers: [{ name: 'c', image: 'nginx:1', resources }], ...extra },
      status: { phase: 'Running' },
    });
    const created = await s.request('POST', pods, { body: body('burst', { requests: { cpu: '100m' } }) });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json.status, { phase: 'Pending', qosClass: 'Burstable' }, 'status is the server\'s on create');
    const spec = created.json.spec;
    assert.deepEqual([spec.serviceAccountName, spec.serviceAccount, spec.priority, spec.preemptionPolicy, spec.enableServiceLinks], ['default', 'default', 0, 'PreemptLowerPriority', true]);
    assert.deepEqual(
      spec.tolerations.map((t: any) => `${t.key}:${t.effect}:${t.tolerationSeconds}`),
      ['node.kubernetes.io/not-ready:NoExecute:300', 'node.kubernetes.io/unreachable:NoExecute:300'],
    );
    const guaranteed = await s.request('POST', pods, { body: body('sure', { limits: { cpu: '500m', memory: '64Mi' } }) });
    assert.deepEqual([guaranteed.json.status.qosClass, guaranteed.json.spec.containers[0].resources.requests], ['Guaranteed', { cpu: '500m', memory: '64Mi' }]);
    assert.equal((await s.request('POST', pods, { body: body('none', {}) })).json.status.qosClass, 'BestEffort');
    const critical = await s.request('POST', pods, { body: body('crit', {}, { priorityClassName: 'system-cluster-critical' }) });
    assert.equal(critical.json.spec.priority, 2000000000);
    const wrong = await s.request('POST', pods, { body: body('wrong', {}, { priority: 5 }) });
    assert.equal(wrong.status, 403);
    assert.equal(wrong.json.message, 'pods "wrong" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name');

    const image = await s.request('PATCH', `${pods}/burst`, { body: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } }, contentType: 'application/strategic-merge-patch+json' });
    assert.equal(image.status, 200, image.text);
    const port = await s.request('PATCH', `${pods}/burst`, { body: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 81 }] }] } }, contentType: 'application/strategic-merge-patch+json' });
    assert.equal(port.status, 422);
    assert.equal(port.json.details.causes[0].reason, 'FieldValueForbidden');
    assert.ok(
      port.json.message.startsWith(
        'Pod "burst" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n',
      ),
      port.json.message,
    );
  });

  it('allocates cluster IPs and node ports, refuses taken or foreign ones, and keeps them when an update leaves them out', async () => {
    const services = '/api/v1/namespaces/default/services';
    const svc = (name: string, spec: Record<string, unknown>) => ({ metadata: { name }, spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec } });
    const a = await s.request('POST', services, { body: svc('a', {}) });
    assert.equal(a.status, 201, a.text);
    const ip = a.json.spec.clusterIP;
    assert.match(ip, /^10\.0\.0\.\d+$/);
    assert.notEqual(ip, '10.0.0.1', 'the kubernetes Service has the first address');
    assert.deepEqual([a.json.spec.clusterIPs, a.json.spec.ipFamilies, a.json.spec.ipFamilyPolicy, a.json.spec.type], [[ip], ['IPv4'], 'SingleStack', 'ClusterIP']);
    assert.deepEqual(a.json.spec.ports[0], { port: 80, protocol: 'TCP', targetPort: 80 });
    const ips = new Set([ip, '10.0.0.1']);
    for (let i = 0; i < 20; i++) {
      const more = await s.request('POST', services, { body: svc(`m${i}`, {}) });
      assert.ok(!ips.has(more.json.spec.clusterIP), `address ${more.json.spec.clusterIP} given twice`);
      ips.add(more.json.spec.clusterIP);
    }
    const taken = await s.request('POST', services, { body: svc('b', { clusterIP: ip }) });
    assert.equal(taken.status, 422);
    assert.equal(taken.json.message, `Service "b" is invalid: spec.clusterIPs: Invalid value: ["${ip}"]: failed to allocate IP ${ip}: provided IP is already allocated`);
    const foreign = await s.request('POST', services, { body: svc('b', { clusterIP: '192.168.0.9' }) });
    assert.equal(foreign.status, 422);
    assert.match(foreign.json.message, /provided IP is not in the valid range\. The range of valid IPs is 10\.0\.0\.0\/24$/);
    const headless = await s.request('POST', services, { body: svc('h', { clusterIP: 'None' }) });
    assert.deepEqual(headless.json.spec.clusterIPs, ['None']);

    const np = await s.request('POST', services, { body: svc('np', { type: 'NodePort' }) });
    const nodePort = np.json.spec.ports[0].nodePort;
    assert.ok(nodePort >= 30000 && nodePort <= 32767);
    assert.deepEqual([np.json.spec.externalTrafficPolicy, np.json.spec.internalTrafficPolicy], ['Cluster', 'Cluster']);
    const samePort = await s.request('POST', services, { body: svc('np2', { type: 'NodePort', ports: [{ port: 80, nodePort }] }) });
    assert.equal(samePort.status, 422);
    assert.equal(samePort.json.details.causes[0].message, `Invalid value: ${nodePort}: provided port is already allocated`);

    // A PUT of the manifest without the allocated values keeps them (kubectl replace).
    const cur = (await s.request('GET', `${services}/np`)).json;
    const put = await s.request('PUT', `${services}/np`, { body: { ...svc('np', { type: 'NodePort' }), metadata: { name: 'np', resourceVersion: cur.metadata.resourceVersion } } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual([put.json.spec.clusterIP, put.json.spec.ports[0].nodePort], [cur.spec.clusterIP, nodePort]);
    const moved = await s.request('PATCH', `${services}/np`, { body: { spec: { clusterIP: '10.0.0.3', clusterIPs: ['10.0.0.3'] } }, contentType: 'application/merge-patch+json' });
    assert.equal(moved.status, 422);
    assert.match(moved.json.message, /spec\.clusterIPs\[0\]: Invalid value: "10\.0\.0\.3": may not change once set/);
  });

  it('gives a Job the selector and labels of its uid and name', async () => {
    const res = await s.request('POST', '/apis/batch/v1/namespaces/default/jobs', {
      body: { metadata: { name: 'once' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
    });
    assert.equal(res.status, 201, res.text);
    const { uid } = res.json.metadata;
    const expected = { 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': 'once', 'controller-uid': uid, 'job-name': 'once' };
    assert.deepEqual(res.json.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    assert.deepEqual(res.json.spec.template.metadata.labels, expected);
    assert.equal(res.json.metadata.labels, undefined, 'a template without labels lends none to the Job');
    const labelled = await s.request('POST', '/apis/batch/v1/namespaces/default/jobs', {
      body: { metadata: { name: 'twice' }, spec: { template: { metadata: { labels: { app: 'x' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
    });
    const uid2 = labelled.json.metadata.uid;
    // SetDefaults_Job shares the template's labels with the Job, and the generated ones land in both.
    assert.deepEqual(labelled.json.metadata.labels, { app: 'x', 'batch.kubernetes.io/controller-uid': uid2, 'batch.kubernetes.io/job-name': 'twice', 'controller-uid': uid2, 'job-name': 'twice' });
    assert.deepEqual(
      [res.json.spec.completions, res.json.spec.parallelism, res.json.spec.backoffLimit, res.json.spec.completionMode, res.json.spec.suspend, res.json.spec.podReplacementPolicy],
      [1, 1, 6, 'NonIndexed', false, 'TerminatingOrFailed'],
    );
  });
});
