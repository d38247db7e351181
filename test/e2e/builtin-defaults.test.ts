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

    // The writer owns what was defaulted, as upstream's field manager records the decoded object.
    const owned = d.metadata.managedFields.find((m: any) => m.operation === 'Update').fieldsV1;
    assert.deepEqual(owned['f:spec']['f:revisionHistoryLimit'], {});
    assert.deepEqual(owned['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"web"}']['f:imagePullPolicy'], {});
    const cj = await get('/apis/batch/v1/namespaces/default/cronjobs/nightly');
    assert.deepEqual([cj.spec.concurrencyPolicy, cj.spec.suspend, cj.spec.successfulJobsHistoryLimit, cj.spec.failedJobsHistoryLimit], ['Allow', false, 3, 1]);
    assert.equal(cj.spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent', 'a digest without a tag is not latest');
    const rb = await get('/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/readers');
    assert.equal(rb.roleRef.apiGroup, 'rbac.authorization.k8s.io');
    // A ServiceAccount subject's apiGroup is defaulted to "", which omitempty leaves out of the JSON.
    assert.deepEqual(rb.subjects.map((x: any) => x.apiGroup), ['rbac.authorization.k8s.io', undefined]);
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
    const high = await s.request('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { body: { metadata: { name: 'high' }, value: 1000, preemptionPolicy: 'Never' } });
    assert.equal(high.status, 201, high.text);
    const classed = await s.request('POST', pods, { body: body('classed', {}, { priorityClassName: 'high' }) });
    assert.equal(classed.status, 201, classed.text);
    assert.deepEqual([classed.json.spec.priority, classed.json.spec.preemptionPolicy], [1000, 'Never']);
    const unknown = await s.request('POST', pods, { body: body('unknown', {}, { priorityClassName: 'nosuch' }) });
    assert.deepEqual([unknown.status, unknown.json.message], [403, 'pods "unknown" is forbidden: no PriorityClass with name nosuch was found']);
    const classes = (await s.request('GET', '/apis/scheduling.k8s.io/v1/priorityclasses')).json.items.map((c: any) => `${c.metadata.name}=${c.value}`);
    assert.deepEqual(classes, ['high=1000', 'system-cluster-critical=2000000000', 'system-node-critical=2000001000'], 'the system classes exist from the start');
    const wrong = await s.request('POST', pods, { body: body('wrong', {}, { priority: 5 }) });
    assert.equal(wrong.status, 403);
    assert.equal(wrong.json.message, 'pods "wrong" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name');

    const image = await s.request('PATCH', `${pods}/burst`, { body: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } }, contentType: 'application/strategic-merge-patch+json' });
    assert.equal(image.status, 200, image.text);
    const gated = await s.request('POST', pods, { body: body('gated', {}, { schedulingGates: [{ name: 'example.com/wait' }] }) });
    assert.equal(gated.status, 201, gated.text);
    const ungated = await s.request('PATCH', `${pods}/gated`, { body: { spec: { schedulingGates: null } }, contentType: 'application/merge-patch+json' });
    assert.equal(ungated.status, 200, 'a scheduling gate may be removed');
    const deadline = await s.request('PATCH', `${pods}/gated`, { body: { spec: { activeDeadlineSeconds: 60 } }, contentType: 'application/merge-patch+json' });
    assert.equal(deadline.status, 200, deadline.text);
    const longer = await s.request('PATCH', `${pods}/gated`, { body: { spec: { activeDeadlineSeconds: 90 } }, contentType: 'application/merge-patch+json' });
    assert.equal(longer.json.message, 'Pod "gated" is invalid: spec.activeDeadlineSeconds: Invalid value: 90: must be less than or equal to previous value');
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
    const dry = await s.request('POST', `${services}?dryRun=All`, { body: svc('dry', { clusterIP: '10.0.0.9', type: 'NodePort', ports: [{ port: 80, nodePort: 30999 }] }) });
    assert.equal(dry.status, 201, dry.text);
    const real = await s.request('POST', services, { body: svc('dry', { clusterIP: '10.0.0.9', type: 'NodePort', ports: [{ port: 80, nodePort: 30999 }] }) });
    assert.equal(real.status, 201, `a dry run reserves nothing: ${real.text}`);
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
    // clusterIPs alone names the address (one of the lower band, which allocation leaves to requests); a headless Service stays headless through an update without it.
    const listed = await s.request('POST', services, { body: svc('listed', { clusterIPs: ['10.0.0.7'] }) });
    assert.equal(listed.json.spec?.clusterIP, '10.0.0.7', listed.text);
    const network = await s.request('POST', services, { body: svc('net', { clusterIP: '10.0.0.0' }) });
    assert.equal(network.status, 422, 'the network address is not a host address');
    const hcur = (await s.request('GET', `${services}/h`)).json;
    const hput = await s.request('PUT', `${services}/h`, { body: { ...svc('h', {}), metadata: { name: 'h', resourceVersion: hcur.metadata.resourceVersion } } });
    assert.equal(hput.status, 200, hput.text);
    assert.equal(hput.json.spec.clusterIP, 'None');
    const bare = await s.request('POST', services, { body: { metadata: { name: 'bare' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } } });
    assert.deepEqual([bare.json.spec.ipFamilyPolicy, bare.json.spec.ipFamilies], ['RequireDualStack', ['IPv4', 'IPv6']]);
    // Ports of one number share one node port (53/TCP and 53/UDP); a LoadBalancer's given node port is checked all the same.
    const dns = await s.request('POST', services, { body: svc('dns', { type: 'NodePort', ports: [{ name: 'tcp', port: 53 }, { name: 'udp', port: 53, protocol: 'UDP' }] }) });
    assert.equal(dns.status, 201, dns.text);
    assert.equal(dns.json.spec.ports[0].nodePort, dns.json.spec.ports[1].nodePort);
    const lb = await s.request('POST', services, { body: svc('lb', { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, ports: [{ port: 80, nodePort }] }) });
    assert.equal(lb.status, 422, lb.text);
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

