/**
 * A pod's subresources that are not its own verbs, as upstream's pod REST storages serve them: log, exec,
 * attach and portforward need the pod's kubelet, which kapi does not run (the container named must be the
 * pod's, its node must exist: then 503); binding assigns an unscheduled pod to a node (the scheduler's
 * write); eviction deletes a pod unless a PodDisruptionBudget that selects it forbids it (429), taking one
 * disruption from it.
 */
import { field } from '../../machinery/field-errors.js';
import { selectorFromLabelSelector, type LabelSelectorSpec } from '../../machinery/labels.js';
import { errors, StatusError, successStatus } from '../../machinery/status.js';
import type { SubresourceCreateRequest, SubresourceRequest, SubresourceStorage } from '../../registry/registry.js';
import type { KObject } from '../../api/object.js';
import { toRfc3339 } from '../../machinery/time.js';
import { isRecord as isObject, records, type JsonRecord } from '../../util/json-object.js';

type Obj = JsonRecord;
const names = (list: unknown): string[] => records(list).map((c) => String(c.name ?? ''));

/** ValidateContainer: the container named, or the pod's only one. */
function validateContainer(pod: KObject, container: string): string {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const name = pod.metadata.name;
  if (!container) {
    const containers = names(spec.containers);
    if (containers.length === 1) return containers[0];
    if (containers.length === 0) throw errors.badRequest(`a container name must be specified for pod ${name}`);
    let msg = `a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`;
    const init = names(spec.initContainers);
    const ephemeral = names(spec.ephemeralContainers);
    if (init.length > 0) msg += ` or one of the init containers: [${init.join(' ')}]`;
    if (ephemeral.length > 0) msg += ` or one of the ephemeral containers: [${ephemeral.join(' ')}]`;
    throw errors.badRequest(msg);
  }
  if (![...names(spec.initContainers), ...names(spec.containers), ...names(spec.ephemeralContainers)].includes(container)) {
    throw errors.badRequest(`container ${container} is not valid for pod ${name}`);
  }
  return container;
}

/** The node a pod runs on must exist; kapi has no kubelet to reach on it. */
async function noKubelet(req: SubresourceRequest, pod: KObject, nodeName: string, what: string): Promise<never> {
  const nodes = req.lookup('', 'v1', 'nodes');
  if (nodes) await nodes.store.get(undefined, nodeName);
  throw new StatusError(503, 'ServiceUnavailable', `the ${what} of pod ${pod.metadata.name} is on node ${nodeName}, and kapi runs no kubelet to serve it`, {});
}

const BINDING = { group: '', resource: 'pods/binding' };

async function bind(req: SubresourceCreateRequest): Promise<KObject> {
  const { name, dryRun } = req;
  const binding = req.body;
  if (binding.metadata.name !== name) throw errors.badRequest('name in URL does not match name in Binding object');
  const preconditions = { uid: binding.metadata.uid, resourceVersion: binding.metadata.resourceVersion };
  const target = isObject(binding.target) ? binding.target : {};
  const kind = typeof target.kind === 'string' ? target.kind : '';
  const node = typeof target.name === 'string' ? target.name : '';
  const errs = [];
  if (kind !== '' && kind !== 'Node') errs.push(field.notSupported('target.kind', kind, ['Node', '<empty>']));
  if (!node) errs.push(field.required('target.name', ''));
  if (errs.length > 0) throw errors.invalid({ group: '', resource: 'Binding' }, name, errs);
  await req.admit(binding, dryRun);
  const annotations = isObject(binding.metadata.annotations) ? binding.metadata.annotations : {};
  await req.store.update(
    req.namespace,
    name,
    (pod) => {
      if (!pod) throw errors.notFound({ group: '', resource: 'pods' }, name);
      const spec = (isObject(pod.spec) ? pod.spec : {}) as Obj;
      if (pod.metadata.deletionTimestamp) throw errors.conflict(BINDING, name, `pod ${name} is being deleted, cannot be assigned to a host`);
      if (spec.nodeName) throw errors.conflict(BINDING, name, `pod ${name} is already assigned to node "${spec.nodeName}"`);
      if (Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0) throw errors.conflict(BINDING, name, `pod ${name} has non-empty .spec.schedulingGates`);
      if (preconditions.uid && preconditions.uid !== pod.metadata.uid) {
        throw errors.conflict({ group: '', resource: 'pods' }, name, `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${pod.metadata.uid}`);
      }
      if (preconditions.resourceVersion && preconditions.resourceVersion !== pod.metadata.resourceVersion) {
        throw errors.conflict({ group: '', resource: 'pods' }, name, 'the object has been modified; please apply your changes to the latest version and try again');
      }
      const status = (isObject(pod.status) ? pod.status : {}) as Obj;
      const conditions = (Array.isArray(status.conditions) ? status.conditions : []).filter((c) => !(isObject(c) && c.type === 'PodScheduled'));
      conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: toRfc3339(new Date()) });
      return {
        ...pod,
        metadata: { ...pod.metadata, annotations: Object.keys(annotations).length ? { ...(pod.metadata.annotations ?? {}), ...annotations } : pod.metadata.annotations },
        spec: { ...spec, nodeName: node },
        status: { ...status, conditions },
      };
    },
    { subresource: 'binding', dryRun },
  );
  return created();
}

