/**
 * Namespace deletion, run in process (kube-controller-manager's job upstream):
 * a namespace marked for deletion is emptied of every namespaced object, built-in
 * and custom, honoring their finalizers, with progress reported in upstream's
 * conditions; then its `kubernetes` finalizer is removed and the namespace goes.
 * Event-driven: a terminating namespace is looked at again when one of its
 * objects is deleted.
 */
import { NAMESPACE_FINALIZER, namespaceFinalizers } from '../apis/core/namespaces.js';
import { toRfc3339 } from '../machinery/time.js';
import type { RestStore } from '../registry/store.js';
import type { KObject } from '../registry/types.js';
import { deepEqual } from '../util/deep-equal.js';
import { KeyedSerializer } from '../util/keyed-serializer.js';
import type { ObjectEventHub } from './object-events.js';

interface Condition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export class NamespaceController {
  private readonly serializer = new KeyedSerializer((name, err) => console.error(`kapi: deleting namespace ${name}:`, err));
  private readonly terminating = new Set<string>();

  constructor(
    private readonly hub: ObjectEventHub,
    private readonly namespaces: RestStore,
  ) {
    hub.on((store, type, obj) => {
      if (store === this.namespaces) {
        if (type !== 'DELETED' && obj.metadata.deletionTimestamp) void this.sync(obj.metadata.name);
        if (type === 'DELETED') this.terminating.delete(obj.metadata.name);
      } else if (type === 'DELETED' && this.terminating.has(obj.metadata?.namespace)) {
        void this.sync(obj.metadata.namespace);
      }
    });
  }

  sync(name: string): Promise<void> {
    return this.serializer.run(name, () => this.reconcile(name));
  }

  private async reconcile(name: string): Promise<void> {
    let ns: KObject;
    try {
      ns = await this.namespaces.get(undefined, name);
    } catch {
      this.terminating.delete(name);
      return;
    }
    if (!ns.metadata.deletionTimestamp || !namespaceFinalizers(ns).includes(NAMESPACE_FINALIZER)) return;
    this.terminating.add(name);
    const remaining: string[] = [];
    const finalizers = new Map<string, number>();
    let failure: string | undefined;
    for (const store of this.hub.stores().filter((s) => s.names.namespaced)) {
      try {
        await store.deleteCollection({ namespace: name, consistent: true });
        const left = (await store.list({ namespace: name, consistent: true })).items;
        if (left.length === 0) continue;
        const gr = store.names.group ? `${store.names.resource}.${store.names.group}` : store.names.resource;
        remaining.push(`${gr} has ${left.length} resource instances`);
        for (const o of left) for (const f of o.metadata.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
      } catch (err) {
        failure = (err as Error).message;
      }
    }
    const conditions = namespaceConditions(remaining.sort(), finalizers, failure);
    if (remaining.length > 0 || failure) {
      await this.writeConditions(ns, conditions);
      return; // the remaining objects' DELETED events bring this namespace back
    }
    await this.namespaces.update(undefined, name, (old) => {
      old!.spec = { ...old!.spec, finalizers: namespaceFinalizers(old!).filter((f) => f !== NAMESPACE_FINALIZER) };
      return old!;
    });
  }

  private async writeConditions(ns: KObject, conditions: Condition[]): Promise<void> {
    const now = toRfc3339(new Date());
    const old: KObject[] = ns.status?.conditions ?? [];
    const next = conditions.map((c) => {
      const prev = old.find((o) => o.type === c.type);
      return { ...c, lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : now };
    });
    if (deepEqual(next, old)) return;
    await this.namespaces
      .update(undefined, ns.metadata.name, (cur) => ({ ...cur!, status: { ...cur!.status, conditions: next } }), { subresource: 'status' })
      .catch(() => undefined);
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
