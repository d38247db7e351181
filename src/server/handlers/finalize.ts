/** PUT /api/v1/namespaces/<name>/finalize: replaces spec.finalizers and nothing else. */
import { errors } from '../../machinery/status.js';
import { writeVersionedObject } from '../output.js';
import type { HandlerContext } from './context.js';
import { readObjectBody } from './decode-object.js';
import { dryRunOf, storeOptions } from './write.js';

export async function handleFinalize(ctx: HandlerContext): Promise<void> {
  const { endpoint, info } = ctx;
  const dryRun = dryRunOf(ctx, 'UpdateOptions');
  const body = await readObjectBody(ctx);
  if (body.metadata.name !== undefined && body.metadata.name !== info.name) {
    throw errors.badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${info.name})`);
  }
  const finalizers = Array.isArray(body.spec?.finalizers) ? body.spec.finalizers : [];
  const result = await endpoint.store.update(
    info.namespace,
    info.name!,
    (old) => {
      old!.spec = { ...old!.spec, finalizers };
      old!.metadata.resourceVersion = body.metadata.resourceVersion ?? old!.metadata.resourceVersion;
      return old!;
    },
    { ...storeOptions(ctx, dryRun), subresource: 'finalize' },
  );
  writeVersionedObject(ctx.res, 200, endpoint.toVersion(result.object), ctx);
}
