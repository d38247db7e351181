/**
 * One stream of object events across every served resource, for in-process
 * controllers (garbage collector, namespace deletion). Subscribes to the watch
 * cache of each store as endpoints come and go; a new subscription starts with
 * the store's current objects with owners or being deleted as ADDED events (all its listeners act on
 * on first sight), so controllers rebuild their state after a restart without periodic scans.
 */
import type { CacheEventType, CacheWatcher } from '../cache/watch-cache.js';
import type { ApiRegistry, RegistryChange } from '../registry/registry.js';
import type { RestStore } from '../registry/store.js';
import type { KObject } from '../api/object.js';

export type ObjectListener = (store: RestStore, type: CacheEventType, obj: KObject) => void;

/** A runnable of the leader's Manager: it follows the stores while the manager runs. */
export class ObjectEventHub {
  private readonly watchers = new Map<RestStore, CacheWatcher | 'starting'>();
  /** Per store, how many served endpoints it backs (a CRD's versions share one). */
  private readonly refs = new Map<RestStore, number>();
  private readonly listeners = new Set<ObjectListener>();
  private unsubscribe?: () => void;

  constructor(private readonly registry: ApiRegistry) {}

  /** Follow every store; resolves once the stores served now have replayed their objects. */
  async start(): Promise<void> {
    this.unsubscribe = this.registry.onChange((change) => this.changed(change));
    await this.refresh();
  }

  /** An endpoint added or removed: its store followed from its first endpoint, dropped with its last (no look at the others). */
  private changed({ added, removed }: RegistryChange): void {
    const storeOf = (ep: RegistryChange['added']) => (ep && !ep.virtual ? ep.store : undefined);
    const gone = storeOf(removed);
    const come = storeOf(added);
    if (come === gone) return;
    if (come) {
      const n = (this.refs.get(come) ?? 0) + 1;
      this.refs.set(come, n);
      if (n === 1 && !this.watchers.has(come)) void this.follow(come);
    }
    if (gone) {
      const n = (this.refs.get(gone) ?? 1) - 1;
      if (n > 0) {
        this.refs.set(gone, n);
        return;
      }
      this.refs.delete(gone);
      const w = this.watchers.get(gone);
      if (w && w !== 'starting') w.close();
      this.watchers.delete(gone);
    }
  }

  stop(): void {
    this.unsubscribe?.();
    this.refs.clear();
    for (const w of this.watchers.values()) if (w !== 'starting') w.close();
    this.watchers.clear();
  }

  on(listener: ObjectListener): void {
    this.listeners.add(listener);
  }

  private async refresh(): Promise<void> {
    this.refs.clear();
    for (const ep of this.registry.all()) this.refs.set(ep.store, (this.refs.get(ep.store) ?? 0) + 1);
    const current = new Set(this.refs.keys());
    for (const [store, w] of this.watchers) {
      if (current.has(store)) continue;
      if (w !== 'starting') w.close();
      this.watchers.delete(store);
    }
    await Promise.all([...current].filter((s) => !this.watchers.has(s)).map((s) => this.follow(s)));
  }

  private async follow(store: RestStore): Promise<void> {
    this.watchers.set(store, 'starting');
    await store.start();
    if (this.watchers.get(store) !== 'starting') return; // dropped while starting
    // The current objects come first, while `watch` runs: of those, the listeners hear only the ones with owners
    // or being deleted (all they act on), and the watch cache decodes none of the others it keeps as text.
    let replaying = true;
    let watcher: CacheWatcher | undefined;
    let endedInReplay = false;
    try {
      watcher = store.cache.watch(
        { initialText: (text) => text.includes('"ownerReferences"') || text.includes('"deletionTimestamp"') },
        {
          onEvent: (type, event) => {
            if (replaying && !ownedOrDeleted(event.object)) return true;
            for (const l of this.listeners) l(store, type, event.object);
            return true;
          },
          onClose: () => {
            if (watcher === undefined) {
              endedInReplay = true;
              return;
            }
            if (this.watchers.get(store) !== watcher) return;
            this.watchers.delete(store);
            // Ended by the cache (a CRD's new schema ends its watches): followed again while it is served.
            if (this.refs.has(store)) queueMicrotask(() => void (this.refs.has(store) && !this.watchers.has(store) && this.follow(store)));
          },
        },
      );
    } catch {
      endedInReplay = true;
    }
    replaying = false;
    if (endedInReplay || watcher === undefined) {
      // A listener failed on the current objects (or the cache would not watch): tried again in a second.
      this.watchers.delete(store);
      setTimeout(() => void (this.refs.has(store) && !this.watchers.has(store) && this.follow(store)), 1000).unref();
      return;
    }
    this.watchers.set(store, watcher);
  }
}

function ownedOrDeleted(obj: KObject): boolean {
  const meta = obj.metadata;
  return Boolean(meta?.deletionTimestamp) || (Array.isArray(meta?.ownerReferences) && meta.ownerReferences.length > 0);
}
