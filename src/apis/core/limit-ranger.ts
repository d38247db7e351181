/**
 * The LimitRanger admission plugin (kubernetes plugin/pkg/admission/limitranger), over the namespace's LimitRanges
 * (their watch cache): a new pod's containers and init containers get the `Container` items' default limits and
 * requests they do not say (named in the `kubernetes.io/limit-ranger` annotation), then pods are checked against
 * `Container` and `Pod` items' min, max and maxLimitRequestRatio, and persistent volume claims against
 * `PersistentVolumeClaim` items' min and max of requested storage, with upstream's messages in a 403. Pod updates
 * and subresources are not looked at, as upstream's. Quantities are compared exactly (upstream compares milli
 * values rounded up; they differ only below a thousandth of a unit).
 */
import type { KObject } from '../../api/object.js';
import { admissionForbidden } from '../admission-plugins.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../../registry/admission.js';
import type { RestStore } from '../../registry/store.js';
import { Quantity } from '../../schema/cel/quantity.js';
import { isRecord, records, type JsonRecord } from '../../util/json-object.js';
import { amountsOf, formatAmount, type Amount, type Amounts } from './quota-amounts.js';
import { objectForScan } from '../../cache/watch-cache.js';

const ANNOTATION = 'kubernetes.io/limit-ranger';

/** Which of a request's kinds the plugin looks at (SupportsAttributes). */
function supported(a: AdmissionAttributes): 'pod' | 'pvc' | undefined {
  if (a.subresource || !a.object || a.kind.group !== '') return undefined;
  if (a.oldObject?.metadata?.deletionTimestamp) return undefined;
  if (a.kind.kind === 'Pod') return a.operation === 'CREATE' ? 'pod' : undefined;
  if (a.kind.kind === 'PersistentVolumeClaim' && (a.operation === 'CREATE' || a.operation === 'UPDATE')) return 'pvc';
  return undefined;
}

const items = (lr: KObject): JsonRecord[] => records(lr.spec?.limits);
const containersOf = (pod: KObject) => [...records(pod.spec?.containers).map((c) => ({ c, prefix: 'container' })), ...records(pod.spec?.initContainers).map((c) => ({ c, prefix: 'init container' }))];

/** mergeContainerResources: the defaults a container does not say, and the annotation's part for it. */
function mergeDefaults(c: JsonRecord, limits: JsonRecord, requests: JsonRecord, prefix: string): string[] {
  const resources: JsonRecord = isRecord(c.resources) ? c.resources : (c.resources = {});
  const fill = (key: 'limits' | 'requests', defaults: JsonRecord): string[] => {
    const names = Object.keys(defaults);
    if (names.length === 0) return [];
    const own: JsonRecord = isRecord(resources[key]) ? resources[key] : (resources[key] = {});
    const set = names.filter((n) => !Object.hasOwn(own, n));
    for (const n of set) own[n] = defaults[n];
    return set.sort();
  };
  const setLimits = fill('limits', limits);
  const setRequests = fill('requests', requests);
  const notes: string[] = [];
  if (setRequests.length > 0) notes.push(`${setRequests.join(', ')} request for ${prefix} ${String(c.name)}`);
  if (setLimits.length > 0) notes.push(`${setLimits.join(', ')} limit for ${prefix} ${String(c.name)}`);
  return notes;
}

