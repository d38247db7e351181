/**
 * The ResourceQuota admission plugin (k8s.io/apiserver's admission/plugin/resourcequota with kubernetes'
 * evaluators): a create (or an update that changes usage) in a namespace with quotas is measured by its resource's
 * evaluator, refused with upstream's 403 when a matching quota would go over `status.hard`, and charged: the
 * quotas' `status.used` is written with a compare-and-swap on their resourceVersion before the object is stored.
 * A quota whose usage no controller has computed yet refuses what it limits ("status unknown for quota").
 * Requests of one namespace take turns (upstream's per-namespace work queue); a dry run is checked, never charged.
 *
 * Evaluators: pods (compute requests and limits, `pods`, scopes Terminating, NotTerminating, BestEffort,
 * NotBestEffort and PriorityClass), services (`services`, `services.loadbalancers`, `services.nodeports`),
 * persistentvolumeclaims (`requests.storage`, per storage class) and, for every other resource, object counts
 * (`count/<resource>.<group>`, with the legacy names of configmaps, secrets, replicationcontrollers and
 * resourcequotas), which are charged on create only.
 */
import type { KObject } from '../../api/object.js';
import { errors } from '../../machinery/status.js';
import { admissionForbidden } from '../admission-plugins.js';
import { selectorFromLabelSelector } from '../../machinery/labels.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../../registry/admission.js';
import type { RestStore } from '../../registry/store.js';
import { isRecord, records, type JsonRecord } from '../../util/json-object.js';
import { compareGoStrings } from '../../machinery/go-text.js';
import { Quantity } from '../../schema/cel/quantity.js';
import { KeyedTurns } from '../../util/turns.js';
import { podQOSClass } from './pods.js';
import {
  addAmounts,
  amountOf,
  amountsJson,
  amountsOf,
  countOf,
  lessThanOrEqual,
  maskAmounts,
  maxInto,
  addInto,
  negativeNames,
  ONE,
  prettyAmounts,
  removeZeros,
  sameAmounts,
  subtractNonNegative,
  type Amount,
  type Amounts,
} from './quota-amounts.js';

type Scope = { scopeName: string; operator: string; values?: string[] };

interface Evaluator {
  /** Whether the operation can change usage. */
  handles(operation: string): boolean;
  /** The resource names of `hard` this evaluator measures (MatchingResources). */
  matching(names: string[]): string[];
  matchesScope(scope: Scope, obj: KObject): boolean;
  /** Resources the quota limits that the object must say (cpu, memory of every container), or undefined. */
  constraints(required: string[], obj: KObject): string | undefined;
  usage(obj: KObject): Amounts;
  /** Whether the usage is a count of objects, read from nothing but their metadata. */
  countsOnly?: boolean;
}

const objectCountName = (group: string, resource: string) => (group ? `count/${resource}.${group}` : `count/${resource}`);

const LEGACY_COUNT_ALIASES: Record<string, string> = { configmaps: 'configmaps', resourcequotas: 'resourcequotas', replicationcontrollers: 'replicationcontrollers', secrets: 'secrets' };

function objectCounter(group: string, resource: string): Evaluator {
  const names = [objectCountName(group, resource)];
  if (group === '' && LEGACY_COUNT_ALIASES[resource]) names.push(LEGACY_COUNT_ALIASES[resource]);
  return {
    handles: (op) => op === 'CREATE',
    matching: (hard) => hard.filter((n) => names.includes(n)),
    matchesScope: () => false,
    constraints: () => undefined,
    usage: () => new Map(names.map((n) => [n, ONE])),
    countsOnly: true,
  };
}

const POD_RESOURCES = ['count/pods', 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage', 'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods'];
/** The resources a quota's cpu and memory make every container say (its backward-compatible validation set). */
const VALIDATION_SET = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];
const isNativeResource = (name: string) => !name.includes('/') || name.includes('kubernetes.io/');
/** An extended resource (helper.IsExtendedResourceName): fully qualified, outside kubernetes.io, not requests.*. */
const isExtended = (name: string) => !isNativeResource(name) && !name.startsWith('requests.');