describe('built-in validation', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('checks ConfigMap and Secret keys, sizes, types and immutability with upstream\'s messages', async () => {
    const cms = '/api/v1/namespaces/default/configmaps';
    const bad = await s.request('POST', cms, { body: { metadata: { name: 'bad' }, data: { 'a b': '1', '..x': '2', dup: '3' }, binaryData: { dup: 'AA==' } } });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.json.details.causes.map((c: any) => `${c.field}: ${c.message}`).sort(), [
      `data[..x]: Invalid value: "..x": must not start with '..'`,
      `data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
      'data[dup]: Invalid value: "dup": duplicate of key present in binaryData',
    ]);
    const big = await s.request('POST', cms, { body: { metadata: { name: 'big' }, data: { a: 'x'.repeat(600_000), b: 'y'.repeat(600_000) } } });
    assert.equal(big.status, 422);
    assert.equal(big.json.message, 'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes');
    const frozen = await s.request('POST', cms, { body: { metadata: { name: 'frozen' }, data: { a: '1' }, immutable: true } });
    assert.equal(frozen.status, 201, frozen.text);
    const thaw = await s.request('PATCH', `${cms}/frozen`, { body: { data: { a: '2' } }, contentType: 'application/merge-patch+json' });
    assert.equal(thaw.status, 422);
    assert.equal(thaw.json.message, 'ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set');
    assert.equal((await s.request('PATCH', `${cms}/frozen`, { body: { metadata: { labels: { a: 'b' } } }, contentType: 'application/merge-patch+json' })).status, 200);
    // A PUT without resourceVersion is an unconditional update (Python's replace_*), the same data in another order no change.
    const plain = await s.request('POST', cms, { body: { metadata: { name: 'plain' }, data: { a: '1', b: '2' }, immutable: true } });
    assert.equal(plain.status, 201, plain.text);
    const replaced = await s.request('PUT', `${cms}/plain`, { body: { metadata: { name: 'plain', labels: { x: 'y' } }, data: { b: '2', a: '1' }, immutable: true } });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual(replaced.json.metadata.labels, { x: 'y' });

    const secrets = '/api/v1/namespaces/default/secrets';
    const tls = await s.request('POST', secrets, { body: { metadata: { name: 'tls' }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'AA==' } } });
    assert.equal(tls.status, 422);
    assert.equal(tls.json.message, 'Secret "tls" is invalid: data[tls.key]: Required value');
    const opaque = await s.request('POST', secrets, { body: { metadata: { name: 'plain' }, stringData: { a: 'b' } } });
    assert.equal(opaque.status, 201, opaque.text);
    const retyped = await s.request('PATCH', `${secrets}/plain`, { body: { type: 'kubernetes.io/basic-auth' }, contentType: 'application/merge-patch+json' });
    assert.equal(retyped.status, 422);
    assert.match(retyped.json.message, /type: Invalid value: "kubernetes\.io\/basic-auth": field is immutable/);
  });

  it('names each kind by its own rule', async () => {
    const svc = await s.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: '1abc' }, spec: { ports: [{ port: 80 }] } } });
    assert.equal(svc.status, 422);
    assert.equal(
      svc.json.message,
      `Service "1abc" is invalid: metadata.name: Invalid value: "1abc": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    );
    const role = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: { metadata: { name: 'system:controller:example' }, rules: [] } });
    assert.equal(role.status, 201, role.text);
    const cm = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'system:x' } } });
    assert.equal(cm.status, 422, 'a ConfigMap is named by a DNS subdomain');
    const long = 'c'.repeat(53);
    const cj = await s.request('POST', '/apis/batch/v1/namespaces/default/cronjobs', {
      body: { metadata: { name: long }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } } } } } },
    });
    assert.equal(cj.status, 422);
    assert.equal(cj.json.message, `CronJob.batch "${long}" is invalid: metadata.name: Invalid value: "${long}": must be no more than 52 characters`);
  });
});

