/**
 * The garbage collector, in process (kube-controller-manager's job upstream).
 * Driven by object events: it keeps an index of owner uid → dependents and
 *  - deletes a dependent once none of its owners exists (owner gone or its uid
 *    differs), in the background, or in the foreground when an owner waits for it;
 *  - drops references to missing owners from dependents that still have a live owner;
 *  - for an owner deleted with propagationPolicy=Foreground (`foregroundDeletion`),
 *    deletes its dependents and removes the finalizer once no dependent with
 *    blockOwnerDeletion is left;
 *  - for propagationPolicy=Orphan (`orphan`), removes the owner's references from
 *    its dependents, then the finalizer.
 * Ownership cycles cannot hang: a dependent that owns a foreground-deleting owner
 * stops blocking it, as upstream does.
 */
import type { CacheEventType } from '../cache/watch-cache.js';
import type { ApiRegistry } from '../registry/registry.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, type RestStore } from '../registry/store.js';
import type { KObject } from '../registry/types.js';
import { KeyedSerializer } from '../util/keyed-serializer.js';
import type { ObjectEventHub } from './object-events.js';

interface ObjectRef {
  store: RestStore;
  namespace?: string;
  name: string;
  uid: string;
}

type OwnerState = 'solid' | 'dangling' | 'waiting';

export class GarbageCollector {
  /** owner uid → dependent uid → dependent */
  private readonly dependents = new Map<string, Map<string, ObjectRef>>();
  /** dependent uid → owner uids it was indexed under */
  private readonly ownersOf = new Map<string, string[]>();
  private readonly serializer = new KeyedSerializer((uid, err) => console.error(`kapi: garbage collector (${uid}):`, err));
  private kindIndex?: { generation: number; byGroupKind: Map<string, RestStore> };
  private pending = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(
    hub: ObjectEventHub,
    private readonly registry: ApiRegistry,
  ) {
    hub.on((store, type, obj) => this.onEvent(store, type, obj));
  }

  /** Resolves when no work is queued (for tests and benchmarks). */
  idle(): Promise<void> {
    return this.pending === 0 ? Promise.resolve() : new Promise((r) => this.idleWaiters.push(r));
  }

  private onEvent(store: RestStore, type: CacheEventType, obj: KObject): void {
    const meta = obj.metadata ?? {};
    const uid: string = meta.uid;
    if (!uid) return;
    if (type === 'DELETED') {
      this.unindex(uid);
      for (const dep of this.dependents.get(uid)?.values() ?? []) this.enqueue(dep.uid, () => this.attemptToDelete(dep));
      this.dependents.delete(uid);
      // Owners in foreground deletion may have been waiting for this one.
      for (const ref of ownerRefs(obj)) this.enqueueOwner(ref.uid);
      return;
    }
    const self: ObjectRef = { store, namespace: meta.namespace, name: meta.name, uid };
    const owners = ownerRefs(obj).map((r) => r.uid);
    const before = this.ownersOf.get(uid);
    if (!sameList(before, owners)) {
      this.unindex(uid);
      for (const o of owners) {
        let deps = this.dependents.get(o);
        if (!deps) this.dependents.set(o, (deps = new Map()));
        deps.set(uid, self);
      }
      if (owners.length > 0) this.ownersOf.set(uid, owners);
      if (owners.length > 0) this.enqueue(uid, () => this.attemptToDelete(self));
    }
    // An owner waiting in foreground deletion may be unblocked by this change (deleted, or blockOwnerDeletion dropped).
    for (const o of owners) this.enqueueOwner(o);
    if (meta.deletionTimestamp) {
      const finalizers: string[] = meta.finalizers ?? [];
      if (finalizers.includes(ORPHAN_FINALIZER)) this.enqueue(uid, () => this.orphanDependents(self));
      if (finalizers.includes(FOREGROUND_FINALIZER)) this.enqueue(uid, () => this.deleteDependentsFirst(self));
    }
  }

