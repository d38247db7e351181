/**
 * core/v1 Namespace: phase Active on create, the `kubernetes` finalizer in
 * spec (kept on the main endpoint), the `kubernetes.io/metadata.name` label, and the NamespaceLifecycle admission check that refuses objects in a
 * namespace that does not exist or is being terminated.
 */
import { namespacePrinter } from '../../printing/index.js';
import { errors } from '../../machinery/status.js';
import { nameIsDNSLabel } from '../../machinery/validation.js';
import type { RestStore } from '../../registry/store.js';
import type { Strategy } from '../../registry/types.js';
import type { KObject } from '../../api/object.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../../registry/admission.js';
import type { BuiltinResource } from '../builtin.js';

export const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
const IMMORTAL_NAMESPACES = ['default', 'kube-system', 'kube-public'];

const namespaceStrategy: Strategy = {
  allowUnconditionalUpdate: true,
  // ValidateNamespaceName: a DNS-1123 label (no dots).
  nameRule: nameIsDNSLabel,
  resetFieldsOnMainEndpoint: ['status'],
  prepareForCreate(obj: KObject) {
    obj.status = { phase: 'Active' };
    obj.spec = { ...(obj.spec ?? {}), finalizers: ['kubernetes'] };
  },
  // The main endpoint keeps spec.finalizers and status (only /finalize and /status change them).
  prepareForUpdate(obj: KObject, old: KObject, ctx) {
    if (ctx.subresource !== undefined) return;
    obj.spec = { ...(obj.spec ?? {}), finalizers: old.spec?.finalizers };
    if (obj.spec.finalizers === undefined) delete obj.spec.finalizers;
  },
  // kubernetes.io/metadata.name is the name, always (Canonicalize: set after a generated name too).
  canonicalize(obj: KObject) {
    obj.metadata.labels = { ...(obj.metadata.labels ?? {}), [METADATA_NAME_LABEL]: obj.metadata.name };
  },
  // Deleting a namespace marks it Terminating; the namespace controller empties it and removes the finalizer.
  prepareForDelete(obj: KObject) {
    obj.status = { ...(obj.status ?? {}), phase: 'Terminating' };
    return namespaceFinalizers(obj).length > 0 || (obj.metadata.finalizers ?? []).length > 0;
  },
  hasPendingFinalizers(obj: KObject) {
    return namespaceFinalizers(obj).length > 0 || (obj.metadata.finalizers ?? []).length > 0;
  },
};

export const NAMESPACE_FINALIZER = 'kubernetes';
export const METADATA_NAME_LABEL = 'kubernetes.io/metadata.name';

export function namespaceFinalizers(ns: KObject): string[] {
  return Array.isArray(ns.spec?.finalizers) ? ns.spec.finalizers : [];
}

export const NAMESPACES: BuiltinResource = {
  version: 'v1',
  names: { group: '', resource: 'namespaces', singular: 'namespace', kind: 'Namespace', listKind: 'NamespaceList', namespaced: false, shortNames: ['ns'] },
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  status: true,
  finalize: true,
  strategy: namespaceStrategy,
  printer: namespacePrinter,
};

/** NamespaceLifecycle: creation of namespaced objects needs an existing, active namespace. */
/**
 * The NamespaceLifecycle admission plugin (a mutating one upstream, so it runs
 * before the strategy's validation): the namespaces every cluster has may not
 * be deleted, and nothing new is created in a namespace that does not exist or
 * is being terminated.
 */
/**
 * `namespaces`: kapi's own, or (an aggregated server, --kubeconfig) a lookup of the core cluster's, which
 * throws its 404 for a namespace it does not have.
 */
export function namespaceLifecycle(namespaces: RestStore | ((name: string) => Promise<KObject>)): AdmissionPlugin {
  // Namespaces deleted through this server lately are read live, not from a cache that may not have the deletion
  // yet (upstream's forceLiveLookupCache, 30 s).
  const deleted = new Map<string, number>();
  return {
    name: 'NamespaceLifecycle',
    // It refuses, and never changes an object.
    reportsChanges: true,
    admit(a) {
      const isNamespace = a.resource.group === '' && a.resource.resource === 'namespaces';
      if (a.operation === 'DELETE' && isNamespace && a.subresource === '' && IMMORTAL_NAMESPACES.includes(a.name)) {
        throw errors.forbidden({ group: '', resource: 'namespaces' }, a.name, 'this namespace may not be deleted');
      }
      if (a.operation === 'DELETE' && isNamespace && a.subresource === '') {
        if (deleted.size >= MAX_LIVE_LOOKUPS) deleted.clear();
        deleted.set(a.name, Date.now() + LIVE_LOOKUP_MS);
      }
      if (a.operation !== 'CREATE' || !a.namespace || isNamespace) return undefined;
      // As upstream's accessReviewResources: a review of access in a namespace needs no namespace to exist.
      if (a.resource.group === 'authorization.k8s.io' && a.resource.resource === 'localsubjectaccessreviews') return undefined;
      const until = deleted.get(a.namespace);
      const live = until !== undefined && until > Date.now();
      if (until !== undefined && !live) deleted.delete(a.namespace);
      return checkNotTerminating(namespaces, a, live);
    },
  };
}

const LIVE_LOOKUP_MS = 30_000;
const MAX_LIVE_LOOKUPS = 4096;

/**
 * Nothing new in a namespace that does not exist (404) or is being terminated (403). The namespace is read from
 * the watch cache (upstream's lister) without a promise when it is there; else, or `live`, looked up (as upstream's).
 */
function checkNotTerminating(namespaces: RestStore | ((name: string) => Promise<KObject>), a: AdmissionAttributes, live: boolean): void | Promise<void> {
  if (typeof namespaces !== 'function' && !live) {
    const cached = namespaces.cache.get(namespaces.key(undefined, a.namespace))?.object;
    if (cached) return refuseTerminating(cached, a);
  }
  const lookup = typeof namespaces === 'function' ? namespaces(a.namespace) : namespaces.get(undefined, a.namespace);
  return lookup.then((ns) => refuseTerminating(ns, a));
}

function refuseTerminating(ns: KObject, a: AdmissionAttributes): void {
  if (ns.status?.phase === 'Terminating' || ns.metadata?.deletionTimestamp) {
    const err = errors.forbidden(
      { group: a.resource.group, resource: a.resource.resource },
      a.object?.metadata?.name ?? '',
      `unable to create new content in namespace ${a.namespace} because it is being terminated`,
    );
    err.details!.causes = [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }];
    throw err;
  }
}
