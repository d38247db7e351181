/**
 * Pods as kube-apiserver's registry and its default admission plugins leave them (no scheduler or
 * kubelet acts on them): created Pending with their QoS class; the ServiceAccount, Priority and
 * DefaultTolerationSeconds plugins' defaults; and the spec immutable but for the fields upstream lets
 * an update change.
 */
import { POD_ATTACH, POD_BINDING, POD_EVICTION, POD_EXEC, POD_LOG, POD_PORTFORWARD } from './pod-subresources.js';
import { field, type FieldError } from '../../machinery/field-errors.js';
import { deepEqual } from '../../util/deep-equal.js';
import { errors } from '../../machinery/status.js';
import type { SubresourceInfo } from '../../registry/registry.js';
import type { SubresourceStrategy } from '../../registry/subresources.js';
import type { Strategy } from '../../registry/types.js';
import type { KObject } from '../../api/object.js';
import { goQuote } from '../../machinery/go-text.js';
import { randomInt } from 'node:crypto';
import { parseQuantity, type Quantity } from '../../schema/cel/quantity.js';
import { validatePodSpecContainers } from './pod-spec-validation.js';
import { isRecord as isObject, records as list, type JsonRecord } from '../../util/json-object.js';

type Obj = JsonRecord;

/**
 * The subresources of a Pod besides status, as upstream's pod storage registers them: the kubelet's
 * (answered without one: pod-subresources.ts), binding and eviction (their storages, pod-subresources.ts), and the two
 * that write part of the pod through this strategy (ephemeralcontainers, resize).
 */
