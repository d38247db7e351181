/** GET of one object and of a list. */
import type { KObject } from '../../api/object.js';
import { writeStoredList, writeStoredObject, type ListMeta } from '../output.js';
import { groupVersion, type HandlerContext } from './context.js';
import { continueToken, expiredContinue, parseListParams } from './list-options.js';

export async function handleGet(ctx: HandlerContext): Promise<void> {
  const { endpoint, info } = ctx;
  const obj = await endpoint.store.get(info.namespace, info.name!);
  await endpoint.prepare?.([obj]);
  await writeStoredObject(ctx.res, 200, obj, ctx);
}

export async function handleList(ctx: HandlerContext): Promise<void> {
  const { endpoint } = ctx;
  const params = parseListParams(ctx);
  let page;
  try {
    page = await endpoint.store.list(params.store);
  } catch (err) {
    throw expiredContinue(err, params.store.startKey !== undefined);
  }
  // A conversion's preparation reads every object; without one, a plain JSON answer may read none (page.listed).
  if (endpoint.prepare) await endpoint.prepare(page.items);
  const meta: ListMeta = { resourceVersion: String(page.revision), continue: continueToken(ctx, page.revision, page.continueKey), remainingItemCount: page.remainingItemCount };
  await writeStoredList(ctx.res, 200, listHead(ctx, meta), endpoint.prepare ? page.items : (page.listed ?? page.items), meta, ctx);
}

/** A list object of the endpoint's kind without its items. */
export function listHead(ctx: HandlerContext, meta: ListMeta): KObject {
  const { endpoint } = ctx;
  const metadata: KObject = {};
  // Unstructured lists always carry `continue`; typed lists omit it when empty.
  if (meta.continue || endpoint.scope.emptyContinue) metadata.continue = meta.continue ?? '';
  if (meta.remainingItemCount !== undefined && meta.remainingItemCount > 0) metadata.remainingItemCount = meta.remainingItemCount;
  metadata.resourceVersion = meta.resourceVersion;
  return { apiVersion: groupVersion(endpoint.group, endpoint.version), kind: endpoint.names.listKind, metadata };
}