/** podComputeUsageHelper: what a pod's (or a container's) requests and limits count for. */
function computeUsage(requests: Amounts, limits: Amounts): Amounts {
  const out: Amounts = new Map([['pods', ONE]]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r);
    if (req) {
      out.set(r, req);
      out.set(`requests.${r}`, req);
    }
    const lim = limits.get(r);
    if (lim) out.set(`limits.${r}`, lim);
  }
  for (const [name, req] of requests) {
    if (name.startsWith('hugepages-')) {
      out.set(name, req);
      out.set(`requests.${name}`, req);
    }
    if (isExtended(name)) out.set(`requests.${name}`, req);
  }
  return out;
}

const containers = (pod: KObject, which: 'containers' | 'initContainers') => records(pod.spec?.[which]);
const resourcesOf = (c: JsonRecord, which: 'requests' | 'limits') => amountsOf(isRecord(c.resources) ? c.resources[which] : undefined);

/** QuotaV1Pod: a pod that has finished, or whose deletion's grace period is over, no longer counts. */
function podCounts(pod: KObject, now: number): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const deleting = pod.metadata?.deletionTimestamp;
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  if (typeof deleting === 'string' && typeof grace === 'number' && now > Date.parse(deleting) + grace * 1000) return false;
  return true;
}

function podMatchesScope(scope: Scope, pod: KObject): boolean {
  const deadline = pod.spec?.activeDeadlineSeconds;
  const terminating = typeof deadline === 'number' && deadline >= 0;
  switch (scope.scopeName) {
    case 'Terminating':
      return terminating;
    case 'NotTerminating':
      return !terminating;
    case 'BestEffort':
      return podQOSClass(pod.spec ?? {}) === 'BestEffort';
    case 'NotBestEffort':
      return podQOSClass(pod.spec ?? {}) !== 'BestEffort';
    case 'CrossNamespacePodAffinity':
      return crossNamespace(pod);
    case 'PriorityClass': {
      const className = pod.spec?.priorityClassName;
      const labels: Record<string, string> = typeof className === 'string' && className ? { PriorityClass: className } : {};
      try {
        return selectorFromLabelSelector({ matchExpressions: [{ key: 'PriorityClass', operator: scope.operator, values: scope.values }] }).matches(labels);
      } catch {
        return false;
      }
    }
    default:
      return false;
  }
}

/**
 * resourcehelper.PodRequests (and PodLimits): the containers' sum; sidecars (init containers that restart always) run
 * beside them and are added; each other init container runs with the sidecars started before it, and the largest of
 * those runs counts when it is more.
 */
function podTotal(pod: KObject, which: 'requests' | 'limits'): Amounts {
  const total: Amounts = new Map();
  for (const c of containers(pod, 'containers')) addInto(total, resourcesOf(c, which));
  const sidecars: Amounts = new Map();
  const initPeak: Amounts = new Map();
  for (const c of containers(pod, 'initContainers')) {
    const own = resourcesOf(c, which);
    if (c.restartPolicy === 'Always') {
      addInto(total, own);
      addInto(sidecars, own);
      maxInto(initPeak, sidecars);
    } else {
      maxInto(initPeak, addInto(new Map(sidecars), own));
    }
  }
  return maxInto(total, initPeak);
}

/** A pod term that reaches other namespaces (a namespace list or selector). */
const crossNamespace = (pod: KObject): boolean =>
  ['podAffinity', 'podAntiAffinity'].some((kind) => {
    const a = pod.spec?.affinity?.[kind];
    const terms = [...records(a?.requiredDuringSchedulingIgnoredDuringExecution), ...records(a?.preferredDuringSchedulingIgnoredDuringExecution).map((w) => (isRecord(w.podAffinityTerm) ? w.podAffinityTerm : {}))];
    return terms.some((t) => (Array.isArray(t.namespaces) && t.namespaces.length > 0) || (t.namespaceSelector !== undefined && t.namespaceSelector !== null));
  });

