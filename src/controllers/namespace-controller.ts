/**
 * Namespace deletion, run in process (kube-controller-manager's job upstream),
 * as a client of the API with its own identity: a namespace marked for
 * deletion is emptied of every namespaced object of every served resource
 * (from discovery; a deletecollection where the resource has it, else one
 * delete per object), honouring their finalizers, with progress reported in
 * upstream's conditions; then its `kubernetes` finalizer is removed through
 * /finalize and the namespace goes. Namespaces come from an informer; a
 * terminating namespace is looked at again when one of its objects is deleted
 * (and after 15 s, as upstream's estimate); failures are retried with backoff.
 */
import { NAMESPACE_FINALIZER, namespaceFinalizers } from '../apis/core/namespaces.js';
import { toRfc3339 } from '../machinery/time.js';
import type { KObject } from '../api/object.js';
import { resourcePath, type Client, type ResourceClient } from '../sdk/client.js';
import type { Manager, ReconcileResult } from '../sdk/controller.js';
import { deepEqual } from '../util/deep-equal.js';
import { preferredResources } from './discovery-client.js';
import { inPages, METADATA_LIST } from './paging.js';
import type { ObjectEventHub } from './object-events.js';

interface Condition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** Upstream's estimate for content that is still going: look again after this long. */
const REMAINING_RECHECK_MS = 15_000;

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces', namespaced: false };

export class NamespaceController {
  private readonly namespaces: ResourceClient;

  /** Added to `manager` (whose namespace informer it follows); `client` does the deleting. */
  constructor(
    manager: Manager,
    private readonly client: Client,
    hub: ObjectEventHub,
  ) {
    this.namespaces = client.resource(NAMESPACES);
    const informer = manager.informer(NAMESPACES);
    const terminating = (ns: KObject) => Boolean(ns.metadata?.deletionTimestamp);
    const controller = manager.add({
      name: 'namespace-controller',
      for: NAMESPACES,
      predicates: [{ create: terminating, update: terminating, delete: () => false }],
      reconcile: ({ name }) => this.reconcile(name),
    });
    hub.on((_store, type, obj) => {
      const ns = obj.metadata?.namespace;
      if (type === 'DELETED' && ns && informer.get(ns)?.metadata.deletionTimestamp) controller.enqueue({ name: ns });
    });
  }

  private async reconcile(name: string): Promise<ReconcileResult> {
    let ns: KObject;
    try {
      ns = await this.namespaces.get(undefined, name);
    } catch (err) {
      if ((err as { code?: number }).code === 404) return;
      throw err;
    }
    if (!ns.metadata.deletionTimestamp || !namespaceFinalizers(ns).includes(NAMESPACE_FINALIZER)) return;
    const remaining: string[] = [];
    const finalizers = new Map<string, number>();
    let failure: string | undefined;
    const resources = (await preferredResources(this.client)).filter((r) => r.namespaced && r.verbs.includes('list') && r.verbs.includes('delete'));
    for (const r of resources) {
      const resource = this.client.resource(r);
      try {
        // The answer lists every deleted object: only its status matters here (as upstream's deleter ignores it).
        if (r.verbs.includes('deletecollection')) await this.client.request('DELETE', resourcePath(r, name), { discardBody: true });
        else await this.deleteEach(resource, name);
        let left = 0;
        for await (const o of inPages(resource, name, METADATA_LIST)) {
          left++;
          for (const f of o.metadata?.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
        }
        if (left === 0) continue;
        remaining.push(`${r.group ? `${r.resource}.${r.group}` : r.resource} has ${left} resource instances`);
      } catch (err) {
        failure = (err as Error).message;
      }
    }
    const conditions = namespaceConditions(remaining.sort(), finalizers, failure);
    if (remaining.length > 0 || failure) {
      await this.writeConditions(ns, conditions);
      if (failure) throw new Error(failure);
      // The remaining objects' DELETED events bring this namespace back; so does the estimate.
      return { requeueAfterMs: REMAINING_RECHECK_MS };
    }
    const spec = { ...ns.spec, finalizers: namespaceFinalizers(ns).filter((f) => f !== NAMESPACE_FINALIZER) };
    await this.namespaces.update(undefined, name, { ...ns, spec }, 'finalize');
  }

  /** A resource without deletecollection: each object in the namespace, deleted on its own. */
  private async deleteEach(resource: ResourceClient, namespace: string): Promise<void> {
    for await (const o of inPages(resource, namespace, METADATA_LIST)) {
      if (o.metadata?.deletionTimestamp) continue;
      await resource.delete(namespace, o.metadata.name, { preconditions: { uid: o.metadata.uid } }).catch((err: { code?: number }) => {
        if (err.code !== 404 && err.code !== 409) throw err;
      });
    }
  }

  private async writeConditions(ns: KObject, conditions: Condition[]): Promise<void> {
    const now = toRfc3339(new Date());
    const old: KObject[] = ns.status?.conditions ?? [];
    const next = conditions.map((c) => {
      const prev = old.find((o) => o.type === c.type);
      return { ...c, lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : now };
    });
    if (deepEqual(next, old)) return;
    await this.namespaces.update(undefined, ns.metadata.name, { ...ns, status: { ...ns.status, conditions: next } }, 'status');
  }
}

function namespaceConditions(remaining: string[], finalizers: Map<string, number>, failure: string | undefined): Condition[] {
  const held = [...finalizers.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([f, n]) => `${f} in ${n} resource instances`);
  return [
    { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
    { type: 'NamespaceDeletionGroupVersionParsingFailure', status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
    failure
      ? { type: 'NamespaceDeletionContentFailure', status: 'True', reason: 'ContentDeletionFailed', message: `Failed to delete all resource types, 1 remaining: ${failure}` }
      : { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
    remaining.length > 0
      ? { type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${remaining.join(', ')}` }
      : { type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' },
    held.length > 0
      ? { type: 'NamespaceFinalizersRemaining', status: 'True', reason: 'SomeFinalizersRemain', message: `Some content in the namespace has finalizers remaining: ${held.join(', ')}` }
      : { type: 'NamespaceFinalizersRemaining', status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
  ];
}
