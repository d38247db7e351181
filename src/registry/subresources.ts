/**
 * The strategies of subresources that write part of an object, as upstream's
 * registries give each its own: what of the object a client sends through the
 * subresource is kept, everything else taken from the stored object.
 * - status (statusStrategy.PrepareForUpdate): the status, and the managed fields
 *   the write recorded;
 * - finalize (namespaces' finalizeStrategy): spec.finalizers.
 * A resource's strategy may name its own (Strategy.subresourceStrategies).
 *
 * `old` is the store's private copy of the stored object for this attempt: the
 * result may share with it, never with the cache.
 */
import type { KObject } from '../api/object.js';

export interface SubresourceStrategy {
  /** The object to store, from what the client sent through the subresource and the stored object. */
  prepareForUpdate(obj: KObject, old: KObject): KObject;
}

export const statusStrategy: SubresourceStrategy = {
  prepareForUpdate(obj, old) {
    const next: KObject = { ...old, metadata: { ...old.metadata, resourceVersion: obj.metadata?.resourceVersion } };
    const managed = obj.metadata?.managedFields;
    if (managed === undefined) delete next.metadata.managedFields;
    else next.metadata.managedFields = managed;
    if (obj.status === undefined) delete next.status;
    else next.status = obj.status;
    return next;
  },
};

export const finalizeStrategy: SubresourceStrategy = {
  prepareForUpdate(obj, old) {
    const finalizers = Array.isArray(obj.spec?.finalizers) ? obj.spec.finalizers : [];
    return {
      ...old,
      metadata: { ...old.metadata, resourceVersion: obj.metadata?.resourceVersion || old.metadata.resourceVersion },
      spec: { ...old.spec, finalizers },
    };
  },
};

export const DEFAULT_SUBRESOURCE_STRATEGIES: Readonly<Record<string, SubresourceStrategy>> = { status: statusStrategy, finalize: finalizeStrategy };