const podEvaluator: Evaluator = {
  handles: (op) => op === 'CREATE',
  matching: (hard) => hard.filter((n) => POD_RESOURCES.includes(n) || n.startsWith('hugepages-') || n.startsWith('requests.hugepages-') || (n.startsWith('requests.') && isExtended(n.slice('requests.'.length)))),
  matchesScope: podMatchesScope,
  constraints(required, pod) {
    const wanted = required.filter((r) => VALIDATION_SET.includes(r));
    // Each missing resource with the (sorted) names of the containers that do not say it.
    const missing = new Map<string, Set<string>>();
    for (const c of [...containers(pod, 'containers'), ...containers(pod, 'initContainers')]) {
      const has = computeUsage(resourcesOf(c, 'requests'), resourcesOf(c, 'limits'));
      for (const r of wanted) {
        if (has.has(r)) continue;
        if (!missing.has(r)) missing.set(r, new Set());
        missing.get(r)!.add(String(c.name));
      }
    }
    if (missing.size === 0) return undefined;
    const sorted = (xs: Iterable<string>) => [...xs].sort(compareGoStrings);
    return `must specify ${sorted(missing.keys()).map((r) => `${r} for: ${sorted(missing.get(r)!).join(',')}`).join('; ')}`;
  },
  usage(pod) {
    const out: Amounts = new Map([['count/pods', ONE]]);
    if (!podCounts(pod, Date.now())) return out;
    const requests = podTotal(pod, 'requests');
    const limits = podTotal(pod, 'limits');
    // The pod's overhead (its RuntimeClass's): added to the requests, and to the limits it has.
    const overhead = amountsOf(pod.spec?.overhead);
    addInto(requests, overhead);
    for (const [n, v] of overhead) if (limits.has(n)) addInto(limits, new Map([[n, v]]));
    return addInto(out, computeUsage(requests, limits));
  },
};

const SERVICE_RESOURCES = ['count/services', 'services', 'services.loadbalancers', 'services.nodeports'];
const serviceEvaluator: Evaluator = {
  handles: (op) => op === 'CREATE' || op === 'UPDATE',
  matching: (hard) => hard.filter((n) => SERVICE_RESOURCES.includes(n)),
  matchesScope: () => false,
  constraints: () => undefined,
  usage(svc) {
    const out: Amounts = new Map([['services', ONE], ['count/services', ONE]]);
    const type = svc.spec?.type;
    const ports = records(svc.spec?.ports).length;
    if (type === 'NodePort') out.set('services.nodeports', countOf(ports));
    if (type === 'LoadBalancer') {
      out.set('services.loadbalancers', ONE);
      out.set('services.nodeports', countOf(svc.spec?.allocateLoadBalancerNodePorts === false ? 0 : ports));
    }
    return out;
  },
};

const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';
/** GetPersistentVolumeClaimClass: the beta annotation first (the provisioner reads it so), then the field. */
const pvcStorageClass = (pvc: KObject): string => {
  const annotations = isRecord(pvc.metadata?.annotations) ? pvc.metadata.annotations : {};
  const cls = Object.hasOwn(annotations, 'volume.beta.kubernetes.io/storage-class') ? annotations['volume.beta.kubernetes.io/storage-class'] : pvc.spec?.storageClassName;
  return typeof cls === 'string' ? cls : '';
};

/** A storage amount rounded up to whole units (RoundUp(0)). */
function wholeUnits(a: Amount): Amount {
  const nano = a.q.nano;
  if (nano.length <= 9 ? nano === '0' : nano.endsWith('000000000')) return a;
  const whole = nano.length > 9 ? new Quantity(false, `${nano.slice(0, -9)}000000000`) : Quantity.ofInt(0n);
  return { q: whole.add(Quantity.ofInt(1n)), format: a.format };
}
const pvcEvaluator: Evaluator = {
  handles: (op) => op === 'CREATE' || op === 'UPDATE',
  matching: (hard) => hard.filter((n) => ['count/persistentvolumeclaims', 'persistentvolumeclaims', 'requests.storage'].includes(n) || (n.includes(STORAGE_CLASS_SUFFIX) && (n.endsWith('/persistentvolumeclaims') || n.endsWith('/requests.storage')))),
  matchesScope: () => false,
  constraints: () => undefined,
  usage(pvc) {
    const out: Amounts = new Map([['persistentvolumeclaims', ONE], ['count/persistentvolumeclaims', ONE]]);
    const cls = pvcStorageClass(pvc);
    if (cls) out.set(`${cls}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`, ONE);
    // The larger of what is asked and what is already allocated (a resize that failed still holds the space).
    const requested = amountOf(pvc.spec?.resources?.requests?.storage);
    const allocated = amountOf(pvc.status?.allocatedResources?.storage);
    const larger = requested && allocated && allocated.q.cmp(requested.q) > 0 ? allocated : requested;
    const storage = larger && wholeUnits(larger);
    if (storage) {
      out.set('requests.storage', storage);
      if (cls) out.set(`${cls}${STORAGE_CLASS_SUFFIX}requests.storage`, storage);
    }
    return out;
  },
};