  /** An owner in foreground deletion looks again at its dependents when one of them goes. */
  private enqueueOwner(uid: string): void {
    const ref = this.owners.get(uid);
    if (ref) this.enqueue(uid, () => this.deleteDependentsFirst(ref));
  }

  /** Owners in foreground deletion, by uid. */
  private readonly owners = new Map<string, ObjectRef>();

  private enqueue(uid: string, work: () => Promise<void>): void {
    this.pending++;
    void this.serializer.run(uid, work).finally(() => {
      if (--this.pending === 0) for (const w of this.idleWaiters.splice(0)) w();
    });
  }

  private unindex(uid: string): void {
    for (const o of this.ownersOf.get(uid) ?? []) {
      const deps = this.dependents.get(o);
      deps?.delete(uid);
      if (deps && deps.size === 0) this.dependents.delete(o);
    }
    this.ownersOf.delete(uid);
  }

  private async current(ref: ObjectRef): Promise<KObject | undefined> {
    try {
      const obj = await ref.store.get(ref.namespace, ref.name);
      return obj.metadata.uid === ref.uid ? obj : undefined;
    } catch {
      return undefined;
    }
  }

  /** The store serving a kind of a group, from owner references' apiVersion and kind. */
  private storeFor(apiVersion: string, kind: string): RestStore | undefined {
    if (!this.kindIndex || this.kindIndex.generation !== this.registry.generation) {
      const byGroupKind = new Map<string, RestStore>();
      for (const ep of this.registry.all()) byGroupKind.set(`${ep.group}/${ep.names.kind}`, ep.store);
      this.kindIndex = { generation: this.registry.generation, byGroupKind };
    }
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
    return this.kindIndex.byGroupKind.get(`${group}/${kind}`);
  }

  private async ownerState(ref: KObject, dependentNamespace: string | undefined): Promise<OwnerState> {
    const store = this.storeFor(ref.apiVersion ?? '', ref.kind ?? '');
    if (!store) return 'solid'; // a kind nobody serves (yet): never collect on a guess
    let owner: KObject;
    try {
      owner = await store.get(store.names.namespaced ? dependentNamespace : undefined, ref.name);
    } catch {
      return 'dangling';
    }
    if (owner.metadata.uid !== ref.uid) return 'dangling';
    if (owner.metadata.deletionTimestamp && (owner.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER)) {
      this.owners.set(ref.uid, { store, namespace: owner.metadata.namespace, name: owner.metadata.name, uid: ref.uid });
      return 'waiting';
    }
    return 'solid';
  }

  private async attemptToDelete(ref: ObjectRef): Promise<void> {
    const obj = await this.current(ref);
    if (!obj) return;
    const deleting = Boolean(obj.metadata.deletionTimestamp);
    if (deleting && !(obj.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER)) return;
    const refs = ownerRefs(obj);
    if (refs.length === 0) return;
    const states = await Promise.all(refs.map((r) => this.ownerState(r, ref.namespace)));
    const gone = new Set(refs.filter((_, i) => states[i] !== 'solid').map((r) => r.uid));
    const waiting = states.includes('waiting');
    if (states.includes('solid')) {
      if (gone.size > 0) await this.patchOwnerRefs(ref, (rs) => rs.filter((r) => !gone.has(r.uid)));
      return;
    }
    if (waiting && this.hasDeletingDependents(ref.uid)) {
      // A cycle: this object waits on a dependent that waits on it. Stop blocking the owner.
      await this.patchOwnerRefs(ref, (rs) => rs.map((r) => (r.blockOwnerDeletion ? { ...r, blockOwnerDeletion: false } : r)));
    }
    if (deleting) return;
    await ref.store
      .delete(ref.namespace, ref.name, { preconditions: { uid: ref.uid }, propagationPolicy: waiting ? 'Foreground' : 'Background' })
      .catch(ignoreGoneOrChanged);
  }

