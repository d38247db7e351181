// Built-in printers: the columns and cells kube-apiserver's printers produce for the resources kapi serves
// (each group's rows name their printer).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BUILTIN_RESOURCES } from '../../src/apis/builtin.js';
import { NAMESPACES } from '../../src/apis/core/namespaces.js';
import { humanDuration, tableConvertorOf, tableForList, tableForObject, type TableConvertor } from '../../src/printing/index.js';

/** The printer a group's row gives the resource (undefined: none, or no such row). */
const printerOf = (group: string, resource: string) =>
  [...BUILTIN_RESOURCES, NAMESPACES].find((r) => r.names.group === group && r.names.resource === resource)?.printer;
const hasBuiltinPrinter = (group: string, resource: string) => printerOf(group, resource) !== undefined;
const builtinTableConvertor = (group: string, resource: string): TableConvertor => tableConvertorOf(printerOf(group, resource));

const NOW = Date.parse('2024-05-01T12:00:00Z');
const created = '2024-05-01T11:00:00Z'; // 60m before NOW
const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, creationTimestamp: created, resourceVersion: '5', ...extra });

function cells(group: string, resource: string, obj: Record<string, unknown>): unknown[] {
  return tableForObject(builtinTableConvertor(group, resource), obj, { now: NOW }).rows![0].cells;
}

function names(group: string, resource: string): string[] {
  return builtinTableConvertor(group, resource).columns.map((c) => (c.priority ? `${c.name}*` : c.name));
}

