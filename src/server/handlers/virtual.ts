/**
 * Requests to a virtual endpoint (a resource with no store): today create,
 * as upstream's create handler serves a rest.Creater that stores nothing
 * (TokenReview, SubjectAccessReview): decode and check the body, run mutating
 * admission, let the endpoint answer (validating admission before it acts),
 * and write the answer with 201.
 */
import { errors } from '../../machinery/status.js';
import type { ServedResource, VirtualEndpoint } from '../../registry/registry.js';
import { writeVersionedObject } from '../output.js';
import { writeNotFound } from '../respond.js';
import type { HandlerContext } from './context.js';
import { readObjectBody } from './decode-object.js';
import { admissionOf, dryRunOf } from './write.js';
import { validateWriteOptions } from '../../apply/index.js';

export async function serveVirtual(ctx: HandlerContext<VirtualEndpoint>): Promise<void> {
  const { endpoint, info } = ctx;
  const gr = { group: endpoint.group, resource: endpoint.names.resource };
  if (info.subresource !== undefined || info.extraParts) throw errors.notFound(gr, info.name ?? '');
  if (endpoint.names.namespaced !== (info.namespace !== undefined)) throw errors.notFound(gr, info.name ?? '');
  // Only the collection has a route (POST); a named path has none, as upstream's create-only resources.
  if (info.name !== undefined) return writeNotFound(ctx.res);
  if (info.verb !== 'create' || !endpoint.verbs.includes('create')) throw errors.methodNotSupported(gr, info.verb);
  const dryRun = dryRunOf(ctx, 'CreateOptions');
  validateWriteOptions('CreateOptions', ctx.query.get('fieldManager') ?? undefined);
  const obj = await readObjectBody(ctx);
  const admission = admissionOf(ctx as HandlerContext<ServedResource>, dryRun);
  if (admission) {
    const attributes = { ...admission.request, operation: 'CREATE' as const, object: obj };
    await admission.chain.admit(attributes);
    await admission.chain.validate(attributes);
  }
  const answer = await endpoint.create(obj, { user: ctx.user, namespace: info.namespace, dryRun, warnings: ctx.warnings, admission });
  await writeVersionedObject(ctx.res, 201, answer, ctx);
}
