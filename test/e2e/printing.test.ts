/** Server-side printing: Tables for custom resources' printer columns and built-ins, with kubectl get. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, watchEvents, type TestServer } from './harness.js';

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'crontabs.stable.example.com' },
  spec: {
    group: 'stable.example.com',
    scope: 'Namespaced',
    names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', shortNames: ['ct'], categories: ['all'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        additionalPrinterColumns: [
          { name: 'Spec', type: 'string', description: 'The cron spec defining the interval a CronJob is run', jsonPath: '.spec.cronSpec' },
          { name: 'Replicas', type: 'integer', description: 'The number of jobs launched by the CronJob', jsonPath: '.spec.replicas' },
          { name: 'Image', type: 'string', priority: 1, jsonPath: '.spec.image' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
      },
    ],
  },
};
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';

describe('server-side printing', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRD })).status, 201);
    const obj = { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'my-new-cron-object', labels: { tier: 'x' } }, spec: { cronSpec: '* * * * */5', image: 'my-awesome-cron-image', replicas: 2 } };
    assert.equal((await s.request('POST', CT, { body: obj })).status, 201);
  });
  after(() => s.stop());

  it('answers a meta.k8s.io Table with the CRD columns', async () => {
    const res = await s.request('GET', CT, { accept: TABLE });
    assert.equal(res.status, 200);
    assert.equal(res.json.kind, 'Table');
    assert.equal(res.json.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(res.json.columnDefinitions.map((c: any) => [c.name, c.type, c.priority]), [
      ['Name', 'string', 0],
      ['Spec', 'string', 0],
      ['Replicas', 'integer', 0],
      ['Image', 'string', 1],
      ['Age', 'date', 0],
    ]);
    const [row] = res.json.rows;
    assert.deepEqual(row.cells.slice(0, 4), ['my-new-cron-object', '* * * * */5', 2, 'my-awesome-cron-image']);
    assert.equal(row.object.kind, 'PartialObjectMetadata');
    assert.equal(row.object.metadata.name, 'my-new-cron-object');
    const none = await s.request('GET', `${CT}?includeObject=None`, { accept: TABLE });
    assert.equal(none.json.rows[0].object, null);
    const one = await s.request('GET', `${CT}/my-new-cron-object`, { accept: TABLE });
    assert.equal(one.json.rows.length, 1);
    const bad = await s.request('GET', `${CT}?includeObject=Everything`, { accept: TABLE });
    assert.equal(bad.status, 400);
  });

  it('streams watch events as Table rows, column definitions only first', async () => {
    const w = watchEvents(s.kapi, `${CT}?watch=true`, 2, 5000, TABLE);
    assert.equal(await w.status, 200);
    await s.request('PATCH', `${CT}/my-new-cron-object`, { body: { spec: { replicas: 3 } }, contentType: 'application/merge-patch+json' });
    const [added, modified] = await w.events;
    assert.equal(added.type, 'ADDED');
    assert.equal(added.object.kind, 'Table');
    assert.equal(added.object.columnDefinitions.length, 5);
    assert.equal(modified.object.kind, 'Table');
    assert.ok(!modified.object.columnDefinitions?.length, 'column definitions only with the first event');
    assert.equal(modified.object.rows[0].cells[2], 3);
  });

  it('prints with kubectl get, -o wide, --show-labels and get all', async () => {
    const plain = await s.kubectl(['get', 'crontabs']);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^NAME\s+SPEC\s+REPLICAS\s+AGE\nmy-new-cron-object\s+\* \* \* \* \*\/5\s+3\s+\d+s\n$/);
    const wide = await s.kubectl(['get', 'crontabs', '-o', 'wide']);
    assert.match(wide.stdout, /^NAME\s+SPEC\s+REPLICAS\s+IMAGE\s+AGE\n/);
    assert.match(wide.stdout, /my-awesome-cron-image/);
    const labels = await s.kubectl(['get', 'crontabs', '--show-labels']);
    assert.match(labels.stdout, /LABELS\nmy-new-cron-object.*tier=x\n$/);
    const all = await s.kubectl(['get', 'all', '-n', 'default']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /crontab\.stable\.example\.com\/my-new-cron-object/);
    assert.match(all.stdout, /service\/kubernetes\s+ClusterIP\s+10\.0\.0\.1/);
    const crds = await s.kubectl(['get', 'crd']);
    assert.match(crds.stdout, /^NAME\s+CREATED AT\ncrontabs\.stable\.example\.com\s+\d{4}-/);
  });

  it('rejects a printer column JSONPath that does not parse', async () => {
    const bad = structuredClone(CRD) as any;
    bad.metadata.name = 'bads.stable.example.com';
    bad.spec.names = { plural: 'bads', kind: 'Bad' };
    bad.spec.versions[0].additionalPrinterColumns = [{ name: 'X', type: 'string', jsonPath: '.spec[' }];
    const res = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: bad });
    assert.equal(res.status, 422);
    assert.match(res.json.message, /spec\.additionalPrinterColumns\[0\]\.JSONPath: Invalid value: "\.spec\[": /);
  });
});

describe('server-side printing of the other groups\' built-ins', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('prints Jobs, CronJobs, RoleBindings, Ingresses, PodDisruptionBudgets and StorageClasses with upstream\'s columns', async () => {
    const input = `
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: default}
spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: default}
spec: {schedule: "0 3 * * *", jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: readers, namespace: default}
roleRef: {kind: ClusterRole, name: view}
subjects: [{kind: User, name: alice}, {kind: ServiceAccount, name: bot, namespace: default}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: default}
spec: {rules: [{host: a.example.com}, {host: b.example.com}], tls: [{hosts: [a.example.com]}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: keep, namespace: default}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: example.com/fast
`;
    const applied = await s.kubectl(['apply', '-f', '-'], { input });
    assert.equal(applied.code, 0, applied.stderr);
    const get = async (...args: string[]) => {
      const r = await s.kubectl(['get', ...args]);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.split('\n')[0].trim().split(/\s{2,}/).join('|') + '\n' + r.stdout.split('\n')[1].trim().split(/\s{2,}/).join('|');
    };
    assert.match(await get('jobs'), /^NAME\|STATUS\|COMPLETIONS\|DURATION\|AGE\nonce\|Running\|0\/1\|\d+s$/);
    assert.match(await get('cronjobs'), /^NAME\|SCHEDULE\|TIMEZONE\|SUSPEND\|ACTIVE\|LAST SCHEDULE\|AGE\nnightly\|0 3 \* \* \*\|<none>\|False\|0\|<none>\|\d+s$/);
    assert.match(await get('rolebindings', '-o', 'wide'), /^NAME\|ROLE\|AGE\|USERS\|GROUPS\|SERVICEACCOUNTS\nreaders\|ClusterRole\/view\|\d+s\|alice\|default:bot$/);
    assert.match(await get('ingresses'), /^NAME\|CLASS\|HOSTS\|ADDRESS\|PORTS\|AGE\nweb\|<none>\|a\.example\.com,b\.example\.com\|80, 443\|\d+s$/);
    assert.match(await get('pdb'), /^NAME\|MIN AVAILABLE\|MAX UNAVAILABLE\|ALLOWED DISRUPTIONS\|AGE\nkeep\|1\|N\/A\|0\|\d+s$/);
    assert.match(await get('storageclasses'), /^NAME\|PROVISIONER\|RECLAIMPOLICY\|VOLUMEBINDINGMODE\|ALLOWVOLUMEEXPANSION\|AGE\nfast \(default\)\|example\.com\/fast\|Delete\|Immediate\|false\|\d+s$/);
  });
});