/** What binding and eviction answer (201). */
const created = (): KObject => ({ ...successStatus(), code: 201 }) as KObject;

const TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget.";

async function evict(req: SubresourceCreateRequest): Promise<KObject> {
  const { name } = req;
  const eviction = req.body;
  if (eviction.metadata.name !== undefined && eviction.metadata.name !== name) throw errors.badRequest('name in URL does not match name in Eviction object');
  const namespace = req.namespace;
  const pod = await req.store.get(namespace, name);
  const options = isObject(eviction.deleteOptions) ? eviction.deleteOptions : {};
  // The query's dryRun is the eviction's (propagateDryRun); one given in both must agree.
  const queryDryRun = req.dryRun;
  if (options.dryRun !== undefined && options.dryRun !== null && !Array.isArray(options.dryRun)) throw errors.badRequest('deleteOptions.dryRun must be a list');
  const bodyDryRun = Array.isArray(options.dryRun) && options.dryRun.includes('All');
  if (req.query.has('dryRun') && options.dryRun !== undefined && options.dryRun !== null && bodyDryRun !== queryDryRun) {
    throw errors.badRequest('The dryRun field in the request body and query parameters are not consistent');
  }
  const dryRun = queryDryRun || bodyDryRun;
  await req.admit(eviction, dryRun);
  const phase = isObject(pod.status) ? pod.status.phase : undefined;
  // A pod that is not running, or already going, needs no budget.
  const ignoresBudget = phase === 'Pending' || phase === 'Succeeded' || phase === 'Failed' || phase === undefined || pod.metadata.deletionTimestamp;
  if (!ignoresBudget) {
    const budgets = req.lookup('policy', 'v1', 'poddisruptionbudgets');
    const labels = (pod.metadata.labels ?? {}) as Record<string, string>;
    const matching = budgets
      ? (await budgets.store.list({ namespace, consistent: true })).items.filter((b) => {
          const selector = isObject(b.spec) ? b.spec.selector : undefined;
          // A budget whose selector is empty selects nothing here (getPodDisruptionBudgets).
          if (!isObject(selector) || Object.keys(selector).every((k) => (Array.isArray(selector[k]) ? selector[k].length === 0 : !isObject(selector[k]) || Object.keys(selector[k]).length === 0))) return false;
          try {
            return selectorFromLabelSelector(selector as LabelSelectorSpec).matches(labels);
          } catch {
            return false;
          }
        })
      : [];
    if (matching.length > 1) throw errors.internal('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
    if (matching.length === 1) {
      const pdb = matching[0];
      const status = (isObject(pdb.status) ? pdb.status : {}) as Obj;
      const unhealthyGoesFree =
        !isPodReady(pod) &&
        ((isObject(pdb.spec) && pdb.spec.unhealthyPodEvictionPolicy === 'AlwaysAllow') ||
          (Number(status.desiredHealthy ?? 0) > 0 && Number(status.currentHealthy ?? 0) >= Number(status.desiredHealthy ?? 0)));
      // An unready pod does not count as healthy: it goes without taking a disruption when the policy
      // allows it, or the budget is met without it (IfHealthyBudget, the default).
      if (unhealthyGoesFree) return deleteEvicted(req, pod, options, dryRun, true);
      const cause = (message: string, retryAfterSeconds?: number) =>
        new StatusError(429, 'TooManyRequests', TOO_MANY, { causes: [{ reason: 'DisruptionBudget', message }], retryAfterSeconds });
      if (Number(status.observedGeneration ?? 0) < Number(pdb.metadata.generation ?? 0)) throw cause(`The disruption budget ${pdb.metadata.name} is still being processed by the server.`, 10);
      if (Number(status.disruptionsAllowed ?? 0) < 0) throw errors.forbidden({ group: 'policy', resource: 'poddisruptionbudgets' }, pdb.metadata.name, 'pdb disruptions allowed is negative');
      if (Number(status.disruptionsAllowed ?? 0) <= 0) {
        throw cause(`The disruption budget ${pdb.metadata.name} needs ${Number(status.desiredHealthy ?? 0)} healthy pods and has ${Number(status.currentHealthy ?? 0)} currently`);
      }
      if (!dryRun) {
        // Checked again on the budget as it is now: concurrent evictions take one disruption each, never more than there are.
        await budgets!.store.update(
          namespace,
          pdb.metadata.name,
          (cur) => {
            const allowed = Number((cur?.status as Obj | undefined)?.disruptionsAllowed ?? 0);
            if (!cur || allowed <= 0) throw cause(`The disruption budget ${pdb.metadata.name} needs ${Number(status.desiredHealthy ?? 0)} healthy pods and has ${Number(status.currentHealthy ?? 0)} currently`);
            return { ...cur, status: { ...(cur.status ?? {}), disruptionsAllowed: allowed - 1 } };
          },
          { subresource: 'status' },
        );
      }
    }
  }
  return deleteEvicted(req, pod, options, dryRun);
}

const isPodReady = (pod: KObject) => records(isObject(pod.status) ? pod.status.conditions : undefined).some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * The eviction's delete, with the preconditions of its deleteOptions. An unready pod that took no
 * disruption from its budget is deleted only as it was judged (its resourceVersion, as upstream's
 * updateDeletionOptions).
 */
async function deleteEvicted(req: SubresourceCreateRequest, pod: KObject, options: Obj, dryRun: boolean, asJudged = false): Promise<KObject> {
  if (!dryRun) {
    const gracePeriodSeconds = typeof options.gracePeriodSeconds === 'number' ? options.gracePeriodSeconds : undefined;
    const sent = isObject(options.preconditions) ? options.preconditions : {};
    const given = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
    const preconditions = { uid: given(sent.uid), resourceVersion: asJudged ? pod.metadata.resourceVersion : given(sent.resourceVersion) };
    await req.store.delete(req.namespace, pod.metadata.name, { gracePeriodSeconds, preconditions });
  }
  return created();
}

/** log: the pod's container must exist; a scheduled pod's log is its kubelet's (503); an unscheduled one has none yet. */
async function log(req: SubresourceRequest): Promise<string> {
  const pod = await req.store.get(req.namespace, req.name);
  validateContainer(pod, req.query.get('container') ?? '');
  const nodeName = isObject(pod.spec) && typeof pod.spec.nodeName === 'string' ? pod.spec.nodeName : '';
  if (nodeName) await noKubelet(req, pod, nodeName, 'log');
  return '';
}

/** exec, attach, portforward: a scheduled pod's (and for exec and attach, a container's); its kubelet's to serve. */
const connectTo = (what: 'exec' | 'attach' | 'portforward'): SubresourceStorage => ({
  async connect(req) {
    const pod = await req.store.get(req.namespace, req.name);
    if (what !== 'portforward') validateContainer(pod, req.query.get('container') ?? '');
    const nodeName = isObject(pod.spec) && typeof pod.spec.nodeName === 'string' ? pod.spec.nodeName : '';
    if (!nodeName) throw errors.badRequest(`pod ${req.name} does not have a host assigned`);
    return noKubelet(req, pod, nodeName, what);
  },
});

export const POD_LOG: SubresourceStorage = { connect: log };
export const POD_EXEC = connectTo('exec');
export const POD_ATTACH = connectTo('attach');
export const POD_PORTFORWARD = connectTo('portforward');
export const POD_BINDING: SubresourceStorage = { create: bind };
export const POD_EVICTION: SubresourceStorage = { create: evict };
