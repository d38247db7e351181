/**
 * The CRD finalizer (apiextensions-apiserver's CRDFinalizer): for a CRD being
 * deleted, delete every instance (through the resource's store, as upstream's
 * finalizer does with the handler's storage), and once none is left, set the
 * Terminating condition's outcome and drop the cleanup finalizer in one /status
 * write through the API, as the apiserver's loopback client does. Instances held
 * by their own finalizers bring the CRD back when they go; failures are retried
 * with backoff.
 */
import type { CacheEventType, CacheWatcher } from '../cache/watch-cache.js';
import type { RestStore } from '../registry/store.js';
import type { KObject } from '../api/object.js';
import { deepCloneMutable } from '../machinery/json.js';
import type { Client, ResourceClient } from '../sdk/client.js';
import { WorkQueue } from '../sdk/workqueue.js';
import { CLEANUP_FINALIZER, setCondition } from './naming.js';

/** While instances remain, look again this often even without an event. */
const RECHECK_MS = 5000;

export class CrdFinalizer {
  private readonly queue: WorkQueue;
  private readonly crds: ResourceClient;
  /** Instances being waited for, by CRD name: a deleted one brings the CRD back. */
  private readonly instanceWatches = new Map<string, { store: RestStore; watch: CacheWatcher }>();

  constructor(
    client: Client,
    /** The store serving a CRD's resource, while it is served. */
    private readonly storeOf: (crdName: string) => RestStore | undefined,
    log: (message: string) => void,
  ) {
    this.crds = client.resource({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' });
    this.queue = new WorkQueue((name) => this.finalize(name), {
      onError: (name, err, retries) => {
        if (retries === 0 || retries % 10 === 0) log(`kapi: CRD finalizer: ${name} (retry ${retries + 1}): ${(err as Error).message}`);
      },
    });
  }

  enqueue(name: string): void {
    this.queue.add(name);
  }

  /** Finalize now (in the queue's turn for the name) and wait; a failure is retried later with backoff. */
  finalizeNow(name: string): Promise<void> {
    return this.queue.addAndWait(name);
  }

  stop(): void {
    this.queue.shutdown();
    for (const w of this.instanceWatches.values()) w.watch.close();
    this.instanceWatches.clear();
  }

  private async finalize(name: string): Promise<void> {
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
      const remaining = (await store.list({ consistent: true })).items.length;
      if (remaining > 0) return this.watchInstances(name, store);
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
    this.queue.addAfter(name, RECHECK_MS);
    if (this.instanceWatches.get(name)?.store === store) return;
    this.unwatch(name);
    const entry = { store, watch: undefined as unknown as CacheWatcher };
    entry.watch = store.cache.watch(
      { afterRevision: store.cache.currentRevision },
      {
        onEvent: (type: CacheEventType) => {
          if (type === 'DELETED') this.queue.add(name);
          return true;
        },
        onClose: () => {
          if (this.instanceWatches.get(name) !== entry) return;
          this.instanceWatches.delete(name);
          this.queue.add(name);
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
