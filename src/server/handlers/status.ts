/**
 * The /status subresource: GET returns the object; PUT and PATCH change only
 * `.status` (everything else is taken from the stored object) and never move
 * metadata.generation.
 */
import type { KObject } from '../../registry/types.js';
import { deepClone } from '../../machinery/json.js';
import { errors } from '../../machinery/status.js';
import { writeStoredObject } from '../output.js';
import type { HandlerContext } from './context.js';
import { checkTypeMeta, readObjectBody } from './decode-object.js';
import { handleGet } from './read.js';
import { checkPatchOptions, readPatch } from './patch.js';
import { fieldManagerOptions, trackUpdate } from './field-manager.js';
import { applyObject } from '../../apply/index.js';
import { dryRunOf, storeOptions } from './write.js';

export const handleStatusGet = handleGet;

/**
 * The stored object with the status (and resourceVersion precondition) of `incoming`.
 * It shares all but its top level and metadata with `old`, the store's private copy
 * of the live object (nothing changes either in place), and takes `incoming`'s status,
 * copied when `incoming` may share it with `old`.
 */
function withStatusOf(old: KObject, incoming: KObject, copyStatus = false): KObject {
  const next: KObject = { ...old, metadata: { ...old.metadata, resourceVersion: incoming.metadata?.resourceVersion } };
  if (incoming.status === undefined) delete next.status;
  else next.status = copyStatus ? deepClone(incoming.status) : incoming.status;
  return next;
}

export async function handleStatusUpdate(ctx: HandlerContext): Promise<void> {
  const { endpoint, info } = ctx;
  const dryRun = dryRunOf(ctx, 'UpdateOptions');
  const body = await readObjectBody(ctx);
  if (body.metadata.name !== undefined && body.metadata.name !== info.name) {
    throw errors.badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${info.name})`);
  }
  const incoming = await endpoint.toStorage(body);
  const result = await endpoint.store.update(
    info.namespace,
    info.name!,
    (old) => trackUpdate(ctx, old!, withStatusOf(old!, incoming), 'status'),
    { ...storeOptions(ctx, dryRun), subresource: 'status' },
  );
  await endpoint.prepare?.([result.object]);
  writeStoredObject(ctx.res, 200, result.object, ctx);
}

export async function handleStatusPatch(ctx: HandlerContext): Promise<void> {
  const { endpoint, info } = ctx;
  const dryRun = dryRunOf(ctx, 'PatchOptions');
  const patch = await readPatch(ctx);
  const force = checkPatchOptions(ctx, patch);
  const result = await endpoint.store.update(
    info.namespace,
    info.name!,
    async (old) => {
      await endpoint.prepare?.([old!]);
      const live = endpoint.toVersion(old!);
      if (patch.kind === 'apply') {
        // Apply to /status: only the status and the managed fields of the result are kept.
        const applied = applyObject(live, patch.applied!, ctx.query.get('fieldManager')!, {
          ...fieldManagerOptions(endpoint, 'status'),
          kind: endpoint.names.kind,
          force: force ?? false,
        });
        const next = withStatusOf(old!, await endpoint.toStorage(applied));
        next.metadata.managedFields = applied.metadata?.managedFields;
        return next;
      }
      // Only the patched status is kept (copied): the rest of the result may be live's own.
      const patched = checkTypeMeta(ctx, patch.applySharing(live), patch.raw);
      return trackUpdate(ctx, old!, withStatusOf(old!, await endpoint.toStorage(patched), true), 'status');
    },
    { ...storeOptions(ctx, dryRun), subresource: 'status' },
  );
  await endpoint.prepare?.([result.object]);
  writeStoredObject(ctx.res, 200, result.object, ctx);
}