/** PodMutateLimitFunc, for one LimitRange; whether the pod changed. */
function defaultPod(lr: KObject, pod: KObject): boolean {
  const limits: JsonRecord = {};
  const requests: JsonRecord = {};
  for (const item of items(lr)) {
    if (item.type !== 'Container') continue;
    if (isRecord(item.defaultRequest)) Object.assign(requests, item.defaultRequest);
    if (isRecord(item.default)) Object.assign(limits, item.default);
  }
  const notes = containersOf(pod).flatMap(({ c, prefix }) => mergeDefaults(c, limits, requests, prefix));
  if (notes.length === 0) return false;
  pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` };
  return true;
}

const text = (a: Amount | undefined) => (a ? formatAmount(a) : '');

function minConstraint(type: string, name: string, enforced: Amount, requests: Amounts, limits: Amounts): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  if (!req) return `minimum ${name} usage per ${type} is ${text(enforced)}.  No request is specified`;
  if (req.q.cmp(enforced.q) < 0) return `minimum ${name} usage per ${type} is ${text(enforced)}, but request is ${text(req)}`;
  if (lim && lim.q.cmp(enforced.q) < 0) return `minimum ${name} usage per ${type} is ${text(enforced)}, but limit is ${text(lim)}`;
  return undefined;
}

function maxConstraint(type: string, name: string, enforced: Amount, requests: Amounts, limits: Amounts): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  if (!lim) return `maximum ${name} usage per ${type} is ${text(enforced)}.  No limit is specified`;
  if (lim.q.cmp(enforced.q) > 0) return `maximum ${name} usage per ${type} is ${text(enforced)}, but limit is ${text(lim)}`;
  if (req && req.q.cmp(enforced.q) > 0) return `maximum ${name} usage per ${type} is ${text(enforced)}, but request is ${text(req)}`;
  return undefined;
}

/** maxRequestConstraint: claims say requests only. */
function maxRequestConstraint(type: string, name: string, enforced: Amount, requests: Amounts): string | undefined {
  const req = requests.get(name);
  if (!req) return `maximum ${name} usage per ${type} is ${text(enforced)}.  No request is specified`;
  if (req.q.cmp(enforced.q) > 0) return `maximum ${name} usage per ${type} is ${text(enforced)}, but request is ${text(req)}`;
  return undefined;
}

function ratioConstraint(type: string, name: string, enforced: Amount, requests: Amounts, limits: Amounts): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  if (!req || req.q.sign() === 0) return `${name} max limit to request ratio per ${type} is ${text(enforced)}, but no request is specified or request is 0`;
  if (!lim || lim.q.sign() === 0) return `${name} max limit to request ratio per ${type} is ${text(enforced)}, but no limit is specified or limit is 0`;
  const ratio = lim.q.asFloat() / req.q.asFloat();
  if (ratio > enforced.q.asFloat()) return `${name} max limit to request ratio per ${type} is ${text(enforced)}, but provided ratio is ${ratio.toFixed(6)}`;
  return undefined;
}

/** The whole units of a quantity, rounded up (Value); cpu in thousandths (MilliValue). */
function unitsUp(q: Quantity, milli: boolean): Quantity {
  if (q.sign() <= 0) return q; // requests and limits are not negative (validation)
  const drop = milli ? 6 : 9;
  const step = new Quantity(false, `1${'0'.repeat(drop)}`);
  const nano = q.nano;
  if (nano.length <= drop) return step;
  const whole = new Quantity(false, `${nano.slice(0, -drop)}${'0'.repeat(drop)}`);
  return /[1-9]/.test(nano.slice(-drop)) ? whole.add(step) : whole;
}

/** sum: per name, the total over the containers when every one says it (cpu in thousandths, the rest whole units). */
function sumLists(lists: Amounts[]): Amounts {
  // One pass over every entry: per name, how many lists say it and their total.
  const totals = new Map<string, { count: number; total: Quantity }>();
  for (const l of lists) {
    for (const [name, v] of l) {
      const t = totals.get(name) ?? { count: 0, total: Quantity.ofInt(0n) };
      t.count++;
      t.total = t.total.add(unitsUp(v.q, name === 'cpu'));
      totals.set(name, t);
    }
  }
  const out: Amounts = new Map();
  for (const [name, t] of totals) if (t.count === lists.length) out.set(name, { q: t.total, format: 'DecimalSI' });
  return out;
}

/** PodValidateLimitFunc's errors for one LimitRange. */
function validatePod(lr: KObject, pod: KObject): string[] {
  const errs: string[] = [];
  const check = (type: string, item: JsonRecord, requests: Amounts, limits: Amounts) => {
    for (const [name, v] of amountsOf(item.min)) errs.push(minConstraint(type, name, v, requests, limits) ?? '');
    for (const [name, v] of amountsOf(item.max)) errs.push(maxConstraint(type, name, v, requests, limits) ?? '');
    for (const [name, v] of amountsOf(item.maxLimitRequestRatio)) errs.push(ratioConstraint(type, name, v, requests, limits) ?? '');
  };
  const resources = (c: JsonRecord) => ({ requests: amountsOf(isRecord(c.resources) ? c.resources.requests : undefined), limits: amountsOf(isRecord(c.resources) ? c.resources.limits : undefined) });
  for (const item of items(lr)) {
    if (item.type === 'Container') {
      for (const { c } of containersOf(pod)) {
        const r = resources(c);
        check('Container', item, r.requests, r.limits);
      }
    }
    if (item.type === 'Pod') {
      const app = records(pod.spec?.containers).map(resources);
      const requests = sumLists(app.map((r) => r.requests));
      const limits = sumLists(app.map((r) => r.limits));
      // The larger of the containers' sum and any init container.
      for (const init of records(pod.spec?.initContainers).map(resources)) {
        for (const [into, from] of [[requests, init.requests], [limits, init.limits]] as const) {
          for (const [n, v] of from) if (!into.has(n) || v.q.cmp(into.get(n)!.q) > 0) into.set(n, v);
        }
      }
      check('Pod', item, requests, limits);
    }
  }
  return errs.filter(Boolean);
}

function validateClaim(lr: KObject, pvc: KObject): string[] {
  const requests = amountsOf(pvc.spec?.resources?.requests);
  const errs: string[] = [];
  for (const item of items(lr)) {
    if (item.type !== 'PersistentVolumeClaim') continue;
    for (const [name, v] of amountsOf(item.min)) errs.push(minConstraint('PersistentVolumeClaim', name, v, requests, new Map()) ?? '');
    for (const [name, v] of amountsOf(item.max)) errs.push(maxRequestConstraint('PersistentVolumeClaim', name, v, requests) ?? '');
  }
  return errs.filter(Boolean);
}

/** utilerrors.NewAggregate's text: one error as it is, more in brackets (each once). */
const aggregate = (errs: string[]) => {
  const unique = [...new Set(errs)];
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
};

export function limitRanger(limitRanges: RestStore): AdmissionPlugin {
  const rangesIn = (namespace: string) => limitRanges.cache.list({ prefix: limitRanges.namespacePrefix(namespace) }).items.map(objectForScan);
  return {
    name: 'LimitRanger',
    reportsChanges: true,
    admit(a) {
      if (supported(a) !== 'pod' || !a.namespace) return;
      let changed = false;
      for (const lr of rangesIn(a.namespace)) if (defaultPod(lr, a.object!)) changed = true;
      if (changed) a.defaulter?.(a.object!);
    },
    validate(a) {
      const kind = supported(a);
      if (!kind || !a.namespace) return;
      for (const lr of rangesIn(a.namespace)) {
        const errs = kind === 'pod' ? validatePod(lr, a.object!) : validateClaim(lr, a.object!);
        if (errs.length > 0) throw admissionForbidden(a, aggregate(errs));
      }
    },
  };
}

