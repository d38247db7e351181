/** DELETE of one object and of a collection. */
import { field } from '../../machinery/field-errors.js';
import { parseJson } from '../../machinery/json.js';
import { errors, successStatus } from '../../machinery/status.js';
import type { DeleteOptions } from '../../registry/types.js';
import { decodeProtobufBody, readBody } from '../body.js';
import { bodyMediaType } from '../negotiation.js';
import { writeEncoded, writeStoredList, writeVersionedObject } from '../output.js';
import type { HandlerContext } from './context.js';
import { parseListParams } from './list-options.js';
import { listHead } from './read.js';
import { int64Param } from './query-params.js';
import { admissionOf, dryRunOf } from './write.js';
import type { KObject } from '../../api/object.js';

const DELETE_OPTIONS = { group: 'meta.k8s.io', resource: 'DeleteOptions' };
const POLICIES = ['Foreground', 'Background', 'Orphan'];

async function deleteOptions(ctx: HandlerContext): Promise<DeleteOptions> {
  const opts: DeleteOptions = { dryRun: dryRunOf(ctx, 'DeleteOptions') };
  const raw = await readBody(ctx.req, ctx.res);
  if (raw.length > 0) {
    let body: KObject;
    if (bodyMediaType(ctx.req.headers['content-type']) === 'application/vnd.kubernetes.protobuf') {
      body = decodeProtobufBody(raw, { apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions' });
    } else {
      try {
        body = parseJson(raw.toString('utf8')) as KObject;
      } catch (err) {
        throw errors.badRequest((err as Error).message);
      }
    }
    if (body && typeof body === 'object') {
      if (body.preconditions) opts.preconditions = body.preconditions;
      if (typeof body.gracePeriodSeconds === 'number') opts.gracePeriodSeconds = body.gracePeriodSeconds;
      if (typeof body.propagationPolicy === 'string') opts.propagationPolicy = body.propagationPolicy;
      if (typeof body.orphanDependents === 'boolean') {
        if (opts.propagationPolicy !== undefined) {
          throw errors.invalid(DELETE_OPTIONS, '', [field.invalid('propagationPolicy', opts.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set')]);
        }
        opts.propagationPolicy = body.orphanDependents ? 'Orphan' : 'Background';
      }
      if (Array.isArray(body.dryRun) && body.dryRun.includes('All')) opts.dryRun = true;
    }
  }
  const grace = int64Param(ctx.query, 'gracePeriodSeconds');
  if (grace !== undefined) opts.gracePeriodSeconds = grace;
  const policy = ctx.query.get('propagationPolicy');
  if (policy) opts.propagationPolicy = policy;
  const orphan = ctx.query.get('orphanDependents');
  if (orphan !== null && opts.propagationPolicy === undefined) opts.propagationPolicy = orphan === 'true' ? 'Orphan' : 'Background';
  if (opts.propagationPolicy !== undefined && !POLICIES.includes(opts.propagationPolicy)) {
    throw errors.invalid(DELETE_OPTIONS, '', [field.notSupported('propagationPolicy', opts.propagationPolicy, POLICIES)]);
  }
  return opts;
}

export async function handleDelete(ctx: HandlerContext): Promise<void> {
  const { endpoint, info } = ctx;
  const opts = await deleteOptions(ctx);
  opts.admission = admissionOf(ctx, opts.dryRun ?? false);
  const { object, deleted } = await endpoint.store.delete(info.namespace, info.name!, opts);
  if (deleted && !endpoint.store.strategy.returnDeletedObject) {
    const status = successStatus({ name: info.name, group: endpoint.group, kind: endpoint.names.resource, uid: object.metadata.uid });
    await writeEncoded(ctx.res, 200, status, ctx.output);
    return;
  }
  await endpoint.prepare?.([object]);
  await writeVersionedObject(ctx.res, 200, endpoint.toVersion(object), ctx);
}

export async function handleDeleteCollection(ctx: HandlerContext): Promise<void> {
  const { endpoint } = ctx;
  const params = parseListParams(ctx);
  const opts = await deleteOptions(ctx);
  opts.admission = admissionOf(ctx, opts.dryRun ?? false);
  const result = await endpoint.store.deleteCollection(params.store, opts);
  await endpoint.prepare?.(result.items);
  const meta = { resourceVersion: String(result.revision) };
  await writeStoredList(ctx.res, 200, listHead(ctx, meta), endpoint.prepare ? result.items : (result.listed ?? result.items), meta, ctx);
}