describe('pod subresources without a kubelet', () => {
  let s: TestServer;
  const pods = '/api/v1/namespaces/default/pods';
  before(async () => {
    s = await startTestServer();
    for (const [name, containers] of [['one', ['c']], ['two', ['a', 'b']]] as const) {
      const res = await s.request('POST', pods, { body: { metadata: { name, labels: { app: name } }, spec: { containers: containers.map((c) => ({ name: c, image: 'nginx' })) } } });
      assert.equal(res.status, 201, res.text);
    }
  });
  after(() => s.stop());

  it('answers logs, exec and port-forward as upstream does for a pod no node runs', async () => {
    const log = await s.request('GET', `${pods}/one/log`);
    assert.deepEqual([log.status, log.text], [200, ''], 'no node: no log yet');
    const which = await s.request('GET', `${pods}/two/log`);
    assert.equal(which.status, 400);
    assert.equal(which.json.message, 'a container name must be specified for pod two, choose one of: [a b]');
    const wrong = await s.request('GET', `${pods}/two/log?container=z`);
    assert.equal(wrong.json.message, 'container z is not valid for pod two');
    const exec = await s.kubectl(['exec', 'one', '--', 'ls']);
    assert.notEqual(exec.code, 0);
    assert.match(exec.stderr, /pod one does not have a host assigned/);
    const pf = await s.request('POST', `${pods}/one/portforward`);
    assert.deepEqual([pf.status, pf.json.message], [400, 'pod one does not have a host assigned']);
    const missing = await s.request('GET', `${pods}/nope/log`);
    assert.equal(missing.status, 404);
  });

  it('binds a pod to a node once, and then its logs are the node\'s', async () => {
    const bind = (node: string) => s.request('POST', `${pods}/one/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'one' }, target: { kind: 'Node', name: node } } });
    const first = await bind('node-1');
    assert.equal(first.status, 201, first.text);
    assert.equal(first.json.status, 'Success');
    const pod = (await s.request('GET', `${pods}/one`)).json;
    assert.equal(pod.spec.nodeName, 'node-1');
    assert.deepEqual(pod.status.conditions.map((c: any) => [c.type, c.status]), [['PodScheduled', 'True']]);
    const again = await bind('node-2');
    assert.equal(again.status, 409);
    assert.equal(again.json.message, 'Operation cannot be fulfilled on pods/binding "one": pod one is already assigned to node "node-1"');
    const log = await s.request('GET', `${pods}/one/log`);
    assert.deepEqual([log.status, log.json.message], [404, 'nodes "node-1" not found']);
    const gated = await s.request('POST', pods, { body: { metadata: { name: 'gated' }, spec: { schedulingGates: [{ name: 'wait' }], containers: [{ name: 'c', image: 'nginx' }] } } });
    assert.equal(gated.status, 201, gated.text);
    const refused = await s.request('POST', `${pods}/gated/binding`, { body: { metadata: { name: 'gated' }, target: { name: 'node-1' } } });
    assert.deepEqual([refused.status, refused.json.message], [409, 'Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates']);
    const dryEviction = await s.request('POST', `${pods}/gated/eviction?dryRun=All`, { body: { metadata: { name: 'gated' } } });
    assert.equal(dryEviction.status, 201, dryEviction.text);
    assert.equal((await s.request('GET', `${pods}/gated`)).status, 200, 'a dry-run eviction deletes nothing');
  });

  it('evicts a pending pod at once, and a running one only as its disruption budget allows', async () => {
    const evict = (name: string) => s.request('POST', `${pods}/${name}/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name } } });
    const mismatch = await s.request('POST', `${pods}/two/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'one' } } });
    assert.deepEqual([mismatch.status, mismatch.json.message], [400, 'name in URL does not match name in Eviction object']);
    const pdb = await s.request('POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', { body: { metadata: { name: 'keep' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'two' } } } } });
    assert.equal(pdb.status, 201, pdb.text);
    const setStatus = async (name: string, ready: boolean) => {
      const cur = (await s.request('GET', `${pods}/${name}`)).json;
      const conditions = [{ type: 'Ready', status: ready ? 'True' : 'False' }];
      const res = await s.request('PUT', `${pods}/${name}/status`, { body: { ...cur, status: { ...cur.status, phase: 'Running', conditions } } });
      assert.equal(res.status, 200, res.text);
    };
    await setStatus('two', true);
    const refused = await evict('two');
    assert.equal(refused.status, 429);
    assert.equal(refused.json.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.deepEqual(refused.json.details.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget keep is still being processed by the server.' }]);
    const budget = (await s.request('GET', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/keep')).json;
    const allowed = await s.request('PUT', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/keep/status', {
      body: { ...budget, status: { observedGeneration: budget.metadata.generation, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 } },
    });
    assert.equal(allowed.status, 200, allowed.text);
    // An unready pod is not among the healthy ones the budget counts: with the budget met, it goes without taking a disruption.
    const unready = await s.request('POST', pods, { body: { metadata: { name: 'three', labels: { app: 'two' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } });
    assert.equal(unready.status, 201, unready.text);
    await setStatus('three', false);
    const free = await evict('three');
    assert.equal(free.status, 201, free.text);
    assert.equal((await s.request('GET', `${pods}/three`)).status, 404);
    assert.equal((await s.request('GET', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/keep')).json.status.disruptionsAllowed, 1);
    const evicted = await evict('two');
    assert.equal(evicted.status, 201, evicted.text);
    assert.equal((await s.request('GET', `${pods}/two`)).status, 404);
    assert.equal((await s.request('GET', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/keep')).json.status.disruptionsAllowed, 0);
    const pending = await evict('one');
    assert.equal(pending.status, 201, pending.text);
  });
});

describe('pod subresources that write part of the pod', () => {
  let s: TestServer;
  const pods = '/api/v1/namespaces/default/pods';
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('lists every pod subresource in discovery, with its kind and verbs', async () => {
    const list = (await s.request('GET', '/api/v1')).json.resources.filter((r: any) => r.name.startsWith('pods/'));
    assert.deepEqual(
      list.map((r: any) => [r.name, r.group ?? '', r.kind, r.verbs.join(',')]),
      [
        ['pods/attach', '', 'PodAttachOptions', 'create,get'],
        ['pods/binding', '', 'Binding', 'create'],
        ['pods/ephemeralcontainers', '', 'Pod', 'get,patch,update'],
        ['pods/eviction', 'policy', 'Eviction', 'create'],
        ['pods/exec', '', 'PodExecOptions', 'create,get'],
        ['pods/log', '', 'Pod', 'get'],
        ['pods/portforward', '', 'PodPortForwardOptions', 'create,get'],
        ['pods/resize', '', 'Pod', 'get,patch,update'],
        ['pods/status', '', 'Pod', 'get,patch,update'],
      ],
    );
    const aggregated = await s.request('GET', '/api', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    const podsEntry = aggregated.json.items[0].versions[0].resources.find((r: any) => r.resource === 'pods');
    assert.deepEqual(podsEntry.subresources.find((r: any) => r.subresource === 'eviction').responseKind, { group: 'policy', version: 'v1', kind: 'Eviction' });
    const nsEntry = aggregated.json.items[0].versions[0].resources.find((r: any) => r.resource === 'namespaces');
    assert.deepEqual(nsEntry.subresources.map((r: any) => r.subresource), ['finalize', 'status']);
  });

  it('adds ephemeral containers through /ephemeralcontainers only, and never changes or removes them', async () => {
    const withEphemeral = await s.request('POST', pods, {
      body: { metadata: { name: 'early' }, spec: { containers: [{ name: 'c', image: 'nginx' }], ephemeralContainers: [{ name: 'd', image: 'busybox' }] } },
    });
    assert.deepEqual([withEphemeral.status, withEphemeral.json.message], [422, 'Pod "early" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create']);
    const created = await s.request('POST', pods, { body: { metadata: { name: 'dbg' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.metadata.generation, 1);
    const viaSpec = await s.request('PATCH', `${pods}/dbg`, { contentType: 'application/strategic-merge-patch+json', body: { spec: { ephemeralContainers: [{ name: 'd', image: 'busybox' }] } } });
    assert.equal(viaSpec.status, 422, 'the main endpoint does not add them');
    const smp = (body: unknown) => s.request('PATCH', `${pods}/dbg/ephemeralcontainers`, { contentType: 'application/strategic-merge-patch+json', body });
    const forbidden = await smp({ spec: { ephemeralContainers: [{ name: 'd', image: 'busybox', ports: [{ containerPort: 80 }], resources: {}, targetContainerName: 'nope' }] } });
    assert.equal(forbidden.status, 422);
    assert.deepEqual(
      forbidden.json.details.causes.map((c: any) => `${c.field}: ${c.message}`),
      ['spec.ephemeralContainers[0].targetContainerName: Not found: "nope"', 'spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container'],
    );
    const added = await smp({ spec: { containers: [{ name: 'c', image: 'ignored' }], ephemeralContainers: [{ name: 'd', image: 'busybox', stdin: true, targetContainerName: 'c', resources: {} }] } });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.json.spec.containers[0].image, 'nginx', 'only ephemeral containers change through the subresource');
    assert.deepEqual(added.json.spec.ephemeralContainers, [
      { name: 'd', image: 'busybox', stdin: true, targetContainerName: 'c', resources: {}, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'Always' },
    ]);
    assert.equal(added.json.metadata.generation, 2);
    assert.ok(added.json.metadata.managedFields.some((m: any) => m.subresource === 'ephemeralcontainers'));
    const got = await s.request('GET', `${pods}/dbg/ephemeralcontainers`);
    assert.deepEqual([got.status, got.json.kind, got.json.spec.ephemeralContainers.length], [200, 'Pod', 1]);
    const changed = await s.request('PATCH', `${pods}/dbg/ephemeralcontainers`, { contentType: 'application/json-patch+json', body: [{ op: 'replace', path: '/spec/ephemeralContainers/0/image', value: 'alpine' }] });
    assert.equal(changed.status, 422);
    assert.match(changed.json.message, /^Pod "dbg" is invalid: spec\.ephemeralContainers\[d\]: Forbidden: existing ephemeral containers "d" may not be changed\n/);
    const removed = await s.request('PATCH', `${pods}/dbg/ephemeralcontainers`, { contentType: 'application/json-patch+json', body: [{ op: 'remove', path: '/spec/ephemeralContainers/0' }] });
    assert.deepEqual([removed.status, removed.json.details.causes[0].message], [422, 'Forbidden: existing ephemeral containers "d" may not be removed\n']);
    const unknown = await s.request('GET', `${pods}/dbg/nosuch`);
    assert.equal(unknown.status, 404);
    const wrongVerb = await s.request('POST', `${pods}/dbg/ephemeralcontainers`, { body: {} });
    assert.equal(wrongVerb.status, 405);
  });

  it('resizes cpu and memory through /resize, keeping the QoS class and everything else', async () => {
    const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
    const created = await s.request('POST', pods, { body: { metadata: { name: 'rs' }, spec: { containers: [{ name: 'c', image: 'nginx', resources }] } } });
    assert.equal(created.status, 201, created.text);
    const resize = (body: unknown) => s.request('PATCH', `${pods}/rs/resize`, { contentType: 'application/strategic-merge-patch+json', body });
    const ok = await resize({ spec: { containers: [{ name: 'c', image: 'dropped', resources: { requests: { cpu: '150m' } } }] } });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual([ok.json.spec.containers[0].image, ok.json.spec.containers[0].resources.requests, ok.json.metadata.generation], ['nginx', { cpu: '150m', memory: '64Mi' }, 2]);
    const qos = await resize({ spec: { containers: [{ name: 'c', resources: { requests: { cpu: '200m', memory: '128Mi' } } }] } });
    assert.deepEqual([qos.status, qos.json.message], [422, 'Pod "rs" is invalid: spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing']);
    const other = await resize({ spec: { containers: [{ name: 'c', resources: { requests: { 'ephemeral-storage': '1Gi' } } }] } });
    assert.deepEqual([other.status, other.json.message], [422, 'Pod "rs" is invalid: spec: Forbidden: only cpu and memory resources are mutable']);
    const viaSpec = await s.request('PATCH', `${pods}/rs`, { contentType: 'application/strategic-merge-patch+json', body: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '120m' } } }] } } });
    assert.equal(viaSpec.status, 422, 'the main endpoint does not resize');
  });
});

describe('Events, one resource in two groups', () => {
  let s: TestServer;
  const core = '/api/v1/namespaces/default/events';
  const v1 = '/apis/events.k8s.io/v1/namespaces/default/events';
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('serves an Event written through either group through the other, with the fields renamed', async () => {
    const created = await s.request('POST', core, {
      body: { metadata: { name: 'from-core' }, involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' }, reason: 'Started', message: 'started it', type: 'Normal', count: 2, source: { component: 'kubelet' } },
    });
    assert.equal(created.status, 201, created.text);
    const seen = await s.request('GET', `${v1}/from-core`);
    assert.equal(seen.status, 200, seen.text);
    assert.deepEqual(
      { apiVersion: seen.json.apiVersion, regarding: seen.json.regarding, note: seen.json.note, reason: seen.json.reason, deprecatedCount: seen.json.deprecatedCount, deprecatedSource: seen.json.deprecatedSource },
      { apiVersion: 'events.k8s.io/v1', regarding: { kind: 'Pod', name: 'web', namespace: 'default' }, note: 'started it', reason: 'Started', deprecatedCount: 2, deprecatedSource: { component: 'kubelet' } },
    );
    assert.equal(seen.json.message, undefined);
    const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    const fromV1 = await s.request('POST', v1, {
      body: { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'from-v1' }, eventTime: now, reportingController: 'example.com/ctl', reportingInstance: 'ctl-1', action: 'Scale', reason: 'Scaled', regarding: { kind: 'Deployment', name: 'web' }, note: 'scaled up', type: 'Normal' },
    });
    assert.equal(fromV1.status, 201, fromV1.text);
    assert.equal(fromV1.json.note, 'scaled up');
    const asCore = (await s.request('GET', `${core}/from-v1`)).json;
    assert.deepEqual([asCore.message, asCore.reportingComponent, asCore.involvedObject.name, asCore.action], ['scaled up', 'example.com/ctl', 'web', 'Scale']);
    const both = (await s.request('GET', v1)).json.items.map((e: any) => e.metadata.name).sort();
    assert.deepEqual(both, ['from-core', 'from-v1']);
    const selected = await s.request('GET', `${v1}?fieldSelector=${encodeURIComponent('regarding.name=web,reason=Scaled')}`);
    assert.deepEqual(selected.json.items.map((e: any) => e.metadata.name), ['from-v1']);
    // Each group's own field labels: core's `source` is the source's component, events.k8s.io has no such label.
    const bySource = await s.request('GET', `${core}?fieldSelector=${encodeURIComponent('source=kubelet,involvedObject.kind=Pod')}`);
    assert.deepEqual(bySource.json.items.map((e: any) => e.metadata.name), ['from-core']);
    for (const [path, label] of [[v1, 'involvedObject.name'], [v1, 'note'], [core, 'regarding.name'], [core, 'message']]) {
      const refused = await s.request('GET', `${path}?fieldSelector=${encodeURIComponent(`${label}=web`)}`);
      assert.deepEqual([refused.status, refused.json.reason, refused.json.message], [400, 'BadRequest', `field label not supported: ${label}`]);
    }
    const patched = await s.request('PATCH', `${v1}/from-core`, { body: { note: 'changed' }, contentType: 'application/merge-patch+json' });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await s.request('GET', `${core}/from-core`)).json.message, 'changed');
    const printed = await s.kubectl(['get', 'events.v1.events.k8s.io', '--no-headers']);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /Normal\s+Scaled\s+deployment\/web\s+scaled up/);
    // The request's own version decodes it: its unknown fields and wrong types are found before the conversion.
    const strict = await s.request('POST', `${v1}?fieldValidation=Strict`, { body: { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'strict' }, bogus: 1, message: 'core name' } });
    assert.deepEqual([strict.status, strict.json.message], [400, 'strict decoding error: unknown field "bogus", unknown field "message"']);
    const typed = await s.request('POST', v1, { body: { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'typed' }, note: 5 } });
    assert.deepEqual([typed.status, typed.json.message], [400, 'Event in version "v1" cannot be handled as a Event: json: cannot unmarshal number into Go struct field Event.note of type string']);
    // events.k8s.io/v1 asks for the new model; core/v1 for the involved object's namespace.
    const legacy = await s.request('POST', v1, { body: { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'legacy' }, reason: 'R', regarding: { kind: 'Pod', name: 'p', namespace: 'default' }, type: 'Info', deprecatedCount: 3 } });
    assert.equal(legacy.status, 422);
    assert.deepEqual(legacy.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
      'eventTime: Required value',
      'type: Invalid value: "": has invalid value: Info',
      'deprecatedCount: Invalid value: "": needs to be unset',
    ]);
    const elsewhere = await s.request('POST', core, { body: { metadata: { name: 'elsewhere' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'kube-system' }, reason: 'R' } });
    assert.equal(elsewhere.status, 422);
    assert.equal(elsewhere.json.message, 'Event "elsewhere" is invalid: involvedObject.namespace: Invalid value: "kube-system": does not match event.namespace');
    const deleted = await s.request('DELETE', `${v1}/from-v1`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal((await s.request('GET', `${core}/from-v1`)).status, 404);
  });
});

describe('HorizontalPodAutoscalers in autoscaling/v2 and v1', () => {
  let s: TestServer;
  const v2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
  const v1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
  const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('stores v2, serves v1 with what v1 cannot say in annotations, and defaults as upstream', async () => {
    const created = await s.request('POST', v2, {
      body: {
        metadata: { name: 'mem' },
        spec: { scaleTargetRef: target, maxReplicas: 5, metrics: [{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } }], behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } },
      },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.spec.minReplicas, 1);
    assert.deepEqual(created.json.spec.behavior, {
      scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
      scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
    const asV1 = (await s.request('GET', `${v1}/mem`)).json;
    assert.equal(asV1.apiVersion, 'autoscaling/v1');
    assert.equal(asV1.spec.targetCPUUtilizationPercentage, undefined);
    assert.deepEqual(JSON.parse(asV1.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics']), [{ type: 'Resource', resource: { name: 'memory', targetAverageValue: '500Mi' } }], 'in v1\'s own form');
    // A v1 client's update keeps what only v2 can say.
    const put = await s.request('PUT', `${v1}/mem`, { body: { ...asV1, spec: { ...asV1.spec, maxReplicas: 7 } } });
    assert.equal(put.status, 200, put.text);
    const back = (await s.request('GET', `${v2}/mem`)).json;
    assert.deepEqual([back.spec.maxReplicas, back.spec.metrics, back.spec.behavior.scaleDown.stabilizationWindowSeconds, back.metadata.annotations], [7, created.json.spec.metrics, 60, undefined]);

    const cpu = await s.request('POST', v1, { body: { metadata: { name: 'cpu' }, spec: { scaleTargetRef: target, maxReplicas: 3, targetCPUUtilizationPercentage: 50 } } });
    assert.equal(cpu.status, 201, cpu.text);
    assert.deepEqual([cpu.json.apiVersion, cpu.json.spec.targetCPUUtilizationPercentage, cpu.json.spec.minReplicas], ['autoscaling/v1', 50, 1]);
    assert.deepEqual((await s.request('GET', `${v2}/cpu`)).json.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);
    // An upstream v1 client's annotation (v1 MetricSpecs) becomes v2 metrics, the other metrics before the CPU one.
    const annotated = await s.request('POST', v1, {
      body: {
        metadata: { name: 'pods', annotations: { 'autoscaling.alpha.kubernetes.io/metrics': JSON.stringify([{ type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '10' } }]) } },
        spec: { scaleTargetRef: target, maxReplicas: 3, targetCPUUtilizationPercentage: 70 },
      },
    });
    assert.equal(annotated.status, 201, annotated.text);
    const annotatedV2 = (await s.request('GET', `${v2}/pods`)).json;
    assert.deepEqual(annotatedV2.spec.metrics, [
      { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
    ]);
    assert.equal(annotatedV2.metadata.annotations, undefined);
    const bare = await s.request('POST', v1, { body: { metadata: { name: 'bare' }, spec: { scaleTargetRef: target, maxReplicas: 3 } } });
    assert.equal(bare.json.spec.targetCPUUtilizationPercentage, 80, 'the default metric, 80% CPU, as v1 says it');
    const printed = await s.kubectl(['get', 'hpa', '--no-headers']);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /^bare\s+Deployment\/web\s+cpu: <unknown>\/80%\s+1\s+3\s+0/m);
    assert.match(printed.stdout, /^mem\s+Deployment\/web\s+memory: <unknown>\/500Mi\s+1\s+7\s+0/m);
  });
});

describe('workload validation', () => {
  let s: TestServer;
  const deployments = '/apis/apps/v1/namespaces/default/deployments';
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  const deployment = (name: string, spec: Record<string, unknown>) => ({ metadata: { name }, spec });
  const template = (labels: Record<string, string>, extra: Record<string, unknown> = {}) => ({ metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...extra } });

  it('refuses what upstream refuses, with its messages', async () => {
    const noSelector = await s.request('POST', deployments, { body: deployment('a', { template: template({ tier: 'web', app: 'a' }) }) });
    assert.equal(noSelector.status, 422);
    assert.equal(
      noSelector.json.message,
      'Deployment.apps "a" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {"app":"a","tier":"web"}: `selector` does not match template `labels`]',
    );
    const never = await s.request('POST', deployments, { body: deployment('b', { replicas: -1, selector: { matchLabels: { app: 'b' } }, template: template({ app: 'b' }, { restartPolicy: 'Never' }) }) });
    assert.deepEqual(never.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
      'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ]);
    const empty = await s.request('POST', deployments, { body: deployment('c', { selector: {}, template: template({ app: 'c' }) }) });
    assert.equal(empty.json.details.causes[0].message, 'Invalid value: {}: empty selector is invalid for deployment');
    const ok = await s.request('POST', deployments, { body: deployment('d', { selector: { matchLabels: { app: 'd' } }, template: template({ app: 'd' }) }) });
    assert.equal(ok.status, 201, ok.text);
    const moved = await s.request('PATCH', `${deployments}/d`, { body: { spec: { selector: { matchLabels: { app: 'd', x: 'y' } }, template: { metadata: { labels: { x: 'y' } } } } }, contentType: 'application/strategic-merge-patch+json' });
    assert.equal(moved.status, 422);
    assert.match(moved.json.message, /spec\.selector: Invalid value: \{"matchLabels":\{"app":"d","x":"y"\}\}: field is immutable/);
    const sts = '/apis/apps/v1/namespaces/default/statefulsets';
    const created = await s.request('POST', sts, { body: { metadata: { name: 'db' }, spec: { serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: template({ app: 'db' }) } } });
    assert.equal(created.status, 201, created.text);
    const renamed = await s.request('PATCH', `${sts}/db`, { body: { spec: { serviceName: 'other' } }, contentType: 'application/merge-patch+json' });
    assert.equal(renamed.status, 422);
    assert.match(renamed.json.message, /spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden/);
    const scaled = await s.request('PATCH', `${sts}/db`, { body: { spec: { replicas: 3 } }, contentType: 'application/merge-patch+json' });
    assert.equal(scaled.status, 200, scaled.text);
    // Containers may mount the volume claim templates (their pods get a volume for each); not other volumes.
    const mounting = (mount: string) => ({
      metadata: { name: `m-${mount}` },
      spec: {
        serviceName: 'm',
        selector: { matchLabels: { app: 'm' } },
        template: { metadata: { labels: { app: 'm' } }, spec: { containers: [{ name: 'c', image: 'x', volumeMounts: [{ name: mount, mountPath: '/d' }] }] } },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    });
    const claimed = await s.request('POST', sts, { body: mounting('data') });
    assert.equal(claimed.status, 201, claimed.text);
    const unknown = await s.request('POST', sts, { body: mounting('nothing') });
    assert.equal(unknown.status, 422);
    assert.match(unknown.json.message, /spec\.template\.spec\.containers\[0\]\.volumeMounts\[0\]\.name: Not found: "nothing"/);
  });
});

describe('pod spec and Service validation', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('refuses containers without names or images, bad ports, and Services without valid ports, with upstream\'s messages', async () => {
    const pod = await s.request('POST', '/api/v1/namespaces/default/pods', {
      body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 70000 }, { containerPort: 80, protocol: 'HTTP' }] }, { name: 'c' }] } },
    });
    assert.equal(pod.status, 422);
    assert.deepEqual(pod.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
      'spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'spec.containers[0].ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
      'spec.containers[1].image: Required value',
      'spec.containers[1].name: Duplicate value: "c"',
    ]);
    const none = await s.kubectl(['apply', '-f', '-'], { input: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: default}\nspec:\n  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d}}\n    spec: {containers: []}\n' });
    assert.notEqual(none.code, 0);
    assert.match(none.stderr, /spec\.template\.spec\.containers: Required value/);
    const svc = await s.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'svc' }, spec: { clusterIP: '10.0.0.5', ports: [{ port: 80 }, { port: 0, name: 'b' }] } } });
    assert.deepEqual(svc.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
      'spec.ports[0].name: Required value',
      'spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive',
      'spec.ports[1].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive',
    ]);
    const retried = await s.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'svc' }, spec: { clusterIP: '10.0.0.5', ports: [{ port: 80 }] } } });
    assert.equal(retried.status, 201, `a refused Service took no address: ${retried.text}`);
    const noPorts = await s.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'empty' }, spec: {} } });
    assert.equal(noPorts.json.message, 'Service "empty" is invalid: spec.ports: Required value');
  });

  it('refuses bad volumes, mounts, env, resources and probes, with upstream\'s messages', async () => {
    const container = {
      name: 'c',
      image: 'x',
      env: [{ name: '1bad' }, { name: 'ok', value: 'v', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }, { name: 'none', valueFrom: {} }],
      volumeMounts: [{ name: 'data', mountPath: '/d' }, { name: 'nowhere', mountPath: '/d' }, { name: 'data', mountPath: '/e', subPath: '../up' }],
      resources: { requests: { cpu: '2', memory: '-1' }, limits: { cpu: '1' } },
      livenessProbe: { exec: { command: ['true'] }, httpGet: { port: 80 }, successThreshold: 2 },
      readinessProbe: { periodSeconds: 5 },
    };
    const pod = await s.request('POST', '/api/v1/namespaces/default/pods', {
      body: { metadata: { name: 'vol' }, spec: { volumes: [{ name: 'data', emptyDir: {} }, { name: 'twice', emptyDir: {}, configMap: { name: 'x' } }, { name: 'bare' }], containers: [container] } },
    });
    assert.equal(pod.status, 422);
    // A volume without a source is an emptyDir (SetDefaults_Volume), so only the one with two is refused.
    assert.deepEqual(pod.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
      'spec.volumes[1].configMap: Forbidden: may not specify more than 1 volume type',
      "spec.containers[0].env[0].name: Invalid value: \"1bad\": a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
      'spec.containers[0].env[1].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
      'spec.containers[0].env[2].valueFrom: Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
      'spec.containers[0].volumeMounts[1].name: Not found: "nowhere"',
      'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/d": must be unique',
      "spec.containers[0].volumeMounts.subPath: Invalid value: \"../up\": must not contain '..'",
      'spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
      'spec.containers[0].livenessProbe.httpGet: Forbidden: may not specify more than 1 handler type',
      'spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1',
      'spec.containers[0].readinessProbe: Required value: must specify a handler type',
    ]);
    const policy = await s.request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: 'rp' }, spec: { restartPolicy: 'Sometimes', containers: [{ name: 'c', image: 'x' }] } } });
    assert.equal(policy.json.message, 'Pod "rp" is invalid: spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"');
  });
});

describe('API Priority and Fairness objects', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('keeps the mandatory flow schemas and priority levels, defaults new ones and prints them as upstream', async () => {
    const schemas = (await s.request('GET', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas')).json.items.map((f: any) => `${f.metadata.name}:${f.spec.matchingPrecedence}`);
    assert.deepEqual(schemas, ['catch-all:10000', 'exempt:1']);
    const created = await s.request('POST', '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations', {
      body: { metadata: { name: 'workload' }, spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } } },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json.spec.limited, { limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } }, nominalConcurrencyShares: 30, lendablePercent: 0 });
    const printed = await s.kubectl(['get', 'prioritylevelconfigurations', '--no-headers']);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /^catch-all\s+Limited\s+5\s+<none>\s+<none>\s+<none>/m);
    assert.match(printed.stdout, /^workload\s+Limited\s+30\s+64\s+8\s+50/m);
  });
});

describe('field selectors on built-in kinds', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('select by each kind\'s field labels only, and refuse others with the kind\'s own message', async () => {
    const pods = '/api/v1/namespaces/default/pods';
    for (const [name, nodeName] of [['on-a', 'node-a'], ['on-b', 'node-b']]) {
      const created = await s.request('POST', pods, { body: { metadata: { name }, spec: { nodeName, containers: [{ name: 'c', image: 'x' }] } } });
      assert.equal(created.status, 201, created.text);
    }
    const names = async (path: string, selector: string) => {
      const r = await s.request('GET', `${path}?fieldSelector=${encodeURIComponent(selector)}`);
      assert.equal(r.status, 200, r.text);
      return r.json.items.map((o: any) => o.metadata.name);
    };
    assert.deepEqual(await names(pods, 'spec.nodeName=node-a'), ['on-a']);
    assert.deepEqual(await names(pods, 'spec.host=node-b'), ['on-b'], 'old clients\' spec.host is spec.nodeName');
    assert.deepEqual(await names(pods, 'status.podIPs=,spec.hostNetwork=false'), ['on-a', 'on-b']);
    const secret = await s.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 'tls' }, type: 'Opaque', data: {} } });
    assert.equal(secret.status, 201, secret.text);
    assert.deepEqual(await names('/api/v1/namespaces/default/secrets', 'type=Opaque'), ['tls']);
    // A kind without a conversion of its own: metadata.name and metadata.namespace, also for a cluster-scoped one.
    assert.ok((await names('/apis/rbac.authorization.k8s.io/v1/clusterroles', 'metadata.namespace=,metadata.name=admin')).includes('admin'));
    const refused: Array<[string, string, string]> = [
      ['/api/v1/namespaces/default/configmaps', 'data.x=1', '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"'],
      [pods, 'spec.containers=x', 'field label not supported: spec.containers'],
      ['/api/v1/nodes', 'metadata.namespace=default', 'field label not supported: metadata.namespace'],
      ['/apis/batch/v1/namespaces/default/jobs', 'spec.parallelism=1', 'field label "spec.parallelism" not supported for batchv1.Job'],
      ['/apis/apps/v1/namespaces/default/deployments', 'spec.replicas=1', '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'],
    ];
    for (const [path, selector, message] of refused) {
      for (const watch of ['', 'watch=1&']) {
        const r = await s.request('GET', `${path}?${watch}fieldSelector=${encodeURIComponent(selector)}`);
        assert.deepEqual([r.status, r.json.reason, r.json.message], [400, 'BadRequest', message], `${path} ${watch}${selector}`);
      }
    }
    const collection = await s.request('DELETE', `/api/v1/namespaces/default/configmaps?fieldSelector=${encodeURIComponent('data.x=1')}`);
    assert.equal(collection.status, 400, 'deletecollection reads the selector the same way');
  });
});
