/**
 * The CRD finalizer (apiextensions-apiserver's CRDFinalizer): for a CRD being
 * deleted, delete every instance (through the resource's store, as upstream's
 * finalizer does with the handler's storage), and once none is left, set the
 * Terminating condition's outcome and drop the cleanup finalizer in one /status
 * write through the API, as the apiserver's loopback client does. Instances held
 * by their own finalizers bring the CRD back when they go; failures are retried
 * with backoff. A controller of the leader's Manager.
 */
import type { CacheEventType, CacheWatcher } from '../cache/watch-cache.js';
import type { RestStore } from '../registry/store.js';
import type { KObject } from '../api/object.js';
import { deepCloneMutable } from '../machinery/json.js';
import type { Client, ResourceClient } from '../sdk/client.js';
import type { Controller, Manager, ReconcileResult } from '../sdk/controller.js';
import { CLEANUP_FINALIZER, setCondition } from './naming.js';

/** While instances remain, look again this often even without an event. */
const RECHECK_MS = 5000;

const CRDS = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', namespaced: false };

/** A controller of the manager (its CRD informer, queue and workers), with the instance watches of its own. */
export class CrdFinalizer {
  private readonly controller: Controller;
  private readonly crds: ResourceClient;
  /** Instances being waited for, by CRD name: a deleted one brings the CRD back. */
  private readonly instanceWatches = new Map<string, { store: RestStore; watch: CacheWatcher }>();
  /** The manager stopped: a reconcile that finishes after opens no watch. */
  private stopped = false;

  /** Added to `manager` (whose CRD informer it follows); `client` writes. */
  constructor(
    manager: Manager,
    client: Client,
    /** The store serving a CRD's resource, while it is served. */
    private readonly storeOf: (crdName: string) => RestStore | undefined,
  ) {
    this.crds = client.resource(CRDS);
    const deleting = (crd: KObject) => Boolean(crd.metadata?.deletionTimestamp);
    this.controller = manager.add({
      name: 'crd-finalizer',
      for: CRDS,
      predicates: [{ create: deleting, update: deleting, delete: () => false }],
      // upstream's CRDFinalizer runs 5 workers
      maxConcurrentReconciles: 5,
      reconcile: ({ name }) => this.finalize(name),
    });
    void manager.addRunnable({ start: () => {}, stop: () => this.closeWatches() });
  }

  /** Finalize now (after anything queued for the name) and wait; a failure is retried later with backoff. */
  finalizeNow(name: string): Promise<void> {
    return this.controller.reconcileNow({ name });
  }

  private closeWatches(): void {
    this.stopped = true;
    for (const w of this.instanceWatches.values()) w.watch.close();
    this.instanceWatches.clear();
  }

  private async finalize(name: string): Promise<ReconcileResult> {
    let crd: KObject;
    try {
      crd = await this.crds.get(undefined, name);
    } catch (err) {
      if ((err as { code?: number }).code === 404) return this.unwatch(name);
      throw err;
    }
    if (!crd.metadata.deletionTimestamp || !(crd.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER)) return this.unwatch(name);
    const store = this.storeOf(name);
    if (store) {
      await store.deleteCollection({ consistent: true });
      const left = await store.list({ consistent: true });
      const remaining = left.listed?.length ?? left.items.length;
      if (remaining > 0) {
        this.watchInstances(name, store);
        return { requeueAfterMs: RECHECK_MS };
      }
    }
    this.unwatch(name);
    const done = store
      ? { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' }
      : { type: 'Terminating', status: 'False', reason: 'NeverEstablished', message: 'resource was never established' };
    const next = deepCloneMutable(crd);
    setCondition(next as never, done as never);
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f: string) => f !== CLEANUP_FINALIZER);
    try {
      await this.crds.update(undefined, name, next, 'status');
    } catch (err) {
      // Deleted or changed meanwhile: its own events bring it back.
      const code = (err as { code?: number }).code;
      if (code === 404 || code === 409) return;
      throw err;
    }
  }

  /**
   * Instances held by their finalizers: look again whenever one of them goes, when the watch
   * ends (the cache restarted), and every 5 s while any remain (upstream's finalizer polls).
   */
  private watchInstances(name: string, store: RestStore): void {
    if (this.stopped) return;
    if (this.instanceWatches.get(name)?.store === store) return;
    this.unwatch(name);
    const entry = { store, watch: undefined as unknown as CacheWatcher };
    entry.watch = store.cache.watch(
      { afterRevision: store.cache.currentRevision },
      {
        onEvent: (type: CacheEventType) => {
          if (type === 'DELETED') this.controller.enqueue({ name });
          return true;
        },
        onClose: () => {
          if (this.instanceWatches.get(name) !== entry) return;
          this.instanceWatches.delete(name);
          this.controller.enqueue({ name });
        },
      },
    );
    this.instanceWatches.set(name, entry);
  }

  private unwatch(name: string): void {
    const entry = this.instanceWatches.get(name);
    this.instanceWatches.delete(name);
    entry?.watch.close();
  }
}
