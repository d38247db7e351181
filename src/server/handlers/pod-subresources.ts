/**
 * The subresources of Pods that kube-apiserver serves itself or forwards to a kubelet, answered as
 * upstream does on a cluster whose pods no kubelet runs:
 * - `log`: the container is checked as ValidateContainer does; a pod without a node has no log yet
 *   (an empty 200); one on a node is the node's to serve, and kapi has no kubelet (503).
 * - `exec`, `attach`: the container is checked, then a pod without a node is upstream's 400
 *   (`pod x does not have a host assigned`); `portforward` the same without a container.
 * - `binding` (the scheduler's): assigns the pod to a node once (409 when it already has one) and
 *   marks it PodScheduled.
 * - `eviction` (`kubectl drain`): deletes the pod, honouring a PodDisruptionBudget that selects it
 *   when the pod is running (a pending or finished pod is deleted at once, as upstream does).
 */
import { field } from '../../machinery/field-errors.js';
import { selectorFromLabelSelector, type LabelSelectorSpec } from '../../machinery/labels.js';
import { errors, StatusError, successStatus } from '../../machinery/status.js';
import type { Endpoint } from '../../registry/registry.js';
import type { KObject } from '../../api/object.js';
import { toRfc3339 } from '../../machinery/time.js';
import { decodeBody, decodeProtobufBody, readBody } from '../body.js';
import { objectBodyFormat } from '../negotiation.js';
import { writeEncoded } from '../output.js';
import type { HandlerContext } from './context.js';
import { admissionOf, dryRunOf } from './write.js';
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
async function noKubelet(ctx: HandlerContext, pod: KObject, nodeName: string, what: string): Promise<never> {
  const nodes = ctx.lookup?.('', 'v1', 'nodes');
  if (nodes) await nodes.store.get(undefined, nodeName);
  throw new StatusError(503, 'ServiceUnavailable', `the ${what} of pod ${pod.metadata.name} is on node ${nodeName}, and kapi runs no kubelet to serve it`, {});
}

/** A body of another kind than the endpoint's (Binding, Eviction), in JSON, YAML or protobuf. */
export async function readTypedBody(ctx: HandlerContext, apiVersion: string, kind: string): Promise<KObject> {
  const raw = await readBody(ctx.req, ctx.res);
  const format = objectBodyFormat(ctx.req.headers['content-type'], true);
  const obj: unknown = format === 'protobuf' ? decodeProtobufBody(raw, { apiVersion, kind }) : await decodeBody(raw, format === 'yaml' ? 'yaml' : 'json', ctx.res, kind);
  if (!isObject(obj)) throw errors.badRequest(`the body must be a ${kind} object`);
  if (!isObject(obj.metadata)) obj.metadata = {};
  return obj as KObject;
}

/** A pod subresource whose endpoint names this handler (apis/core/pods.ts's POD_SUBRESOURCES): log, exec, attach, portforward, binding, eviction. */
export async function servePodSubresource(ctx: HandlerContext): Promise<void> {
  const { info, endpoint } = ctx;
  const name = info.name!;
  switch (info.subresource) {
    case 'log': {
      const pod = await endpoint.store.get(info.namespace, name);
      validateContainer(pod, ctx.query.get('container') ?? '');
      const nodeName = isObject(pod.spec) && typeof pod.spec.nodeName === 'string' ? pod.spec.nodeName : '';
      if (nodeName) await noKubelet(ctx, pod, nodeName, 'log');
      ctx.res.writeHead(200, { 'Content-Type': 'text/plain' });
      ctx.res.end();
      return;
    }
    case 'exec':
    case 'attach':
    case 'portforward': {
      const pod = await endpoint.store.get(info.namespace, name);
      if (info.subresource !== 'portforward') validateContainer(pod, ctx.query.get('container') ?? '');
      const nodeName = isObject(pod.spec) && typeof pod.spec.nodeName === 'string' ? pod.spec.nodeName : '';
      if (!nodeName) throw errors.badRequest(`pod ${name} does not have a host assigned`);
      return noKubelet(ctx, pod, nodeName, info.subresource);
    }
    case 'binding':
      return bind(ctx, endpoint, name);
    case 'eviction':
      return evict(ctx, endpoint, name);
  }
}

const BINDING = { group: '', resource: 'pods/binding' };

/**
 * Admission of a Binding or an Eviction, as upstream's create handler admits them: a CREATE of the pod's
 * subresource with that object (its kind, not the Pod's), before the write it leads to (which is not
 * admitted again).
 */
