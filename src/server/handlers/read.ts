/** GET of one object and of a list. */
import type { KObject } from '../../registry/types.js';
import { stringifyJson } from '../../machinery/json.js';
import { memoJson } from '../../registry/json-memo.js';
import { parseIncludeObject, tableForList, tableForObject, type TableOptions, type TableVersion } from '../../printing/index.js';
import { writeJson, writeObject, writeShared } from '../respond.js';
import { groupVersion, type HandlerContext } from './context.js';
import { continueToken, expiredContinue, parseListParams } from './list-options.js';

export async function handleGet(ctx: HandlerContext): Promise<void> {
  const { endpoint, info } = ctx;
  const obj = await endpoint.store.get(info.namespace, info.name!);
  await endpoint.prepare?.([obj]);
  if (ctx.output.format === 'table') {
    return writeJson(ctx.res, 200, stringifyJson(tableForObject(endpoint.table!, endpoint.toVersion(obj), tableOptions(ctx))));
  }
  if (ctx.output.format === 'json' && !ctx.output.pretty) {
    return writeJson(ctx.res, 200, memoJson(obj, endpoint.version, endpoint.toVersion));
  }
  writeShared(ctx.res, 200, obj, endpoint, ctx.output);
}

const COMMA = Buffer.from(',');
const LIST_END = Buffer.from(']}');

export async function handleList(ctx: HandlerContext): Promise<void> {
  const { endpoint } = ctx;
  const params = parseListParams(ctx);
  let page;
  try {
    page = await endpoint.store.list(params.store);
  } catch (err) {
    throw expiredContinue(err, params.store.startKey !== undefined);
  }
  await endpoint.prepare?.(page.items);
  const cont = continueToken(ctx, page.revision, page.continueKey);
  if (ctx.output.format === 'table') {
    const meta = { resourceVersion: String(page.revision), continue: cont, remainingItemCount: page.remainingItemCount };
    const table = tableForList(endpoint.table!, page.items.map((o) => endpoint.toVersion(o)), meta, tableOptions(ctx));
    return writeJson(ctx.res, 200, stringifyJson(table));
  }
  if (ctx.output.format === 'json' && !ctx.output.pretty) {
    // The list's JSON is assembled from each item's remembered JSON.
    const head = stringifyJson(listObject(ctx, [], page.revision, cont, page.remainingItemCount));
    const parts: Buffer[] = [Buffer.from(head.slice(0, -2))];
    page.items.forEach((o, i) => {
      if (i > 0) parts.push(COMMA);
      parts.push(memoJson(o, endpoint.version, endpoint.toVersion));
    });
    parts.push(LIST_END);
    return writeJson(ctx.res, 200, Buffer.concat(parts));
  }
  writeObject(ctx.res, 200, listObject(ctx, page.items, page.revision, cont, page.remainingItemCount), ctx.output.format, ctx.output.pretty);
}

export function tableOptions(ctx: HandlerContext): TableOptions {
  return { version: ctx.output.tableVersion as TableVersion, includeObject: parseIncludeObject(ctx.query.get('includeObject')) };
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
