/** POST (create) and PUT (update) of an object. */
import { deepClone } from '../../machinery/json.js';
import { field } from '../../machinery/field-errors.js';
import { errors } from '../../machinery/status.js';
import { writeStoredObject } from '../output.js';
import type { HandlerContext } from './context.js';
import type { ServedResource } from '../../registry/registry.js';
import type { WriteOptions } from '../../registry/types.js';
import type { KObject } from '../../api/object.js';
import type { Admission } from '../../registry/admission.js';
import { decodeOptions, readObjectBody } from './decode-object.js';
import { trackUpdate } from './field-manager.js';
import { validateWriteOptions } from '../../apply/index.js';
import { isLarge, nextTurn } from '../../util/turns.js';

/**
 * Upstream's checkName for an update or patch: the object names itself as the URL does; without a name it is
 * "undeterminable" (a PUT must carry the name, as kube-apiserver's UpdateResource requires).
 */
export function checkName(obj: KObject | undefined, name: string): void {
  const own: unknown = obj?.metadata?.name;
  if (own === undefined || own === null || own === '') {
    throw errors.badRequest(`the name of the object (${name} based on URL) was undeterminable: name must be provided`);
  }
  if (own !== name) throw errors.badRequest(`the name of the object (${String(own)}) does not match the name on the URL (${name})`);
}

export function dryRunOf(ctx: Pick<HandlerContext, 'query'>, optionsKind: string): boolean {
  const values = ctx.query.getAll('dryRun');
  if (values.length === 0) return false;
  const bad = values.filter((v) => v !== 'All');
  if (bad.length > 0) {
    throw errors.invalid({ group: 'meta.k8s.io', resource: optionsKind }, '', [field.notSupported('dryRun', values, ['All'])]);
  }
  return true;
}

/** The options every write passes to the store: dry run, request version, fieldValidation, the raw body, the warnings sink. */
export function storeOptions(ctx: HandlerContext, dryRun: boolean, optionsKind = 'CreateOptions'): WriteOptions {
  const decoding = decodeOptions(ctx, optionsKind);
  return {
    version: decoding.version,
    fieldValidation: decoding.fieldValidation,
    rawBody: decoding.rawBody,
    warnings: decoding.warnings,
    dryRun,
    group: ctx.endpoint.group,
    subresource: ctx.info.subresource,
    bodyBytes: ctx.bodyBytes,
    // Every write a handler makes decodes its object first (trackUpdate, or after an apply).
    decoded: true,
    admission: admissionOf(ctx, dryRun),
    codec: ctx.endpoint.scope.convertsInHandler ? undefined : ctx.endpoint,
    loopback: ctx.loopback,
  };
}

/**
 * The form the store's strategy works on: a built-in's internal form, which for kapi is its storage
 * version; where the store converts (a custom resource: after the strategy, as upstream's CR scope
 * does), the request's version.
 */
export function toInternal(ctx: HandlerContext, obj: KObject): KObject | Promise<KObject> {
  return ctx.endpoint.scope.convertsInHandler ? ctx.endpoint.toStorage(obj) : obj;
}

/** An object the store hands a handler (in the internal form) in the request's version. */
export function fromInternal(ctx: HandlerContext, obj: KObject): KObject {
  return ctx.endpoint.scope.convertsInHandler ? ctx.endpoint.toVersion(obj) : obj;
}

/** The admission chain and this request's attributes for it, as the store runs it. */
export function admissionOf(ctx: HandlerContext<ServedResource>, dryRun: boolean): Admission | undefined {
  const { endpoint, info } = ctx;
  if (!ctx.admission) return undefined;
  return {
    chain: ctx.admission,
    request: {
      resource: { group: endpoint.group, version: endpoint.version, resource: endpoint.names.resource },
      subresource: info.subresource ?? '',
      kind: { group: endpoint.group, version: endpoint.version, kind: endpoint.names.kind },
      namespace: info.namespace ?? '',
      name: info.name ?? '',
      user: ctx.user,
      dryRun,
      warnings: ctx.warnings,
      auditAnnotations: ctx.auditAnnotations,
    },
  };
}

export async function handleCreate(ctx: HandlerContext): Promise<void> {
  const { endpoint, info } = ctx;
  const dryRun = dryRunOf(ctx, 'CreateOptions');
  validateWriteOptions('CreateOptions', ctx.query.get('fieldManager') ?? undefined);
  const obj = await readObjectBody(ctx);
  const large = isLarge(ctx.bodyBytes);
  if (large) await nextTurn();
  if (endpoint.terminating) {
    throw errors.forbidden({ group: endpoint.group, resource: endpoint.names.resource }, obj.metadata.name ?? '', 'create not allowed while custom resource definition is terminating');
  }
  if (endpoint.names.namespaced) {
    const ns = obj.metadata.namespace;
    if (ns && ns !== info.namespace) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  await trackUpdate(ctx, undefined, obj, large);
  const created = await endpoint.store.create(info.namespace, await toInternal(ctx, obj), storeOptions(ctx, dryRun));
  await endpoint.prepare?.([created]);
  if (large) await nextTurn();
  await writeStoredObject(ctx.res, 201, created, ctx);
}

export async function handleUpdate(ctx: HandlerContext): Promise<void> {
  const { endpoint, info } = ctx;
  const dryRun = dryRunOf(ctx, 'UpdateOptions');
  validateWriteOptions('UpdateOptions', ctx.query.get('fieldManager') ?? undefined);
  const obj = await readObjectBody(ctx);
  const large = isLarge(ctx.bodyBytes);
  if (large) await nextTurn();
  const name = info.name!;
  checkName(obj, name);
  if (endpoint.names.namespaced && obj.metadata.namespace && obj.metadata.namespace !== info.namespace) {
    throw errors.badRequest(`the namespace of the object (${obj.metadata.namespace}) does not match the namespace on the request (${info.namespace})`);
  }
  const result = await endpoint.store.update(
    info.namespace,
    name,
    async (old, largeUpdate) => {
      // A copy per attempt: a retried compare-and-swap must not see the last attempt's managed fields.
      const next = deepClone(obj);
      await trackUpdate(ctx, old ? fromInternal(ctx, old) : undefined, next, largeUpdate);
      return toInternal(ctx, next);
    },
    storeOptions(ctx, dryRun),
  );
  await endpoint.prepare?.([result.object]);
  if (large) await nextTurn();
  await writeStoredObject(ctx.res, result.created ? 201 : 200, result.object, ctx);
}

