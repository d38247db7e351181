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
 *
 * Its graph of owners and dependents follows the watch caches (the object event
 * hub, its in-process informer); every read of an object's current state and
 * every write is a request of its client, as
 * system:serviceaccount:kube-system:generic-garbage-collector, through the
 * whole request path. Work is queued per object and retried with backoff. It runs on
 * the leader's Manager (a runnable, as kube-controller-manager's collector is not a
 * reconcile loop either: its graph builder feeds two queues of its own); its events
 * come from the watch caches the server keeps anyway, where upstream's metadata
 * informers would keep a second copy of every object.
 */
import type { CacheEventType } from '../cache/watch-cache.js';
import type { ApiRegistry, Endpoint, RegistryChange } from '../registry/registry.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, type RestStore } from '../registry/store.js';
import type { KObject } from '../api/object.js';
import { deepCloneMutable } from '../machinery/json.js';
import type { Client, ResourceClient } from '../sdk/client.js';
import type { Manager } from '../sdk/controller.js';
import { WorkQueue } from '../sdk/workqueue.js';
import type { ObjectEventHub } from './object-events.js';

interface ObjectRef {
  /** The watch cache it is followed in. */
  store: RestStore;
  /** Its resource, as the client asks for it. */
  resource: ResourceClient;
  namespace?: string;
  name: string;
  uid: string;
}

type Action = 'delete' | 'orphan' | 'foreground';

type OwnerState = 'solid' | 'dangling' | 'waiting';

const METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

export class GarbageCollector {
  /** owner uid → dependent uid → dependent */
  private readonly dependents = new Map<string, Map<string, ObjectRef>>();
  /** dependent uid → owner uids it was indexed under */
  private readonly ownersOf = new Map<string, string[]>();
  /**
   * The served kinds' stores and the stores' clients, built at first use and then kept from the registry's changes
   * (an event does not look at every endpoint: a CRD's creation among 10,000 others), with how many endpoints give each.
   */
  private kindIndex?: { byGroupKind: Map<string, { store: RestStore; count: number }>; byStore: Map<RestStore, { endpoints: Set<Endpoint>; client?: { from: Endpoint; client: ResourceClient } }> };
  private readonly queue: WorkQueue;
  /** The objects with queued work, by uid. */
  private readonly queued = new Map<string, ObjectRef>();

  /** Added to `manager` (it runs while the manager does); follows `hub`, a runnable added before it. */
  constructor(
    manager: Manager,
    hub: ObjectEventHub,
    private readonly registry: ApiRegistry,
    private readonly client: Client,
  ) {
    this.queue = new WorkQueue((key) => this.process(key), {
      workers: 20,
      onError: (key, err, retries) => {
        if (retries === 0 || retries % 10 === 0) manager.log(`garbage collector: ${key} (retry ${retries + 1}): ${(err as Error).message}`);
      },
    });
    hub.on((store, type, obj) => this.onEvent(store, type, obj));
    const unwatch = registry.onChange((change) => this.registryChanged(change));
    void manager.addRunnable({
      start: () => {},
      stop: () => {
        unwatch();
        this.queue.shutdown();
      },
    });
  }

  /** Resolves when no work is queued (for tests and benchmarks). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  private onEvent(store: RestStore, type: CacheEventType, obj: KObject): void {
    const meta = obj.metadata ?? {};
    const uid: string = meta.uid;
    if (!uid) return;
    if (type === 'DELETED') {
      this.unindex(uid);
      this.queued.delete(uid);
      this.owners.delete(uid);
      for (const dep of this.dependents.get(uid)?.values() ?? []) this.enqueue('delete', dep);
      this.dependents.delete(uid);
      // Owners in foreground deletion may have been waiting for this one.
      for (const ref of ownerRefs(obj)) this.enqueueOwner(ref.uid);
      return;
    }
    const resource = this.resourceOf(store);
    if (!resource) return;
    const self: ObjectRef = { store, resource, namespace: meta.namespace, name: meta.name, uid };
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
      if (owners.length > 0) this.enqueue('delete', self);
    }
    // An owner waiting in foreground deletion may be unblocked by this change (deleted, or blockOwnerDeletion dropped).
    for (const o of owners) this.enqueueOwner(o);
    if (meta.deletionTimestamp) {
      const finalizers: string[] = meta.finalizers ?? [];
      if (finalizers.includes(ORPHAN_FINALIZER)) this.enqueue('orphan', self);
      if (finalizers.includes(FOREGROUND_FINALIZER)) this.enqueue('foreground', self);
    }
  }

  /** An owner in foreground deletion looks again at its dependents when one of them goes. */
  private enqueueOwner(uid: string): void {
    const ref = this.owners.get(uid);
    if (ref) this.enqueue('foreground', ref);
  }

