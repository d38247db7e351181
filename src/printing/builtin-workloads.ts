/**
 * Printers of the workload built-ins, as kube-apiserver's printers show them
 * (wide form): Pod, Node, Deployment, ReplicaSet, StatefulSet, DaemonSet,
 * ReplicationController, PodTemplate and ResourceQuota. Objects are read in
 * their v1 JSON form; unset replica counts read as the defaulted 1.
 */
import { compareGoStrings } from '../machinery/go-text.js';
import type { KObject } from '../api/object.js';
import { timestampMillis, translateTimestampSince } from './duration.js';
import {
  age,
  ageColumn,
  column,
  containerCells,
  docColumn,
  formatLabels,
  formatLabelSelector,
  int,
  list,
  nameColumn,
  nameOf,
  printer,
  record,
  selectorString,
  str,
} from './printer-helpers.js';
import type { TableConvertor, TableRowCondition } from './types.js';

const CONTAINERS = 'Names of each container in the template.';
const IMAGES = 'Images referenced by each container in the template.';

const replicas = (v: unknown): number | bigint => (v === undefined || v === null ? 1 : int(v));

const POD_SUCCEEDED: TableRowCondition[] = [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }];
const POD_FAILED: TableRowCondition[] = [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];

export const podPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      column('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
      column('Status', 'string', 'The aggregate status of the containers in this pod.'),
      column('Restarts', 'string', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
      ageColumn(),
      docColumn('IP', 'string', 'core/v1.PodStatus', 'podIP', 1),
      docColumn('Node', 'string', 'core/v1.PodSpec', 'nodeName', 1),
      docColumn('Nominated Node', 'string', 'core/v1.PodStatus', 'nominatedNodeName', 1),
      docColumn('Readiness Gates', 'string', 'core/v1.PodSpec', 'readinessGates', 1),
    ],
    podRow,
  );

function podRow(pod: KObject, now: number) {
  const spec = record(pod.spec);
  const status = record(pod.status);
  const conditions = list(status.conditions);
  let restarts = 0;
  let readyContainers = 0;
  let lastRestart: number | undefined;
  let reason = str(status.reason) || str(status.phase);
  for (const c of conditions) if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';

  const noteRestart = (c: KObject) => {
    restarts += Number(int(c.restartCount));
    const finished = timestampMillis(c.lastState?.terminated?.finishedAt);
    if (c.lastState?.terminated && finished !== undefined && (lastRestart === undefined || finished > lastRestart)) lastRestart = finished;
  };

  let initializing = false;
  const initStatuses = list(status.initContainerStatuses);
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i];
    noteRestart(c);
    const terminated = c.state?.terminated;
    const waiting = c.state?.waiting;
    if (terminated && int(terminated.exitCode) == 0) continue;
    if (terminated) {
      if (!str(terminated.reason)) reason = int(terminated.signal) != 0 ? `Init:Signal:${int(terminated.signal)}` : `Init:ExitCode:${int(terminated.exitCode)}`;
      else reason = 'Init:' + str(terminated.reason);
    } else if (waiting && str(waiting.reason) && waiting.reason !== 'PodInitializing') {
      reason = 'Init:' + str(waiting.reason);
    } else {
      reason = `Init:${i}/${list(spec.initContainers).length}`;
    }
    initializing = true;
    break;
  }
  if (!initializing) {
    restarts = 0;
    let hasRunning = false;
    const statuses = list(status.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i];
      noteRestart(c);
      const terminated = c.state?.terminated;
      const waiting = c.state?.waiting;
      if (waiting && str(waiting.reason)) reason = str(waiting.reason);
      else if (terminated && str(terminated.reason)) reason = str(terminated.reason);
      else if (terminated) reason = int(terminated.signal) != 0 ? `Signal:${int(terminated.signal)}` : `ExitCode:${int(terminated.exitCode)}`;
      else if (c.ready === true && c.state?.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = conditions.some((c) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
    }
  }
  if (pod.metadata?.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';

  const restartText = lastRestart === undefined ? String(restarts) : `${restarts} (${translateTimestampSince(new Date(lastRestart).toISOString(), now)} ago)`;
  const podIP = str(list(status.podIPs)[0]?.ip) || '<none>';
  let gates = '<none>';
  const readinessGates = list(spec.readinessGates);
  if (readinessGates.length > 0) {
    let trueConditions = 0;
    for (const g of readinessGates) {
      const c = conditions.find((x) => x.type === g.conditionType);
      if (c?.status === 'True') trueConditions++;
    }
    gates = `${trueConditions}/${readinessGates.length}`;
  }
  const cells = [
    nameOf(pod),
    `${readyContainers}/${list(spec.containers).length}`,
    reason,
    restartText,
    age(pod, now),
    podIP,
    str(spec.nodeName) || '<none>',
    str(status.nominatedNodeName) || '<none>',
    gates,
  ];
  const rowConditions = status.phase === 'Succeeded' ? POD_SUCCEEDED : status.phase === 'Failed' ? POD_FAILED : undefined;
  return rowConditions ? { cells, conditions: rowConditions.map((c) => ({ ...c })) } : { cells };
}

export const nodePrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      column('Status', 'string', 'The status of the node'),
      column('Roles', 'string', 'The roles of the node'),
      ageColumn(),
      docColumn('Version', 'string', 'core/v1.NodeSystemInfo', 'kubeletVersion'),
      docColumn('Internal-IP', 'string', 'core/v1.NodeStatus', 'addresses', 1),
      docColumn('External-IP', 'string', 'core/v1.NodeStatus', 'addresses', 1),
      docColumn('OS-Image', 'string', 'core/v1.NodeSystemInfo', 'osImage', 1),
      docColumn('Kernel-Version', 'string', 'core/v1.NodeSystemInfo', 'kernelVersion', 1),
      docColumn('Container-Runtime', 'string', 'core/v1.NodeSystemInfo', 'containerRuntimeVersion', 1),
    ],
    (node, now) => {
      const status = record(node.status);
      const ready = list(status.conditions).filter((c) => c.type === 'Ready').pop();
      const states: string[] = [];
      if (ready) states.push(ready.status === 'True' ? 'Ready' : 'NotReady');
      else states.push('Unknown');
      if (node.spec?.unschedulable === true) states.push('SchedulingDisabled');
      const roles = new Set<string>();
      for (const [k, v] of Object.entries(record(node.metadata?.labels))) {
        if (k.startsWith('node-role.kubernetes.io/')) {
          const role = k.slice('node-role.kubernetes.io/'.length);
          if (role) roles.add(role);
        } else if (k === 'kubernetes.io/role' && v !== '') roles.add(str(v));
      }
      const info = record(status.nodeInfo);
      const address = (type: string) => str(list(status.addresses).find((a) => a.type === type)?.address) || '<none>';
      return [
        nameOf(node),
        states.join(','),
        [...roles].sort(compareGoStrings).join(',') || '<none>',
        age(node, now),
        str(info.kubeletVersion),
        address('InternalIP'),
        address('ExternalIP'),
        str(info.osImage) || '<unknown>',
        str(info.kernelVersion) || '<unknown>',
        str(info.containerRuntimeVersion) || '<unknown>',
      ];
    },
  );