async function admitCreate(ctx: HandlerContext, obj: KObject, kind: { group: string; version: string; kind: string }, dryRun: boolean): Promise<void> {
  const admission = admissionOf(ctx, dryRun);
  if (!admission) return;
  const attributes = { ...admission.request, kind, name: ctx.info.name ?? '', operation: 'CREATE' as const, object: obj };
  if (admission.chain.mutating.length) await admission.chain.admit(attributes);
  if (admission.chain.validating.length) await admission.chain.validate(attributes);
}

async function bind(ctx: HandlerContext, endpoint: Endpoint, name: string): Promise<void> {
  const binding = await readTypedBody(ctx, 'v1', 'Binding');
  const dryRun = dryRunOf(ctx, 'CreateOptions');
  if (binding.metadata.name !== name) throw errors.badRequest('name in URL does not match name in Binding object');
  const preconditions = { uid: binding.metadata.uid, resourceVersion: binding.metadata.resourceVersion };
  const target = isObject(binding.target) ? binding.target : {};
  const kind = typeof target.kind === 'string' ? target.kind : '';
  const node = typeof target.name === 'string' ? target.name : '';
  const errs = [];
  if (kind !== '' && kind !== 'Node') errs.push(field.notSupported('target.kind', kind, ['Node', '<empty>']));
  if (!node) errs.push(field.required('target.name', ''));
  if (errs.length > 0) throw errors.invalid({ group: '', resource: 'Binding' }, name, errs);
  await admitCreate(ctx, binding, { group: '', version: 'v1', kind: 'Binding' }, dryRun);
  const annotations = isObject(binding.metadata.annotations) ? binding.metadata.annotations : {};
  await endpoint.store.update(
    ctx.info.namespace,
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
  await writeEncoded(ctx.res, 201, { ...successStatus(), code: 201 }, ctx.output);
}

const TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget.";

async function evict(ctx: HandlerContext, endpoint: Endpoint, name: string): Promise<void> {
  const eviction = await readTypedBody(ctx, 'policy/v1', 'Eviction');
  if (eviction.metadata.name !== undefined && eviction.metadata.name !== name) throw errors.badRequest('name in URL does not match name in Eviction object');
  const namespace = ctx.info.namespace;
  const pod = await endpoint.store.get(namespace, name);
  const options = isObject(eviction.deleteOptions) ? eviction.deleteOptions : {};
  // The query's dryRun is the eviction's (propagateDryRun); one given in both must agree.
  const queryDryRun = dryRunOf(ctx, 'CreateOptions');
  if (options.dryRun !== undefined && options.dryRun !== null && !Array.isArray(options.dryRun)) throw errors.badRequest('deleteOptions.dryRun must be a list');
  const bodyDryRun = Array.isArray(options.dryRun) && options.dryRun.includes('All');
  if (ctx.query.has('dryRun') && options.dryRun !== undefined && options.dryRun !== null && bodyDryRun !== queryDryRun) {
    throw errors.badRequest('The dryRun field in the request body and query parameters are not consistent');
  }
  const dryRun = queryDryRun || bodyDryRun;
  await admitCreate(ctx, eviction, { group: 'policy', version: 'v1', kind: 'Eviction' }, dryRun);
  const phase = isObject(pod.status) ? pod.status.phase : undefined;
  // A pod that is not running, or already going, needs no budget.
  const ignoresBudget = phase === 'Pending' || phase === 'Succeeded' || phase === 'Failed' || phase === undefined || pod.metadata.deletionTimestamp;
  if (!ignoresBudget) {
    const budgets = ctx.lookup?.('policy', 'v1', 'poddisruptionbudgets');
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
      if (unhealthyGoesFree) return deleteEvicted(ctx, endpoint, pod, options, dryRun, true);
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
  return deleteEvicted(ctx, endpoint, pod, options, dryRun);
}

const isPodReady = (pod: KObject) => records(isObject(pod.status) ? pod.status.conditions : undefined).some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * The eviction's delete, with the preconditions of its deleteOptions. An unready pod that took no
 * disruption from its budget is deleted only as it was judged (its resourceVersion, as upstream's
 * updateDeletionOptions).
 */
async function deleteEvicted(ctx: HandlerContext, endpoint: Endpoint, pod: KObject, options: Obj, dryRun: boolean, asJudged = false): Promise<void> {
  if (!dryRun) {
    const gracePeriodSeconds = typeof options.gracePeriodSeconds === 'number' ? options.gracePeriodSeconds : undefined;
    const sent = isObject(options.preconditions) ? options.preconditions : {};
    const given = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
    const preconditions = { uid: given(sent.uid), resourceVersion: asJudged ? pod.metadata.resourceVersion : given(sent.resourceVersion) };
    await endpoint.store.delete(ctx.info.namespace, pod.metadata.name, { gracePeriodSeconds, preconditions });
  }
  await writeEncoded(ctx.res, 201, { ...successStatus(), code: 201 }, ctx.output);
}