describe('built-in printers', () => {
  it('prints namespaces, configmaps, secrets, service accounts and leases', () => {
    assert.deepEqual(names('', 'namespaces'), ['Name', 'Status', 'Age']);
    assert.deepEqual(cells('', 'namespaces', { metadata: meta('default'), status: { phase: 'Active' } }), ['default', 'Active', '60m']);
    assert.deepEqual(names('', 'configmaps'), ['Name', 'Data', 'Age']);
    assert.deepEqual(cells('', 'configmaps', { metadata: meta('cm'), data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } }), ['cm', 3, '60m']);
    assert.deepEqual(names('', 'secrets'), ['Name', 'Type', 'Data', 'Age']);
    assert.deepEqual(cells('', 'secrets', { metadata: meta('s'), type: 'Opaque', data: { a: 'eA==' }, stringData: { b: 'y' } }), ['s', 'Opaque', 2, '60m']);
    assert.deepEqual(names('', 'serviceaccounts'), ['Name', 'Secrets', 'Age']);
    assert.deepEqual(cells('', 'serviceaccounts', { metadata: meta('default') }), ['default', 0, '60m']);
    assert.deepEqual(names('coordination.k8s.io', 'leases'), ['Name', 'Holder', 'Age']);
    assert.deepEqual(cells('coordination.k8s.io', 'leases', { metadata: meta('l'), spec: { holderIdentity: 'node-1' } }), ['l', 'node-1', '60m']);
    const ns = builtinTableConvertor('', 'namespaces').columns;
    assert.deepEqual(ns[1], { name: 'Status', type: 'string', format: '', description: 'The status of the namespace', priority: 0 });
    assert.equal(ns[0].format, 'name');
  });

  it('prints services and endpoints', () => {
    assert.deepEqual(names('', 'services'), ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector*']);
    const svc = { metadata: meta('kubernetes'), spec: { type: 'ClusterIP', clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1'], ports: [{ port: 443, protocol: 'TCP', targetPort: 6443 }] } };
    assert.deepEqual(cells('', 'services', svc), ['kubernetes', 'ClusterIP', '10.0.0.1', '<none>', '443/TCP', '60m', '<none>']);
    const np = { metadata: meta('web'), spec: { type: 'NodePort', clusterIPs: ['10.0.0.9'], ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }], selector: { b: '2', a: '1' } } };
    assert.deepEqual(cells('', 'services', np), ['web', 'NodePort', '10.0.0.9', '<none>', '80:30080/TCP,53/UDP', '60m', 'a=1,b=2']);
    const lb = { metadata: meta('lb'), spec: { type: 'LoadBalancer', clusterIP: '10.0.0.3' } };
    assert.deepEqual(cells('', 'services', lb).slice(0, 5), ['lb', 'LoadBalancer', '10.0.0.3', '<pending>', '<none>']);
    const ep = {
      metadata: meta('kubernetes'),
      subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }, { ip: 'fd00::1' }, { ip: '10.0.0.4' }], ports: [{ port: 6443 }] }],
    };
    assert.deepEqual(cells('', 'endpoints', ep), ['kubernetes', '10.0.0.1:6443,10.0.0.2:6443,[fd00::1]:6443 + 1 more...', '60m']);
    assert.deepEqual(cells('', 'endpoints', { metadata: meta('none') }), ['none', '<none>', '60m']);
  });

  it('prints core and events.k8s.io events', () => {
    assert.deepEqual(names('', 'events'), ['Last Seen', 'Type', 'Reason', 'Object', 'Subobject*', 'Source*', 'Message', 'First Seen*', 'Count*', 'Name*']);
    const ev = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: meta('pod.1'),
      involvedObject: { kind: 'Pod', name: 'web-1', fieldPath: 'spec.containers{web}' },
      reason: 'Pulled',
      message: '  Pulled image  \n',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2024-05-01T11:50:00Z',
      lastTimestamp: '2024-05-01T11:59:30Z',
      count: 3,
      type: 'Normal',
    };
    assert.deepEqual(cells('', 'events', ev), ['30s', 'Normal', 'Pulled', 'pod/web-1', 'spec.containers{web}', 'kubelet, node-1', 'Pulled image', '10m', 3, 'pod.1']);
    const v1 = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: meta('e2'),
      eventTime: '2024-05-01T11:59:00.000000Z',
      regarding: { kind: 'Node', name: 'n1' },
      note: 'Starting',
      reason: 'Starting',
      type: 'Normal',
      reportingController: 'kubelet',
      reportingInstance: 'n1',
    };
    assert.deepEqual(cells('events.k8s.io', 'events', v1), ['60s', 'Normal', 'Starting', 'node/n1', '', 'kubelet, n1', 'Starting', '60s', 1, 'e2']);
  });

  it('prints pods, nodes and workloads', () => {
    assert.deepEqual(names('', 'pods'), ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP*', 'Node*', 'Nominated Node*', 'Readiness Gates*']);
    const pod = {
      metadata: meta('web-1'),
      spec: { containers: [{ name: 'a' }, { name: 'b' }], nodeName: 'node-1' },
      status: {
        phase: 'Running',
        podIPs: [{ ip: '10.1.0.5' }],
        containerStatuses: [
          { name: 'a', ready: true, restartCount: 2, state: { running: {} }, lastState: { terminated: { finishedAt: '2024-05-01T11:58:00Z', exitCode: 1 } } },
          { name: 'b', ready: false, restartCount: 0, state: { waiting: { reason: 'CrashLoopBackOff' } } },
        ],
      },
    };
    assert.deepEqual(cells('', 'pods', pod), ['web-1', '1/2', 'CrashLoopBackOff', '2 (2m ago)', '60m', '10.1.0.5', 'node-1', '<none>', '<none>']);
    const done = tableForObject(builtinTableConvertor('', 'pods'), { metadata: meta('job'), spec: { containers: [{ name: 'a' }] }, status: { phase: 'Succeeded' } }, { now: NOW });
    assert.deepEqual(done.rows![0].conditions, [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }]);
    assert.deepEqual(done.rows![0].cells.slice(1, 4), ['0/1', 'Succeeded', '0']);
    const init = { metadata: meta('i'), spec: { initContainers: [{ name: 'x' }, { name: 'y' }], containers: [{ name: 'a' }] }, status: { phase: 'Pending', initContainerStatuses: [{ state: { terminated: { exitCode: 0 } } }, { state: { running: {} } }] } };
    assert.equal(cells('', 'pods', init)[2], 'Init:1/2');
    assert.equal(cells('', 'pods', { ...pod, metadata: meta('web-1', { deletionTimestamp: created }) })[2], 'Terminating');

    assert.deepEqual(names('', 'nodes'), ['Name', 'Status', 'Roles', 'Age', 'Version', 'Internal-IP*', 'External-IP*', 'OS-Image*', 'Kernel-Version*', 'Container-Runtime*']);
    const node = {
      metadata: meta('n1', { labels: { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/master': '' } }),
      spec: { unschedulable: true },
      status: { conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: '192.168.0.2' }], nodeInfo: { kubeletVersion: 'v1.20.2' } },
    };
    assert.deepEqual(cells('', 'nodes', node), ['n1', 'Ready,SchedulingDisabled', 'control-plane,master', '60m', 'v1.20.2', '192.168.0.2', '<none>', '<unknown>', '<unknown>', '<unknown>']);

    assert.deepEqual(names('apps', 'deployments'), ['Name', 'Ready', 'Up-to-date', 'Available', 'Age', 'Containers*', 'Images*', 'Selector*']);
    const deploy = {
      metadata: meta('nginx'),
      spec: { replicas: 3, selector: { matchLabels: { app: 'nginx' } }, template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1.19' }, { name: 'side', image: 'busybox' }] } } },
      status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
    };
    assert.deepEqual(cells('apps', 'deployments', deploy), ['nginx', '2/3', 3, 2, '60m', 'nginx,side', 'nginx:1.19,busybox', 'app=nginx']);
    assert.deepEqual(cells('apps', 'replicasets', { metadata: meta('rs'), spec: { selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }] } } }), [
      'rs',
      1,
      0,
      0,
      '60m',
      '',
      '',
      'tier in (a,b)',
    ]);
    assert.deepEqual(cells('apps', 'statefulsets', { metadata: meta('db'), spec: { replicas: 2 }, status: { readyReplicas: 1 } }), ['db', '1/2', '60m', '', '']);
    assert.deepEqual(names('apps', 'daemonsets'), ['Name', 'Desired', 'Current', 'Ready', 'Up-to-date', 'Available', 'Node Selector', 'Age', 'Containers*', 'Images*', 'Selector*']);
    assert.deepEqual(cells('apps', 'daemonsets', { metadata: meta('ds'), spec: { template: { spec: { nodeSelector: { os: 'linux' } } } } }).slice(0, 8), ['ds', 0, 0, 0, 0, 0, 'os=linux', '60m']);
    assert.deepEqual(cells('', 'replicationcontrollers', { metadata: meta('rc'), spec: { replicas: 2, selector: { app: 'x' } } }), ['rc', 2, 0, 0, '60m', '', '', 'app=x']);
    assert.deepEqual(cells('', 'podtemplates', { metadata: meta('pt'), template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } }), ['pt', 'c', 'i', 'a=b']);
    assert.deepEqual(
      cells('', 'resourcequotas', { metadata: meta('q'), status: { hard: { 'limits.cpu': '2', pods: '10', 'requests.cpu': '1' }, used: { pods: '3' } } }),
      ['q', '60m', 'pods: 3/10, requests.cpu: 0/1', 'limits.cpu: 0/2'],
    );
  });

  it('uses the default Name / Created At table for resources without a printer', () => {
    assert.equal(hasBuiltinPrinter('apiextensions.k8s.io', 'customresourcedefinitions'), false);
    const c = builtinTableConvertor('apiextensions.k8s.io', 'customresourcedefinitions');
    assert.deepEqual(
      c.columns.map((x) => [x.name, x.type, x.format]),
      [
        ['Name', 'string', 'name'],
        ['Created At', 'date', ''],
      ],
    );
    const t = tableForList(c, [{ metadata: { name: 'crontabs.stable.example.com', creationTimestamp: '2024-05-01T10:00:00Z' } }, { metadata: { name: 'x' } }], { resourceVersion: '3' }, { now: NOW });
    assert.deepEqual(
      t.rows!.map((r) => r.cells),
      [
        ['crontabs.stable.example.com', '2024-05-01T10:00:00Z'],
        ['x', '0001-01-01T00:00:00Z'],
      ],
    );
    assert.equal(tableForList(c, [], undefined, { now: NOW }).rows, null);
    assert.deepEqual(names('', 'limitranges'), ['Name', 'Created At']);
  });

  it('formats ages as duration.HumanDuration', () => {
    const s = 1000;
    const cases: [number, string][] = [
      [-3 * s, '<invalid>'],
      [-1500, '0s'],
      [0, '0s'],
      [119 * s, '119s'],
      [120 * s, '2m'],
      [185 * s, '3m5s'],
      [10 * 60 * s, '10m'],
      [179 * 60 * s, '179m'],
      [3 * 3600 * s, '3h'],
      [(5 * 3600 + 10 * 60) * s, '5h10m'],
      [47 * 3600 * s, '47h'],
      [(2 * 24 + 3) * 3600 * s, '2d3h'],
      [8 * 24 * 3600 * s, '8d'],
      [(2 * 365 + 10) * 24 * 3600 * s, '2y10d'],
      [9 * 365 * 24 * 3600 * s, '9y'],
    ];
    for (const [ms, text] of cases) assert.equal(humanDuration(ms), text, String(ms));
  });
});