  /** Owners found absent (uid and the namespace looked in), least recently found first; bounded as upstream's (500). */
  private readonly absentOwners = new Set<string>();

  private rememberAbsent(key: string): void {
    this.absentOwners.delete(key);
    this.absentOwners.add(key);
    if (this.absentOwners.size > 500) this.absentOwners.delete(this.absentOwners.values().next().value!);
  }

  /** Owners in foreground deletion, by uid. */
  private readonly owners = new Map<string, ObjectRef>();

  private enqueue(action: Action, ref: ObjectRef): void {
    this.queued.set(ref.uid, ref);
    this.queue.add(`${action}/${ref.uid}`);
  }

  private async process(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const action = key.slice(0, slash) as Action;
    const ref = this.queued.get(key.slice(slash + 1));
    if (!ref) return;
    if (action === 'delete') await this.attemptToDelete(ref);
    else if (action === 'orphan') await this.orphanDependents(ref);
    else await this.deleteDependentsFirst(ref);
  }

  private unindex(uid: string): void {
    for (const o of this.ownersOf.get(uid) ?? []) {
      const deps = this.dependents.get(o);
      deps?.delete(uid);
      if (deps && deps.size === 0) this.dependents.delete(o);
    }
    this.ownersOf.delete(uid);
  }

  /** The object as the API has it now (its metadata), if it is still the one `ref` names. */
  private async current(ref: ObjectRef): Promise<KObject | undefined> {
    try {
      const obj = await ref.resource.get(ref.namespace, ref.name, { accept: METADATA });
      return obj.metadata?.uid === ref.uid ? obj : undefined;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }

  private index(): NonNullable<GarbageCollector['kindIndex']> {
    if (!this.kindIndex) {
      this.kindIndex = { byGroupKind: new Map(), byStore: new Map() };
      for (const ep of this.registry.all()) this.indexEndpoint(ep, 1);
    }
    return this.kindIndex;
  }

  private registryChanged({ added, removed }: RegistryChange): void {
    if (!this.kindIndex) return;
    if (removed && !removed.virtual) this.indexEndpoint(removed as Endpoint, -1);
    if (added && !added.virtual) this.indexEndpoint(added as Endpoint, 1);
  }

  /** Counts an endpoint in (+1) or out (-1) of the kind index. */
  private indexEndpoint(ep: Endpoint, delta: 1 | -1): void {
    const { byGroupKind, byStore } = this.kindIndex!;
    const kindKey = `${ep.group}/${ep.names.kind}`;
    const kind = byGroupKind.get(kindKey);
    if (delta > 0) byGroupKind.set(kindKey, { store: ep.store, count: (kind?.count ?? 0) + 1 });
    else if (kind && kind.count > 1) kind.count--;
    else byGroupKind.delete(kindKey);
    const entry = byStore.get(ep.store);
    if (delta > 0) {
      if (entry) entry.endpoints.add(ep);
      else byStore.set(ep.store, { endpoints: new Set([ep]) });
    } else if (entry) {
      entry.endpoints.delete(ep);
      if (entry.endpoints.size === 0) byStore.delete(ep.store);
    }
  }

  /** The client of a store's resource (any served version: the collector reads and writes metadata only). */
  private resourceOf(store: RestStore): ResourceClient | undefined {
    const entry = this.index().byStore.get(store);
    if (!entry) return undefined;
    // Through a version served now (a client made from one no longer served would find nothing).
    if (!entry.client || !entry.endpoints.has(entry.client.from)) {
      const from = entry.endpoints.values().next().value!;
      entry.client = { from, client: this.client.resource({ group: from.group, version: from.version, resource: from.names.resource }) };
    }
    return entry.client.client;
  }

  /** The store serving a kind of a group, from owner references' apiVersion and kind. */
  private storeFor(apiVersion: string, kind: string): RestStore | undefined {
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
    return this.index().byGroupKind.get(`${group}/${kind}`)?.store;
  }

  private async ownerState(ref: KObject, dependentNamespace: string | undefined): Promise<OwnerState> {
    const store = this.storeFor(ref.apiVersion ?? '', ref.kind ?? '');
    const resource = store && this.resourceOf(store);
    if (!store || !resource) return 'solid'; // a kind nobody serves (yet): never collect on a guess
    // A cluster-scoped object cannot be owned by a namespaced one: upstream reports it and never collects.
    if (store.names.namespaced && dependentNamespace === undefined) return 'solid';
    const namespace = store.names.namespaced ? dependentNamespace : undefined;
    // An owner known to be gone is not asked for again (upstream's absentOwnerCache): the dependents
    // of one deleted owner cost one lookup of it, not one each.
    const absentKey = `${ref.uid}/${namespace ?? ''}`;
    if (this.absentOwners.has(absentKey)) return 'dangling';
    const owner = await this.current({ store, resource, namespace, name: ref.name, uid: ref.uid });
    if (!owner) {
      this.rememberAbsent(absentKey);
      return 'dangling';
    }
    if (owner.metadata.deletionTimestamp && (owner.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER)) {
      this.owners.set(ref.uid, { store, resource, namespace, name: owner.metadata.name, uid: ref.uid });
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
    await ref.resource
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
    // This runs again on every dependent's DELETED event: the owner's state comes from the watch cache
    // (the write that follows reads it through the API and is guarded by its resourceVersion).
    const owner = this.cached(ref) ?? (await this.current(ref));
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
      if (!obj.metadata.deletionTimestamp) this.enqueue('delete', dep);
    }
    if (blocking > 0) return; // each dependent's DELETED event brings this owner back
    await this.removeFinalizer(ref, FOREGROUND_FINALIZER, owner);
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

  private patchOwnerRefs(ref: ObjectRef, change: (refs: KObject[]) => KObject[]): Promise<void> {
    return this.rewrite(ref, (meta) => {
      const next = change(ownerRefs({ metadata: meta }));
      if (next.length > 0) meta.ownerReferences = next;
      else delete meta.ownerReferences;
    });
  }

  private removeFinalizer(ref: ObjectRef, finalizer: string, known?: KObject): Promise<void> {
    return this.rewrite(
      ref,
      (meta) => {
        meta.finalizers = (meta.finalizers ?? []).filter((f: string) => f !== finalizer);
        if (meta.finalizers.length === 0) delete meta.finalizers;
      },
      known,
    );
  }

  /**
   * Change an object's metadata with a JSON patch guarded by its uid and resourceVersion
   * (a test op each, which fails with 422 when the object changed or was replaced: read
   * it again and retry). `known`: the object as last seen, tried first.
   */
  private async rewrite(ref: ObjectRef, change: (meta: KObject) => void, known?: KObject): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      // A state already read is tried first; a failed test op reads it again.
      const obj = attempt === 0 && known ? known : await this.current(ref);
      if (!obj) return;
      const meta = deepCloneMutable(obj.metadata) as KObject;
      change(meta);
      const ops: KObject[] = [
        { op: 'test', path: '/metadata/uid', value: ref.uid },
        { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
      ];
      for (const f of ['ownerReferences', 'finalizers']) {
        if (meta[f] !== undefined) ops.push({ op: 'replace', path: `/metadata/${f}`, value: meta[f] });
        else if (obj.metadata[f] !== undefined) ops.push({ op: 'remove', path: `/metadata/${f}` });
      }
      try {
        await ref.resource.patch(ref.namespace, ref.name, ops, { contentType: 'application/json-patch+json' });
        return;
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (code === 404) return;
        if (code !== 422 || attempt >= 4) throw err;
      }
    }
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

/** The object went away, or is another one now (a uid precondition's 409): nothing left to do for this one. */
function ignoreGoneOrChanged(err: { code?: number }): void {
  if (err.code === 404 || err.code === 409) return;
  throw err;
}