export const deploymentPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      column('Ready', 'string', 'Number of the pod with ready state'),
      docColumn('Up-to-date', 'string', 'apps/v1.DeploymentStatus', 'updatedReplicas'),
      docColumn('Available', 'string', 'apps/v1.DeploymentStatus', 'availableReplicas'),
      ageColumn(),
      column('Containers', 'string', CONTAINERS, 1),
      column('Images', 'string', IMAGES, 1),
      docColumn('Selector', 'string', 'apps/v1.DeploymentSpec', 'selector', 1),
    ],
    (d, now) => {
      const [names, images] = containerCells(d.spec?.template?.spec?.containers);
      return [
        nameOf(d),
        `${int(d.status?.readyReplicas)}/${replicas(d.spec?.replicas)}`,
        int(d.status?.updatedReplicas),
        int(d.status?.availableReplicas),
        age(d, now),
        names,
        images,
        selectorString(d.spec?.selector),
      ];
    },
  );

/** ReplicaSets and ReplicationControllers print alike; only their doc names and selector forms differ. */
const replicatedPrinter = (kind: 'ReplicaSet' | 'ReplicationController', selector: (sel: KObject | undefined) => string) => (): TableConvertor => {
  const pkg = kind === 'ReplicaSet' ? 'apps/v1' : 'core/v1';
  return printer(
    [
      nameColumn(),
      docColumn('Desired', 'integer', `${pkg}.${kind}Spec`, 'replicas'),
      docColumn('Current', 'integer', `${pkg}.${kind}Status`, 'replicas'),
      docColumn('Ready', 'integer', `${pkg}.${kind}Status`, 'readyReplicas'),
      ageColumn(),
      column('Containers', 'string', CONTAINERS, 1),
      column('Images', 'string', IMAGES, 1),
      docColumn('Selector', 'string', `${pkg}.${kind}Spec`, 'selector', 1),
    ],
    (o, now) => {
      const [names, images] = containerCells(o.spec?.template?.spec?.containers);
      return [nameOf(o), replicas(o.spec?.replicas), int(o.status?.replicas), int(o.status?.readyReplicas), age(o, now), names, images, selector(o.spec?.selector)];
    },
  );
};

