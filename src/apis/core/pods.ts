/**
 * Pods as kube-apiserver's registry and its default admission plugins leave them (no scheduler or
 * kubelet acts on them): created Pending with their QoS class; the ServiceAccount, Priority and
 * DefaultTolerationSeconds plugins' defaults; and the spec immutable but for the fields upstream lets
 * an update change.
 */
import { field, type FieldError } from '../../machinery/field-errors.js';
import { deepEqual } from '../../util/deep-equal.js';
import { errors } from '../../machinery/status.js';
import type { KObject, Strategy } from '../../registry/types.js';
import { parseQuantity, type Quantity } from '../../schema/cel/quantity.js';
import { validatePodSpecContainers } from './pod-spec-validation.js';
import { isRecord as isObject, records as list, type JsonRecord } from '../../util/json-object.js';

type Obj = JsonRecord;

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

function admit(pod: KObject, priorityClasses: () => Iterable<KObject>): void {
  const spec = (isObject(pod.spec) ? pod.spec : (pod.spec = {})) as Obj;
  const forbidden = (why: string) => errors.forbidden({ group: '', resource: 'pods' }, String(pod.metadata?.name ?? ''), why);
  // ServiceAccount: the namespace's default account (the token volume waits for the TokenRequest API).
  if (!spec.serviceAccountName) spec.serviceAccountName = spec.serviceAccount = 'default';
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
  const tolerations = list(spec.tolerations);
  for (const key of DEFAULT_TOLERATIONS) {
    const tolerated = tolerations.some((t) => (t.key === key || (!t.key && t.operator === 'Exists')) && (!t.effect || t.effect === 'NoExecute'));
    if (!tolerated) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  }
  spec.tolerations = tolerations;
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
  out.ephemeralContainers = old.ephemeralContainers; // changed through /ephemeralcontainers only
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out;
}

/** The top-level spec fields that differ, as the second line of the Forbidden message. */
function changedFields(a: Obj, b: Obj): string {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys
    .filter((k) => !deepEqual(a[k], b[k]))
    .map((k) => `  spec.${k}: ${JSON.stringify(a[k]) ?? '<unset>'} -> ${JSON.stringify(b[k]) ?? '<unset>'}`.slice(0, 400))
    .join('\n');
}

/** The Pod strategy; `priorityClasses` lists the stored PriorityClasses (for the Priority plugin). */
export function podStrategy(priorityClasses: () => Iterable<KObject> = () => []): Strategy {
  return {
    allowUnconditionalUpdate: true,
    resetFieldsOnMainEndpoint: ['status'],
    returnDeletedObject: true,
    validate: (pod) => validatePodSpecContainers(pod.spec, 'spec'),
    prepareForCreate(pod) {
      admit(pod, priorityClasses);
      pod.status = { phase: 'Pending', qosClass: podQOSClass(pod.spec as Obj) };
    },
    validateUpdate(pod, old, ctx): FieldError[] {
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