  /** The object as the watch cache holds it, if it is still the one `ref` names. */
  private cached(ref: ObjectRef): KObject | undefined {
    const obj = ref.store.cache.get(ref.store.key(ref.namespace, ref.name))?.object;
    return obj?.metadata.uid === ref.uid ? obj : undefined;
  }

  private hasDeletingDependents(uid: string): boolean {
    for (const dep of this.dependents.get(uid)?.values() ?? []) {
      const cached = this.cached(dep);
      if (cached?.metadata.deletionTimestamp && (cached.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER)) return true;
    }
    return false;
  }

  /** Foreground deletion: delete the dependents; drop the finalizer when no blocking dependent is left. */
  private async deleteDependentsFirst(ref: ObjectRef): Promise<void> {
    this.owners.set(ref.uid, ref);
    const owner = await this.current(ref);
    if (!owner || !owner.metadata.deletionTimestamp || !(owner.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER)) {
      this.owners.delete(ref.uid);
      return;
    }
    let blocking = 0;
    // From the watch cache, as hasDeletingDependents reads: this scan runs again on every
    // dependent's DELETED event, and a storage read per dependent would make it quadratic in reads.
    for (const dep of [...(this.dependents.get(ref.uid)?.values() ?? [])]) {
      const obj = this.cached(dep);
      if (!obj) continue;
      const toOwner = ownerRefs(obj).find((r) => r.uid === ref.uid);
      if (toOwner?.blockOwnerDeletion) blocking++;
      if (!obj.metadata.deletionTimestamp) this.enqueue(dep.uid, () => this.attemptToDelete(dep));
    }
    if (blocking > 0) return; // each dependent's DELETED event brings this owner back
    await this.removeFinalizer(ref, FOREGROUND_FINALIZER);
    this.owners.delete(ref.uid);
  }

  /** Orphan deletion: remove the owner's references from its dependents, then the finalizer. */
  private async orphanDependents(ref: ObjectRef): Promise<void> {
    const owner = await this.current(ref);
    if (!owner || !(owner.metadata.finalizers ?? []).includes(ORPHAN_FINALIZER)) return;
    for (const dep of [...(this.dependents.get(ref.uid)?.values() ?? [])]) {
      await this.patchOwnerRefs(dep, (rs) => rs.filter((r) => r.uid !== ref.uid));
    }
    await this.removeFinalizer(ref, ORPHAN_FINALIZER);
  }

  private async patchOwnerRefs(ref: ObjectRef, change: (refs: KObject[]) => KObject[]): Promise<void> {
    await ref.store
      .update(ref.namespace, ref.name, (old) => {
        if (!old || old.metadata.uid !== ref.uid) throw Object.assign(new Error('gone'), { code: 404 });
        const next = change(ownerRefs(old));
        if (next.length > 0) old.metadata.ownerReferences = next;
        else delete old.metadata.ownerReferences;
        return old;
      })
      .catch(ignoreGoneOrChanged);
  }

  private async removeFinalizer(ref: ObjectRef, finalizer: string): Promise<void> {
    await ref.store
      .update(ref.namespace, ref.name, (old) => {
        if (!old || old.metadata.uid !== ref.uid) throw Object.assign(new Error('gone'), { code: 404 });
        old.metadata.finalizers = (old.metadata.finalizers ?? []).filter((f: string) => f !== finalizer);
        if (old.metadata.finalizers.length === 0) delete old.metadata.finalizers;
        return old;
      })
      .catch(ignoreGoneOrChanged);
  }
}

function ownerRefs(obj: KObject): KObject[] {
  const refs = obj.metadata?.ownerReferences;
  return Array.isArray(refs) ? refs.filter((r) => r && typeof r.uid === 'string') : [];
}

function sameList(a: string[] | undefined, b: string[]): boolean {
  if (!a) return b.length === 0;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The object went away or changed under us: its own events bring it back if there is more to do. */
function ignoreGoneOrChanged(err: { code?: number }): void {
  if (err.code === 404 || err.code === 409) return;
  throw err;
}