export const replicaSetPrinter = replicatedPrinter('ReplicaSet', formatLabelSelector);

export const statefulSetPrinter = (): TableConvertor =>
  printer(
    [nameColumn(), column('Ready', 'string', 'Number of the pod with ready state'), ageColumn(), column('Containers', 'string', CONTAINERS, 1), column('Images', 'string', IMAGES, 1)],
    (ss, now) => {
      const [names, images] = containerCells(ss.spec?.template?.spec?.containers);
      return [nameOf(ss), `${int(ss.status?.readyReplicas)}/${replicas(ss.spec?.replicas)}`, age(ss, now), names, images];
    },
  );

export const daemonSetPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      docColumn('Desired', 'integer', 'apps/v1.DaemonSetStatus', 'desiredNumberScheduled'),
      docColumn('Current', 'integer', 'apps/v1.DaemonSetStatus', 'currentNumberScheduled'),
      docColumn('Ready', 'integer', 'apps/v1.DaemonSetStatus', 'numberReady'),
      docColumn('Up-to-date', 'integer', 'apps/v1.DaemonSetStatus', 'updatedNumberScheduled'),
      docColumn('Available', 'integer', 'apps/v1.DaemonSetStatus', 'numberAvailable'),
      docColumn('Node Selector', 'string', 'core/v1.PodSpec', 'nodeSelector'),
      ageColumn(),
      column('Containers', 'string', CONTAINERS, 1),
      column('Images', 'string', IMAGES, 1),
      docColumn('Selector', 'string', 'apps/v1.DaemonSetSpec', 'selector', 1),
    ],
    (ds, now) => {
      const s = record(ds.status);
      const [names, images] = containerCells(ds.spec?.template?.spec?.containers);
      return [
        nameOf(ds),
        int(s.desiredNumberScheduled),
        int(s.currentNumberScheduled),
        int(s.numberReady),
        int(s.updatedNumberScheduled),
        int(s.numberAvailable),
        formatLabels(ds.spec?.template?.spec?.nodeSelector),
        age(ds, now),
        names,
        images,
        formatLabelSelector(ds.spec?.selector),
      ];
    },
  );

export const replicationControllerPrinter = replicatedPrinter('ReplicationController', formatLabels);

export const podTemplatePrinter = (): TableConvertor =>
  printer(
    [nameColumn(), column('Containers', 'string', CONTAINERS), column('Images', 'string', IMAGES), column('Pod Labels', 'string', 'The labels for the pod template.')],
    (pt) => {
      const [names, images] = containerCells(pt.template?.spec?.containers);
      return [nameOf(pt), names, images, formatLabels(pt.template?.metadata?.labels)];
    },
  );

export const resourceQuotaPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      ageColumn(),
      column('Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.'),
      column('Limit', 'string', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.'),
    ],
    (rq, now) => {
      const hard = record(rq.status?.hard);
      const used = record(rq.status?.used);
      const requests: string[] = [];
      const limits: string[] = [];
      for (const r of Object.keys(hard).sort(compareGoStrings)) {
        const pieces = r.split('.');
        const text = `${r}: ${quantity(used[r])}/${quantity(hard[r])}`;
        (pieces.length > 1 && pieces[0] === 'limits' ? limits : requests).push(text);
      }
      return [nameOf(rq), age(rq, now), requests.join(', '), limits.join(', ')];
    },
  );

function quantity(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  return str(v) || '0';
}

/** The controlling owner as `kind.group/name` (`<none>` without one), as upstream's formatResourceName. */
function controllerName(obj: KObject): string {
  const ref = list(obj.metadata?.ownerReferences).find((r) => r?.controller === true);
  if (!ref) return '<none>';
  const apiVersion = str(ref.apiVersion);
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kind = str(ref.kind);
  const groupKind = group ? `${kind}.${group}` : kind;
  return groupKind ? `${groupKind.toLowerCase()}/${str(ref.name)}` : str(ref.name);
}

export const controllerRevisionPrinter = (): TableConvertor =>
  printer(
    [nameColumn(), column('Controller', 'string', 'Controller of the object'), docColumn('Revision', 'string', 'apps/v1.ControllerRevision', 'revision'), ageColumn()],
    (cr, now) => [nameOf(cr), controllerName(cr), int(cr.revision), age(cr, now)],
  );
