/**
 * One stream of object events across every served resource, for in-process
 * controllers (garbage collector, namespace deletion). Subscribes to the watch
 * cache of each store as endpoints come and go; a new subscription starts with
 * the store's current objects as ADDED events, so controllers rebuild their
 * state after a restart without periodic scans.
 */
import type { CacheEventType, CacheWatcher } from '../cache/watch-cache.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { RestStore } from '../registry/store.js';
import type { KObject } from '../api/object.js';

export type ObjectListener = (store: RestStore, type: CacheEventType, obj: KObject) => void;

/** A runnable of the leader's Manager: it follows the stores while the manager runs. */
export class ObjectEventHub {
  private readonly watchers = new Map<RestStore, CacheWatcher | 'starting'>();
  private readonly listeners = new Set<ObjectListener>();
  private unsubscribe?: () => void;

  constructor(private readonly registry: ApiRegistry) {}

  /** Follow every store; resolves once the stores served now have replayed their objects. */
  async start(): Promise<void> {
    this.unsubscribe = this.registry.onChange(() => void this.refresh());
    await this.refresh();
  }

  stop(): void {
    this.unsubscribe?.();
    for (const w of this.watchers.values()) if (w !== 'starting') w.close();
    this.watchers.clear();
  }

  on(listener: ObjectListener): void {
    this.listeners.add(listener);
  }

  /** Every distinct store currently served. */
  stores(): RestStore[] {
    return [...new Set(this.registry.all().map((ep) => ep.store))];
  }

  private async refresh(): Promise<void> {
    const current = new Set(this.stores());
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
    const watcher = store.cache.watch(
      {},
      {
        onEvent: (type, event) => {
          for (const l of this.listeners) l(store, type, event.object);
          return true;
        },
        onClose: () => {
          if (this.watchers.get(store) === watcher) this.watchers.delete(store);
        },
      },
    );
    this.watchers.set(store, watcher);
  }
}