export const POD_SUBRESOURCES: readonly SubresourceInfo[] = [
  { name: 'attach', kind: 'PodAttachOptions', verbs: ['create', 'get'], storage: POD_ATTACH },
  { name: 'binding', kind: 'Binding', verbs: ['create'], storage: POD_BINDING },
  { name: 'ephemeralcontainers', kind: 'Pod', verbs: ['get', 'patch', 'update'] },
  { name: 'eviction', group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'], storage: POD_EVICTION },
  { name: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'], storage: POD_EXEC },
  { name: 'log', kind: 'Pod', verbs: ['get'], storage: POD_LOG },
  { name: 'portforward', kind: 'PodPortForwardOptions', verbs: ['create', 'get'], storage: POD_PORTFORWARD },
  { name: 'resize', kind: 'Pod', verbs: ['get', 'patch', 'update'] },
];

const QOS_RESOURCES = ['cpu', 'memory'];

/** The sum of each cpu and memory quantity above zero over the containers, from `resources[which]`. */
function totals(containers: Obj[], which: 'requests' | 'limits', onContainer?: (found: Set<string>) => void): Map<string, Quantity> {
  const sums = new Map<string, Quantity>();
  for (const c of containers) {
    const found = new Set<string>();
    const values = isObject(c.resources) && isObject(c.resources[which]) ? (c.resources[which] as Obj) : {};
    for (const name of QOS_RESOURCES) {
      const q = typeof values[name] === 'string' || typeof values[name] === 'number' ? parseQuantity(String(values[name])) : undefined;
      if (!q || q.sign() <= 0) continue;
      found.add(name);
      const prev = sums.get(name);
      sums.set(name, prev ? prev.add(q) : q);
    }
    onContainer?.(found);
  }
  return sums;
}

/** GetPodQOS: Guaranteed, Burstable or BestEffort from the containers' cpu and memory requests and limits. */
export function podQOSClass(spec: Obj): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [...list(spec.containers), ...list(spec.initContainers)];
  const requests = totals(containers, 'requests');
  let guaranteed = true;
  const limits = totals(containers, 'limits', (found) => {
    if (!QOS_RESOURCES.every((r) => found.has(r))) guaranteed = false;
  });
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, q] of requests) {
      const limit = limits.get(name);
      if (!limit || limit.cmp(q) !== 0) guaranteed = false;
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

/** The priority classes every cluster has (kube-apiserver creates them at start). */
export const SYSTEM_PRIORITY_CLASSES = [
  { name: 'system-node-critical', value: 2000001000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: 2000000000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
];

/** DefaultTolerationSeconds: pods tolerate a not-ready or unreachable node for 300 s. */
const DEFAULT_TOLERATIONS = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'];

export const SERVICE_ACCOUNT_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** Finds a stored ServiceAccount (undefined: none, or not known yet). */
export type ServiceAccountGetter = (namespace: string, name: string) => KObject | undefined;

/**
 * The ServiceAccount admission plugin's token volume: unless the pod or its account opts out
 * (automountServiceAccountToken: false), a projected `kube-api-access-<5 chars>` volume (a bound token,
 * the cluster's CA, the namespace) mounted read-only into every container and init container that has
 * nothing at the token's path yet. Mirror (static) pods get none.
 */
function mountServiceAccountToken(pod: KObject, spec: Obj, serviceAccount: ServiceAccountGetter): void {
  if (pod.metadata?.annotations?.[MIRROR_POD] !== undefined) return;
  const account = serviceAccount(String(pod.metadata?.namespace ?? ''), String(spec.serviceAccountName));
  const automount = typeof spec.automountServiceAccountToken === 'boolean' ? spec.automountServiceAccountToken : account?.automountServiceAccountToken !== false;
  if (!automount) return;
  const name = `kube-api-access-${Array.from({ length: 5 }, () => NAME_CHARS[randomInt(NAME_CHARS.length)]).join('')}`;
  let needed = false;
  for (const key of ['initContainers', 'containers']) {
    for (const c of list(spec[key])) {
      const mounts = Array.isArray(c.volumeMounts) ? c.volumeMounts : (c.volumeMounts = []);
      if (mounts.some((m) => isObject(m) && m.mountPath === SERVICE_ACCOUNT_MOUNT_PATH)) continue;
      mounts.push({ name, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH });
      needed = true;
    }
  }
  if (!needed) return;
  const volumes = Array.isArray(spec.volumes) ? spec.volumes : (spec.volumes = []);
  volumes.push({
    name,
    projected: {
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 420,
    },
  });
}

/** The admission plugins built into the pod strategy (upstream's names), each run only while it is on. */
export const POD_ADMISSION_PLUGINS = ['ServiceAccount', 'Priority', 'DefaultTolerationSeconds'] as const;

function admit(pod: KObject, priorityClasses: () => Iterable<KObject>, serviceAccount: ServiceAccountGetter, on: (plugin: string) => boolean): void {
  const spec = (isObject(pod.spec) ? pod.spec : (pod.spec = {})) as Obj;
  // ServiceAccount: the namespace's default account, and its token volume.
  if (on('ServiceAccount')) {
    if (!spec.serviceAccountName) spec.serviceAccountName = spec.serviceAccount = 'default';
    mountServiceAccountToken(pod, spec, serviceAccount);
  }
  if (on('Priority')) admitPriority(pod, spec, priorityClasses);
  if (on('DefaultTolerationSeconds')) {
    const tolerations = list(spec.tolerations);
    for (const key of DEFAULT_TOLERATIONS) {
      const tolerated = tolerations.some((t) => (t.key === key || (!t.key && t.operator === 'Exists')) && (!t.effect || t.effect === 'NoExecute'));
      if (!tolerated) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
    }
    spec.tolerations = tolerations;
  }
}

function admitPriority(pod: KObject, spec: Obj, priorityClasses: () => Iterable<KObject>): void {
  const forbidden = (why: string) => errors.forbidden({ group: '', resource: 'pods' }, String(pod.metadata?.name ?? ''), why);
  // Priority: the named class's value (or the global default class's), 0 without either; what the spec gives must agree.
  const className = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
  let chosen: KObject | undefined;
  for (const c of priorityClasses()) {
    // Of several global defaults, the lowest value wins (getDefaultPriorityClass).
    if (className ? c.metadata?.name === className : c.globalDefault === true && (!chosen || Number(c.value) < Number(chosen.value))) chosen = c;
  }
  const system = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === className);
  if (className && !chosen && !system) throw forbidden(`no PriorityClass with name ${className} was found`);
  const priority = chosen ? Number(chosen.value ?? 0) : system ? system.value : 0;
  const policy = typeof chosen?.preemptionPolicy === 'string' ? chosen.preemptionPolicy : 'PreemptLowerPriority';
  if (spec.priority !== undefined && spec.priority !== null && spec.priority !== priority) {
    throw forbidden(`the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`);
  }
  if (typeof spec.preemptionPolicy === 'string' && spec.preemptionPolicy !== policy) {
    throw forbidden(`the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`);
  }
  if (!className && chosen) spec.priorityClassName = chosen.metadata.name;
  spec.priority = priority;
  spec.preemptionPolicy = policy;
}

/** activeDeadlineSeconds may be set or shortened, never lengthened or unset. */
function activeDeadlineErrors(now: unknown, before: unknown): FieldError[] {
  const path = 'spec.activeDeadlineSeconds';
  if (typeof now === 'number') {
    if (now === before) return [];
    if (now < 0 || now > 2147483647) return [field.invalid(path, now, 'must be between 0 and 2147483647, inclusive')];
    if (typeof before === 'number' && before < now) return [field.invalid(path, now, 'must be less than or equal to previous value')];
  } else if (typeof before === 'number' && (now === undefined || now === null)) {
    return [field.invalid(path, null, 'must not update from a positive integer to nil value')];
  }
  return [];
}

const UPDATABLE =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** The new spec with what an update may change taken back from the old one (ValidatePodUpdate's munged spec). */
function mungedSpec(spec: Obj, old: Obj): Obj {
  const out: Obj = { ...spec };
  for (const key of ['containers', 'initContainers']) {
    const now = list(spec[key]);
    const before = list(old[key]);
    if (Array.isArray(spec[key]) && now.length === before.length) out[key] = now.map((c, i) => ({ ...c, image: before[i].image }));
  }
  out.activeDeadlineSeconds = old.activeDeadlineSeconds;
  // Scheduling gates may only be removed.
  const oldGates = list(old.schedulingGates);
  if (list(spec.schedulingGates).every((g) => oldGates.some((o) => o.name === g.name))) out.schedulingGates = old.schedulingGates;
  const oldTolerations = list(old.tolerations);
  if (oldTolerations.every((t) => list(spec.tolerations).some((n) => deepEqual(n, t)))) out.tolerations = old.tolerations;
  if (typeof old.terminationGracePeriodSeconds === 'number' && old.terminationGracePeriodSeconds < 0 && spec.terminationGracePeriodSeconds === 1) {
    out.terminationGracePeriodSeconds = old.terminationGracePeriodSeconds;
  }
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out;
}

/** The top-level spec fields that differ, as the second line of the Forbidden message. */
function changedFields(a: Obj, b: Obj, prefix = ''): string {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys
    .filter((k) => !deepEqual(a[k], b[k]))
    .map((k) => `  spec.${prefix ? `${prefix}.` : ''}${k}: ${JSON.stringify(a[k]) ?? '<unset>'} -> ${JSON.stringify(b[k]) ?? '<unset>'}`.slice(0, 400))
    .join('\n');
}

/**
 * What a write through a pod subresource keeps of the stored pod (dropNonEphemeralContainerUpdates,
 * dropNonResizeUpdates): its metadata as a status write keeps it, its status, and its spec but for
 * the part the subresource writes (`spec` builds it from what was sent and what is stored).
 */
function podPartWrite(spec: (sent: Obj, stored: Obj) => Obj): SubresourceStrategy {
  return {
    prepareForUpdate(obj, old) {
      const managed = obj.metadata?.managedFields;
      const metadata = { ...old.metadata, resourceVersion: obj.metadata?.resourceVersion, managedFields: managed };
      if (managed === undefined) delete metadata.managedFields;
      return { ...old, metadata, spec: spec(isObject(obj.spec) ? obj.spec : {}, isObject(old.spec) ? old.spec : {}) };
    },
  };
}

const withField = (spec: Obj, key: string, value: unknown): Obj => {
  const out = { ...spec, [key]: value };
  if (value === undefined) delete out[key];
  return out;
};

/** /ephemeralcontainers writes spec.ephemeralContainers only. */
const ephemeralContainersWrite = podPartWrite((sent, stored) => withField(stored, 'ephemeralContainers', sent.ephemeralContainers));

/** /resize writes the containers' (and init containers') resources and resizePolicy; another list of containers is validation's to refuse. */
const resizeWrite = podPartWrite((sent, stored) => {
  let out = stored;
  for (const key of ['containers', 'initContainers']) {
    const now = list(sent[key]);
    const before = list(stored[key]);
    const sameContainers = now.length === before.length && now.every((c, i) => c.name === before[i].name);
    if (sameContainers && before.length === 0) continue;
    const merged = sameContainers ? before.map((c, i) => withField(withField(c, 'resources', now[i].resources), 'resizePolicy', now[i].resizePolicy)) : sent[key];
    out = withField(out, key, merged);
  }
  return out;
});

const MIRROR_POD = 'kubernetes.io/config.mirror';

/** ValidatePodEphemeralContainersUpdate: existing ephemeral containers stay as they are. */
function ephemeralContainersUpdateErrors(pod: KObject, old: KObject): FieldError[] {
  if (old.metadata.annotations?.[MIRROR_POD] !== undefined) return [field.forbidden('', 'static pods do not support ephemeral containers')];
  const errs = validatePodSpecContainers(pod.spec, 'spec');
  const now = new Map(list((pod.spec as Obj | undefined)?.ephemeralContainers).map((c) => [c.name, c]));
  for (const before of list((old.spec as Obj | undefined)?.ephemeralContainers)) {
    const name = String(before.name);
    const after = now.get(before.name);
    if (!after) errs.push(field.forbidden('spec.ephemeralContainers', `existing ephemeral containers ${goQuote(name)} may not be removed\n`));
    else if (!deepEqual(before, after)) {
      errs.push(field.forbidden(`spec.ephemeralContainers[${name}]`, `existing ephemeral containers ${goQuote(name)} may not be changed\n${changedFields(before, after, `ephemeralContainers[${name}]`)}`));
    }
  }
  return errs;
}

const QUANTITY_KEYS = ['requests', 'limits'] as const;
const isSidecar = (c: Obj) => c.restartPolicy === 'Always';

/** The container with cpu and memory of its requests and limits taken from `from` (what a resize may change). */
function withoutCpuMemory(c: Obj, from: Obj | undefined): Obj {
  const resources = isObject(c.resources) ? { ...c.resources } : {};
  const source = isObject(from?.resources) ? (from.resources as Obj) : {};
  for (const key of QUANTITY_KEYS) {
    const values = { ...(isObject(resources[key]) ? (resources[key] as Obj) : {}) };
    const old = isObject(source[key]) ? (source[key] as Obj) : {};
    for (const r of QOS_RESOURCES) {
      if (old[r] === undefined) delete values[r];
      else values[r] = old[r];
    }
    if (Object.keys(values).length === 0) delete resources[key];
    else resources[key] = values;
  }
  const out = withField({ ...c }, 'resources', Object.keys(resources).length ? resources : undefined);
  return withField(out, 'resizePolicy', from?.resizePolicy);
}

const hasResources = (r: unknown) => isObject(r) && QUANTITY_KEYS.some((k) => isObject(r[k]) && Object.keys(r[k] as Obj).length > 0);

/** ValidatePodResize: only cpu and memory of the containers and sidecars change, never the QoS class. */
function resizeErrors(pod: KObject, old: KObject): FieldError[] {
  const spec = (isObject(pod.spec) ? pod.spec : {}) as Obj;
  const oldSpec = (isObject(old.spec) ? old.spec : {}) as Obj;
  if (hasResources(spec.resources) || hasResources(oldSpec.resources)) return [field.forbidden('', 'pods with pod-level resources cannot be resized')];
  if (old.metadata.annotations?.[MIRROR_POD] !== undefined) return [field.forbidden('', 'static pods cannot be resized')];
  if (isObject(oldSpec.os) && oldSpec.os.name === 'windows') return [field.forbidden('', 'windows pods cannot be resized')];
  const errs: FieldError[] = [];
  const oldQos = isObject(old.status) && typeof old.status.qosClass === 'string' ? old.status.qosClass : podQOSClass(oldSpec);
  if (podQOSClass(spec) !== oldQos) errs.push(field.invalid('spec', oldQos, 'Pod QOS Class may not change as a result of resizing'));
  const running = list(isObject(old.status) ? old.status.containerStatuses : undefined).find((s) => isObject(s.state) && s.state.running !== undefined);
  if (running && running.resources === undefined) errs.push(field.forbidden('spec', 'Pod running on node without support for resize'));
  const munged: Obj = { ...spec };
  for (const key of ['initContainers', 'containers']) {
    const now = list(spec[key]);
    const before = list(oldSpec[key]);
    now.forEach((c, i) => {
      const prev = before[i];
      if (!prev || (key === 'initContainers' && !isSidecar(prev))) return;
      for (const which of QUANTITY_KEYS) {
        const had = isObject(prev.resources) && isObject(prev.resources[which]) ? Object.keys(prev.resources[which] as Obj) : [];
        const has = isObject(c.resources) && isObject(c.resources[which]) ? (c.resources[which] as Obj) : {};
        if (had.some((r) => has[r] === undefined)) errs.push(field.forbidden(`spec.${key}[${i}].resources.${which}`, `resource ${which} cannot be removed`));
      }
    });
    if (Array.isArray(spec[key])) munged[key] = now.map((c, i) => (before[i] && (key === 'containers' || isSidecar(before[i])) ? withoutCpuMemory(c, before[i]) : c));
  }
  if (errs.length === 0 && !deepEqual(munged, oldSpec)) {
    const init = list(spec.initContainers);
    const changedInit = list(oldSpec.initContainers).findIndex((c, i) => !deepEqual(c, list(munged.initContainers)[i]));
    const detail =
      changedInit >= 0 && !isSidecar(list(oldSpec.initContainers)[changedInit]) && init.length === list(oldSpec.initContainers).length
        ? 'resources for non-sidecar init containers are immutable'
        : changedInit >= 0 && init.length === list(oldSpec.initContainers).length
          ? 'only cpu and memory resources for sidecar containers are mutable'
          : 'only cpu and memory resources are mutable';
    errs.push(field.forbidden('spec', detail));
  }
  return errs;
}

/**
 * The Pod strategy; `priorityClasses` lists the stored PriorityClasses (for the Priority plugin), `plugins` says
 * which of POD_ADMISSION_PLUGINS are on (default: all).
 */
export function podStrategy(priorityClasses: () => Iterable<KObject> = () => [], serviceAccount: ServiceAccountGetter = () => undefined, plugins: (name: string) => boolean = () => true): Strategy {
  return {
    allowUnconditionalUpdate: true,
    resetFieldsOnMainEndpoint: ['status'],
    returnDeletedObject: true,
    // Pods have a generation since 1.33: 1 at creation, moved by any change of the spec.
    generation: 'spec',
    subresourceStrategies: { ephemeralcontainers: ephemeralContainersWrite, resize: resizeWrite },
    validate(pod) {
      const errs = validatePodSpecContainers(pod.spec, 'spec');
      if (list((pod.spec as Obj | undefined)?.ephemeralContainers).length > 0) errs.push(field.forbidden('spec.ephemeralContainers', 'cannot be set on create'));
      return errs;
    },
    prepareForCreate(pod) {
      admit(pod, priorityClasses, serviceAccount, plugins);
      pod.status = { phase: 'Pending', qosClass: podQOSClass(pod.spec as Obj) };
    },
    prepareForUpdate(pod, old, ctx) {
      // The subresources that write part of the spec move the generation too (updatePodGeneration).
      if ((ctx.subresource === 'ephemeralcontainers' || ctx.subresource === 'resize') && !deepEqual(pod.spec, old.spec)) {
        pod.metadata.generation = Number(old.metadata.generation ?? 0) + 1;
      }
    },
    validateUpdate(pod, old, ctx): FieldError[] {
      if (ctx.subresource === 'ephemeralcontainers') return ephemeralContainersUpdateErrors(pod, old);
      if (ctx.subresource === 'resize') return resizeErrors(pod, old);
      if (ctx.subresource) return [];
      const spec = isObject(pod.spec) ? pod.spec : {};
      // The stored pod was defaulted as it was read (one stored before a default existed has it too).
      const oldSpec = isObject(old.spec) ? old.spec : {};
      const deadline = activeDeadlineErrors(spec.activeDeadlineSeconds, oldSpec.activeDeadlineSeconds);
      if (deadline.length > 0) return deadline;
      const munged = mungedSpec(spec, oldSpec);
      if (deepEqual(munged, oldSpec)) return [];
      return [field.forbidden('spec', `${UPDATABLE}\n${changedFields(oldSpec, munged)}`)];
    },
  };
}
