/**
 * Managed fields on every write: the manager of a request (fieldManager or the
 * User-Agent), the merge type of the endpoint's objects, and the bookkeeping
 * call each handler makes inside its compare-and-swap update.
 */
import { applyObject, applyObjectInTurns, BUILTIN_OBJECT, managerOrUserAgent, resetFieldsFor, updateManagedFields, updateManagedFieldsInTurns, type ApplyOptions, type FieldManagerOptions } from '../../apply/index.js';
import type { Endpoint } from '../../registry/registry.js';
import type { DecodeOptions } from '../../registry/types.js';
import type { KObject } from '../../api/object.js';
import { groupVersion, type HandlerContext } from './context.js';
import { decodeOptions } from './decode-object.js';
import { nextTurn } from '../../util/turns.js';


/** The options type of each writing verb, as invalid ones are reported. */
const OPTIONS_KIND: Record<string, string> = { POST: 'CreateOptions', PUT: 'UpdateOptions', PATCH: 'PatchOptions' };

export function managerOf(ctx: HandlerContext): string {
  return managerOrUserAgent(ctx.query.get('fieldManager') ?? undefined, ctx.req.headers['user-agent']);
}

export function fieldManagerOptions(endpoint: Endpoint, subresource?: string): FieldManagerOptions {
  return {
    type: endpoint.applyType?.() ?? BUILTIN_OBJECT,
    apiVersion: groupVersion(endpoint.group, endpoint.version),
    subresource,
    resetFields: resetFieldsFor({ hasStatusSubresource: Boolean(endpoint.subresources.status), subresource }),
    emptyObject: endpoint.emptyObject?.(),
    versions: endpoint.otherVersion,
  };
}

/**
 * Decode `next` as the request's decoder does (prune, default) and record the non-apply write in its
 * `metadata.managedFields` (both objects in the request's version), for the request's subresource.
 * A large request (`large`: its body or, for an update, the stored object is large) does the two in steps
 * (util/turns.ts), and the managed fields in several.
 */
export function trackUpdate(
  ctx: HandlerContext,
  live: KObject | undefined,
  next: KObject,
  large: boolean,
  subresource = ctx.info.subresource,
): KObject | Promise<KObject> {
  const decoding = decodeOptions(ctx, OPTIONS_KIND[ctx.req.method ?? ''] ?? 'UpdateOptions');
  const opts = fieldManagerOptions(ctx.endpoint, subresource);
  if (!large) {
    ctx.endpoint.decodeObject?.(next, decoding);
    return updateManagedFields(live, next, managerOf(ctx), opts);
  }
  return decodeInTurns(ctx.endpoint, next, decoding).then(() => updateManagedFieldsInTurns(live, next, managerOf(ctx), opts));
}

/** The endpoint's decoding of a large request's object, in turns where it has them, and a turn after it. */
export async function decodeInTurns(endpoint: Endpoint, obj: KObject, opts: DecodeOptions): Promise<void> {
  if (endpoint.decodeObjectInTurns) await endpoint.decodeObjectInTurns(obj, opts);
  else endpoint.decodeObject?.(obj, opts);
  await nextTurn();
}

/** A server-side apply of `applied` by `manager` (apply/applyObject), in steps for a large request. */
export function applyFor(large: boolean, live: KObject | undefined, applied: KObject, manager: string, opts: ApplyOptions): KObject | Promise<KObject> {
  return large ? applyObjectInTurns(live, applied, manager, opts) : applyObject(live, applied, manager, opts);
}
