/**
 * Dispatch of a resource request to its verb handler, after the checks that
 * kube-apiserver's routing makes: scope of the path, known subresources,
 * allowed verbs.
 */
import { errors, StatusError } from '../../machinery/status.js';
import { writeNotFound } from '../respond.js';
import type { HandlerContext } from './context.js';
import { handleDelete, handleDeleteCollection } from './delete.js';
import { handleScale } from './scale.js';
import { serveSubresourceStorage } from './subresource-storage.js';
import { handlePatch } from './patch.js';
import { handleGet, handleList } from './read.js';
import { handleWatch } from './watch.js';
import { handleCreate, handleUpdate } from './write.js';

const CLUSTER_PATH_VERBS_FOR_NAMESPACED = new Set(['list', 'watch']);
const SUBRESOURCE_VERBS = new Map([
  ['status', ['get', 'update', 'patch']],
  ['finalize', ['update']],
]);


export async function serveResource(ctx: HandlerContext): Promise<void> {
  const { info, endpoint } = ctx;
  const gr = { group: endpoint.group, resource: endpoint.names.resource };
  if (endpoint.names.namespaced) {
    if (info.namespace === undefined && !CLUSTER_PATH_VERBS_FOR_NAMESPACED.has(info.verb)) return writeNotFound(ctx.res);
    if (info.namespace !== undefined && !info.namespacedPath) return writeNotFound(ctx.res);
  } else if (info.namespacedPath) {
    return writeNotFound(ctx.res);
  }
  if (info.extraParts) throw errors.notFound(gr, info.name ?? '');
  // Another method (OPTIONS, ...): a built-in's routes do not have it (go-restful's 405, as serviceErrorHandler
  // answers it); the CRD handler refuses its empty verb as any other.
  if (info.verb === '' && endpoint.scope.methodNotAllowed) throw new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
  // Subresources: scale converts to and from a Scale; those with a storage of their group's (a pod's kubelet
  // subresources, binding and eviction; a service account's token) are served by it; the others are the
  // object's own verbs, whose writes keep only part of what is sent (the store's subresource strategies).
  if (info.subresource === 'scale' && endpoint.subresources.scale) return handleScale(ctx);
  if (info.subresource !== undefined) {
    const other = endpoint.subresources.others?.find((s) => s.name === info.subresource);
    const verbs = other?.verbs ?? SUBRESOURCE_VERBS.get(info.subresource);
    const served = other !== undefined || endpoint.subresources[info.subresource as 'status' | 'finalize'];
    if (!verbs || !served) throw errors.notFound(gr, info.name!);
    if (!verbs.includes(info.verb)) throw errors.methodNotSupported(gr, info.verb);
    if (other?.storage) return serveSubresourceStorage(ctx, other);
  }
  if (info.subresource === undefined && !endpoint.verbs.includes(info.verb)) throw errors.methodNotSupported(gr, info.verb);
  switch (info.verb) {
    case 'get':
      return handleGet(ctx);
    case 'list':
      return handleList(ctx);
    case 'watch':
      return handleWatch(ctx);
    case 'create':
      if (info.name !== undefined) throw errors.methodNotSupported(gr, 'create');
      return handleCreate(ctx);
    case 'update':
      return handleUpdate(ctx);
    case 'patch':
      return handlePatch(ctx);
    case 'delete':
      return handleDelete(ctx);
    case 'deletecollection':
      return handleDeleteCollection(ctx);
    default:
      throw errors.methodNotSupported(gr, info.verb);
  }
}