function evaluatorFor(group: string, resource: string): Evaluator {
  if (group === '') {
    if (resource === 'pods') return podEvaluator;
    if (resource === 'services') return serviceEvaluator;
    if (resource === 'persistentvolumeclaims') return pvcEvaluator;
  }
  return objectCounter(group, resource);
}

/** A quota's scopes and scope selector, as requirements. */
function scopesOf(quota: KObject): Scope[] {
  const out: Scope[] = [];
  for (const s of Array.isArray(quota.spec?.scopes) ? quota.spec.scopes : []) if (typeof s === 'string') out.push({ scopeName: s, operator: 'Exists' });
  for (const e of records(quota.spec?.scopeSelector?.matchExpressions)) out.push(e as unknown as Scope);
  return out;
}


/** The quotas with what this request adds to each (empty: nothing to charge), or the refusal. */
function checkRequest(quotas: KObject[], a: AdmissionAttributes, evaluator: Evaluator): Map<KObject, Amounts> {
  const obj = a.object!;
  const interesting: KObject[] = [];
  for (const quota of quotas) {
    const hard = amountsOf(quota.status?.hard);
    const matched = evaluator.matching([...hard.keys()]);
    if (matched.length === 0 || !scopesOf(quota).every((s) => evaluator.matchesScope(s, obj))) continue;
    const failed = evaluator.constraints(matched, obj);
    if (failed) throw admissionForbidden(a, `failed quota: ${quota.metadata.name}: ${failed}`);
    const used = amountsOf(quota.status?.used);
    if (matched.some((n) => !used.has(n))) throw admissionForbidden(a, `status unknown for quota: ${quota.metadata.name}, resources: ${[...matched].sort().join(',')}`);
    interesting.push(quota);
  }
  const charges = new Map<KObject, Amounts>();
  if (interesting.length === 0) return charges;
  let delta = evaluator.usage(obj);
  const negative = negativeNames(delta);
  if (negative.length > 0) throw admissionForbidden(a, `quota usage is negative for resource(s): ${negative.sort().join(',')}`);
  if (a.operation === 'UPDATE' && a.oldObject?.metadata?.resourceVersion) delta = subtractNonNegative(delta, evaluator.usage(a.oldObject));
  delta = removeZeros(delta);
  if (delta.size === 0) return charges;
  for (const quota of interesting) {
    const hard = amountsOf(quota.status?.hard);
    const used = amountsOf(quota.status?.used);
    const requested = maskAmounts(delta, hard.keys());
    const newUsed = addAmounts(used, requested);
    const { allowed, exceeded } = lessThanOrEqual(maskAmounts(newUsed, requested.keys()), hard);
    if (!allowed) {
      throw admissionForbidden(
        a,
        `exceeded quota: ${quota.metadata.name}, requested: ${prettyAmounts(maskAmounts(requested, exceeded))}, used: ${prettyAmounts(maskAmounts(used, exceeded))}, limited: ${prettyAmounts(maskAmounts(hard, exceeded))}`,
      );
    }
    if (!sameAmounts(newUsed, used)) charges.set(quota, newUsed);
  }
  return charges;
}

const CONFLICT_RETRIES = 3;
/** How long a request waits for its namespace's quota evaluation (upstream's 10 s). */
const QUOTA_WAIT_MS = 10_000;

