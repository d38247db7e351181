/** The seeds' CronTab walkthrough and everyday kubectl commands against a real kapi (Debian's kubectl 1.20). */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KUBECTL, startTestServer, type TestServer } from './harness.js';

const CRD_YAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                cronSpec:
                  type: string
                image:
                  type: string
                replicas:
                  type: integer
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames:
    - ct
`;

const CR_YAML = `apiVersion: "stable.example.com/v1"
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
`;

describe('kubectl against kapi', () => {
  let s: TestServer;
  const ok = async (args: string[], input?: string) => {
    const r = await s.kubectl(args, { input });
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('creates the CronTab CRD and waits for it to be established', async () => {
    assert.match(await ok(['apply', '-f', '-'], CRD_YAML), /customresourcedefinition.apiextensions.k8s.io\/crontabs.stable.example.com created/);
    assert.match(await ok(['wait', '--for', 'condition=established', '--timeout=10s', 'crd/crontabs.stable.example.com']), /condition met/);
    assert.match(await ok(['get', 'crd']), /crontabs\.stable\.example\.com/);
  });

  it('creates the CronTab object and reads it by plural, singular and short name', async () => {
    assert.match(await ok(['apply', '-f', '-'], CR_YAML), /crontab.stable.example.com\/my-new-cron-object created/);
    for (const name of ['crontabs', 'crontab', 'ct']) assert.match(await ok(['get', name]), /my-new-cron-object/);
    const yaml = await ok(['get', 'ct', 'my-new-cron-object', '-o', 'yaml']);
    assert.match(yaml, /cronSpec: '\* \* \* \* \*\/5'/);
    assert.match(yaml, /image: my-awesome-cron-image/);
    const json = JSON.parse(await ok(['get', 'crontab', 'my-new-cron-object', '-o', 'json']));
    assert.equal(json.kind, 'CronTab');
    assert.equal(json.metadata.namespace, 'default');
    assert.equal((await ok(['get', 'crontabs', '-o', 'name'])).trim(), 'crontab.stable.example.com/my-new-cron-object');
    assert.match(await ok(['apply', '-f', '-'], CR_YAML), /unchanged/);
  });

  it('labels, annotates and patches', async () => {
    await ok(['label', 'crontab', 'my-new-cron-object', 'tier=front']);
    await ok(['annotate', 'crontab', 'my-new-cron-object', 'note=hello']);
    await ok(['patch', 'crontab', 'my-new-cron-object', '--type=merge', '-p', '{"spec":{"image":"merged"}}']);
    await ok(['patch', 'crontab', 'my-new-cron-object', '--type=json', '-p', '[{"op":"replace","path":"/spec/cronSpec","value":"*/1 * * * *"}]']);
    const obj = JSON.parse(await ok(['get', 'crontab', 'my-new-cron-object', '-o', 'json']));
    assert.equal(obj.metadata.labels.tier, 'front');
    assert.equal(obj.metadata.annotations.note, 'hello');
    assert.equal(obj.spec.image, 'merged');
    assert.equal(obj.spec.cronSpec, '*/1 * * * *');
    assert.match(await ok(['get', 'crontabs', '-l', 'tier=front', '-o', 'name']), /my-new-cron-object/);
    assert.equal((await ok(['get', 'crontabs', '-l', 'tier=back', '-o', 'name'])).trim(), '');
  });

  it('lists the resource in api-resources and describes it', async () => {
    const resources = await ok(['api-resources', '--api-group=stable.example.com']);
    assert.match(resources, /crontabs\s+ct\s+stable\.example\.com(\/v1)?\s+true\s+CronTab/);
    const described = await ok(['describe', 'crontab', 'my-new-cron-object']);
    assert.match(described, /Name:\s+my-new-cron-object/);
    assert.match(described, /Kind:\s+CronTab/);
  });

  it('applies YAML with several documents', async () => {
    const docs = ['one', 'two'].map((n) => CR_YAML.replace('my-new-cron-object', n)).join('---\n');
    const out = await ok(['apply', '-f', '-'], docs);
    assert.match(out, /crontab.stable.example.com\/one created/);
    assert.match(out, /crontab.stable.example.com\/two created/);
    assert.match(await ok(['delete', 'crontab', 'one', 'two']), /deleted/);
  });

  it('watches with get -w', async () => {
    const child = spawn(KUBECTL, ['--kubeconfig', s.kapi.kubeconfigPath, '--cache-dir', join(s.dir, 'kube-cache'), 'get', 'crontabs', '-w', '-o', 'name'], {
      env: { ...process.env, HOME: s.dir },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      const waitFor = async (re: RegExp) => {
        const deadline = Date.now() + 10_000;
        while (!re.test(out)) {
          if (Date.now() > deadline) throw new Error(`kubectl get -w printed: ${out}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      await waitFor(/my-new-cron-object/);
      await ok(['apply', '-f', '-'], CR_YAML.replace('my-new-cron-object', 'watched-one'));
      await waitFor(/watched-one/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('deletes the object, then the CRD', async () => {
    assert.match(await ok(['delete', 'crontab', 'my-new-cron-object']), /crontab.stable.example.com "my-new-cron-object" deleted/);
    assert.match((await s.kubectl(['get', 'crontab', 'my-new-cron-object'])).stderr, /NotFound|not found/);
    assert.match(await ok(['delete', '-f', '-'], CRD_YAML), /deleted/);
    const gone = await s.kubectl(['get', 'crontabs']);
    assert.notEqual(gone.code, 0);
    // With kubectl's discovery cache still naming crontabs, the list itself answers NotFound.
    assert.match(gone.stderr, /the server doesn't have a resource type "crontabs"|NotFound/);
  });

  it('applies a Deployment twice: strategic merge patch keeps list elements by merge key', async () => {
    const deploy = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: ${image}
        ports:
        - containerPort: 80
      - name: sidecar
        image: busybox
`;
    assert.match(await ok(['apply', '-f', '-'], deploy('nginx:1')), /deployment.apps\/web created/);
    assert.match(await ok(['apply', '-f', '-'], deploy('nginx:2')), /deployment.apps\/web configured/);
    const d = JSON.parse(await ok(['get', 'deployment', 'web', '-o', 'json']));
    assert.deepEqual(d.spec.template.spec.containers.map((c: any) => [c.name, c.image]), [['web', 'nginx:2'], ['sidecar', 'busybox']]);
    assert.deepEqual(d.spec.template.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
    assert.equal(d.metadata.generation, 2);
    // kubectl patch's idiom: a patch that names one container merges it by name, by the Go types' metadata.
    await ok(['patch', 'deployment', 'web', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:2","env":[{"name":"A","value":"1"}]}]}}}}']);
    const p = JSON.parse(await ok(['get', 'deployment', 'web', '-o', 'json']));
    assert.deepEqual(p.spec.template.spec.containers.map((c: any) => [c.name, c.image]), [['web', 'nginx:2'], ['sidecar', 'busybox:2']]);
    assert.deepEqual(p.spec.template.spec.containers[1].env, [{ name: 'A', value: '1' }]);
    assert.deepEqual(p.spec.template.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
    // The workloads' /scale (#26): kubectl scale, and the Scale with the selector as text.
    assert.match(await ok(['scale', 'deployment', 'web', '--replicas=4']), /deployment.apps\/web scaled/);
    const scale = await s.request('GET', '/apis/apps/v1/namespaces/default/deployments/web/scale');
    assert.equal(scale.status, 200, scale.text);
    assert.deepEqual([scale.json.kind, scale.json.spec.replicas, scale.json.status.selector], ['Scale', 4, 'app=web']);
    const negative = await s.request('PUT', '/apis/apps/v1/namespaces/default/deployments/web/scale', { body: { ...scale.json, spec: { replicas: -1 } } });
    assert.equal(negative.status, 422);
    assert.equal(negative.json.message, 'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
  });

  // An operator's install bundle as kubebuilder writes it (#26): namespace, CRD, RBAC, service, deployment.
  it('applies a kubebuilder-style install bundle, client-side and server-side', async () => {
    const bundle = `apiVersion: v1
kind: Namespace
metadata:
  name: op-system
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: guestbooks.webapp.example.com
spec:
  group: webapp.example.com
  names: {kind: Guestbook, plural: guestbooks, singular: guestbook}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: op-controller-manager, namespace: op-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: op-manager-role}
rules:
- apiGroups: [webapp.example.com]
  resources: [guestbooks, guestbooks/status]
  verbs: [get, list, watch, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: op-manager-rolebinding}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: op-manager-role}
subjects:
- {kind: ServiceAccount, name: op-controller-manager, namespace: op-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: op-leader-election-role, namespace: op-system}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: op-leader-election-rolebinding, namespace: op-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: op-leader-election-role}
subjects:
- {kind: ServiceAccount, name: op-controller-manager, namespace: op-system}
---
apiVersion: v1
kind: Service
metadata: {name: op-metrics-service, namespace: op-system}
spec:
  ports: [{name: https, port: 8443, protocol: TCP, targetPort: 8443}]
  selector: {control-plane: controller-manager}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: op-controller-manager, namespace: op-system}
