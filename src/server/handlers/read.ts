/** GET of one object and of a list. */
import type { KObject } from '../../registry/types.js';
import { writeObject } from '../respond.js';
import { groupVersion, type HandlerContext } from './context.js';
import { continueToken, expiredContinue, parseListParams } from './list-options.js';

export async function handleGet(ctx: HandlerContext): Promise<void> {
  const { endpoint, info } = ctx;
  const obj = await endpoint.store.get(info.namespace, info.name!);
  writeObject(ctx.res, 200, endpoint.toVersion(obj), ctx.output.format, ctx.output.pretty);
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
  writeObject(ctx.res, 200, listObject(ctx, page.items, page.revision, continueToken(ctx, page.revision, page.continueKey), page.remainingItemCount), ctx.output.format, ctx.output.pretty);
}

export function listObject(ctx: HandlerContext, items: KObject[], revision: number, cont = '', remaining?: number): KObject {
  const { endpoint } = ctx;
  const metadata: KObject = {};
  // Unstructured lists always carry `continue`; typed lists omit it when empty.
  if (cont || endpoint.custom) metadata.continue = cont;
  if (remaining !== undefined && remaining > 0) metadata.remainingItemCount = remaining;
  metadata.resourceVersion = String(revision);
  return {
    apiVersion: groupVersion(endpoint.group, endpoint.version),
    kind: endpoint.names.listKind,
    metadata,
    items: items.map((o) => endpoint.toVersion(o)),
  };
}