/** The plugin, over the ResourceQuota store (its watch cache tells which namespaces have quotas). */
export function resourceQuotaAdmission(quotas: RestStore): AdmissionPlugin {
  const turns = new KeyedTurns();
  /** Runs `fn` once the namespace's earlier requests are done; as upstream's evaluator, one that waits 10 s fails (500). */
  const inTurn = async (namespace: string, fn: () => Promise<void>): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    let end: (() => void) | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(errors.internal('resource quota evaluation timed out')), QUOTA_WAIT_MS);
    });
    let abandoned = false;
    const turn = turns.take(namespace).then((e) => (end = e));
    try {
      await Promise.race([turn.then(() => (abandoned ? undefined : fn())), timedOut]);
    } finally {
      abandoned = true;
      clearTimeout(timer);
      // A request that timed out waiting ends its turn once it comes (the turns after it are not held up).
      if (end) end();
      else void turn.then((e) => e());
    }
  };
  // One lookup in the watch cache's sorted keys: a namespace without quotas costs a request nothing more.
  const hasQuotas = (namespace: string) => quotas.cache.list({ prefix: quotas.namespacePrefix(namespace), limit: 1 }).items.length > 0;
  return {
    name: 'ResourceQuota',
    validate(a) {
      // Subresources, cluster-scoped objects and new namespaces are not charged; nor is anything where no quota is.
      if (a.subresource || !a.namespace || !a.object || (a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !hasQuotas(a.namespace)) return undefined;
      const evaluator = evaluatorFor(a.resource.group, a.resource.resource);
      if (!evaluator.handles(a.operation)) return undefined;
      return inTurn(a.namespace, async () => {
        // Quotas charged already when a later one's write lost its compare-and-swap (the retry leaves them be).
        const charged = new Set<string>();
        for (let attempt = 0; ; attempt++) {
          const current = (await quotas.list({ namespace: a.namespace, consistent: true })).items.filter((q) => !charged.has(q.metadata.name));
          const charges = checkRequest(current, a, evaluator);
          if (a.dryRun || charges.size === 0) return;
          try {
            for (const [quota, used] of charges) {
              await quotas.update(a.namespace, quota.metadata.name, (old) => {
                if (!old || old.metadata.resourceVersion !== quota.metadata.resourceVersion) {
                  throw errors.conflict({ group: '', resource: 'resourcequotas' }, quota.metadata.name, 'the object has been modified; please apply your changes to the latest version and try again');
                }
                return { ...old, status: { ...old.status, used: amountsJson(used) } };
              }, { subresource: 'status' });
              charged.add(quota.metadata.name);
            }
            return;
          } catch (err) {
            if ((err as { code?: number }).code !== 409 || attempt >= CONFLICT_RETRIES) throw err;
          }
        }
      });
    },
  };
}

/** The resources (group, resource) whose objects a quota's hard names count. */
function countedResources(hardNames: string[]): Array<{ group: string; resource: string }> {
  const out = new Map<string, { group: string; resource: string }>();
  const add = (group: string, resource: string) => out.set(`${group}/${resource}`, { group, resource });
  if (podEvaluator.matching(hardNames).length > 0) add('', 'pods');
  if (serviceEvaluator.matching(hardNames).length > 0) add('', 'services');
  if (pvcEvaluator.matching(hardNames).length > 0) add('', 'persistentvolumeclaims');
  for (const name of hardNames) {
    if (Object.hasOwn(LEGACY_COUNT_ALIASES, name)) add('', name);
    if (!name.startsWith('count/')) continue;
    const gr = name.slice('count/'.length);
    const dot = gr.indexOf('.');
    if (dot < 0) add('', gr);
    else add(gr.slice(dot + 1), gr.slice(0, dot));
  }
  return [...out.values()];
}

/**
 * A quota's usage as kube-controller-manager's quota controller computes it (CalculateUsage): for each resource its
 * hard names count, the usage of every object of the namespace in the quota's scopes, each matched name from 0.
 * `list` gives a resource's objects in the quota's namespace (undefined: the resource is not served), their metadata
 * only when that is all the evaluator reads.
 */
export async function calculateQuotaUsage(
  quota: KObject,
  list: (group: string, resource: string, metadataOnly: boolean) => Promise<AsyncIterable<KObject> | Iterable<KObject> | undefined>,
): Promise<Amounts> {
  const hardNames = Object.keys(isRecord(quota.spec?.hard) ? quota.spec.hard : {});
  const scopes = scopesOf(quota);
  const used: Amounts = new Map();
  for (const { group, resource } of countedResources(hardNames)) {
    const evaluator = evaluatorFor(group, resource);
    const matched = evaluator.matching(hardNames).filter((n) => !used.has(n));
    if (matched.length === 0) continue;
    for (const n of matched) used.set(n, countOf(0));
    // Objects only counted are read as their metadata; pods, services and claims whole (their spec is measured).
    for await (const obj of (await list(group, resource, evaluator.countsOnly === true)) ?? []) {
      if (scopes.every((s) => evaluator.matchesScope(s, obj))) addInto(used, maskAmounts(evaluator.usage(obj), matched));
    }
  }
  return used;
}