spec:
  replicas: 1
  selector: {matchLabels: {control-plane: controller-manager}}
  template:
    metadata: {labels: {control-plane: controller-manager}}
    spec:
      serviceAccountName: op-controller-manager
      containers:
      - name: manager
        image: controller:latest
        args: [--leader-elect]
        resources: {limits: {cpu: 500m, memory: 128Mi}}
`;
    const created = await ok(['apply', '-f', '-'], bundle);
    for (const what of ['namespace/op-system', 'customresourcedefinition.apiextensions.k8s.io/guestbooks.webapp.example.com', 'serviceaccount/op-controller-manager', 'clusterrole.rbac.authorization.k8s.io/op-manager-role', 'clusterrolebinding.rbac.authorization.k8s.io/op-manager-rolebinding', 'role.rbac.authorization.k8s.io/op-leader-election-role', 'rolebinding.rbac.authorization.k8s.io/op-leader-election-rolebinding', 'service/op-metrics-service', 'deployment.apps/op-controller-manager']) {
      assert.match(created, new RegExp(`${what.replace(/\./g, '\\.')} created`), created);
    }
    assert.match(await ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], bundle), /clusterrole\.rbac\.authorization\.k8s\.io\/op-manager-role serverside-applied/);
    const role = JSON.parse(await ok(['get', 'clusterrole', 'op-manager-role', '-o', 'json']));
    assert.deepEqual(role.rules[0].resources, ['guestbooks', 'guestbooks/status']);
    assert.match(await ok(['get', 'rolebindings', '-n', 'op-system']), /op-leader-election-rolebinding/);
  });

  it('works with namespaces and built-in resources', async () => {
    assert.match(await ok(['get', 'ns']), /^NAME\s+STATUS\s+AGE\ndefault\s+Active\s+\d+s$/m);
    await ok(['create', 'namespace', 'team-a']);
    await ok(['create', 'configmap', 'settings', '-n', 'team-a', '--from-literal=mode=fast']);
    const cm = JSON.parse(await ok(['get', 'cm', 'settings', '-n', 'team-a', '-o', 'json']));
    assert.equal(cm.data.mode, 'fast');
    assert.match(await ok(['get', 'svc', 'kubernetes', '-n', 'default']), /kubernetes/);
    assert.match(await ok(['delete', 'namespace', 'team-a', '--timeout=20s']), /namespace "team-a" deleted/);
    const gone = await s.kubectl(['get', 'cm', 'settings', '-n', 'team-a']);
    assert.match(gone.stderr, /NotFound/);
    const refused = await s.kubectl(['delete', 'namespace', 'default']);
    assert.match(refused.stderr, /namespaces "default" is forbidden: this namespace may not be deleted/);
  });
});
