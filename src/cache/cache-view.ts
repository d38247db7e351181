/**
 * What is made from a watch cache's objects (RBAC's index of bindings by subject, the Service addresses in use),
 * kept up to date key by key: a write costs the view that one object, never a pass over all of them (with 100,000
 * RoleBindings in a namespace, a pass after each binding write cost every client a second). The view is made anew
 * only when the cache cannot tell what changed (it listed the store again, or more writes came than its ring keeps).
 */
import type { KObject } from '../api/object.js';
import { objectForScan, type CachePosition, type WatchCache } from './watch-cache.js';

export interface ViewHandlers {
  /** Forget everything: the view is made again (every object under the prefix is `set` after). */
  reset(): void;
  /** The object at `key` as it is now (undefined: gone). Made anew, the objects come in the order of their keys. */
  set(key: string, object: KObject | undefined): void;
}

export class CacheView {
  private changeRevision = -1;
  private position: CachePosition | undefined;

  constructor(
    private readonly cache: WatchCache<KObject>,
    /** The keys followed (a namespace's, or '' for all). */
    private readonly prefix: string,
    private readonly on: ViewHandlers,
  ) {}

  /** Brings the view up to the cache's contents (nothing to do while they have not moved). */
  refresh(): void {
    const cache = this.cache;
    // Both: a batch of events counts as one change, and a view refreshed by a watcher of the cache in the middle of
    // one has seen its events up to that one only.
    const position = cache.position;
    if (this.changeRevision === cache.changeRevision && this.position?.revision === position.revision) return;
    const changed = this.position && cache.keysChangedSince(this.position);
    if (changed) {
      for (const key of new Set(changed)) {
        if (!key.startsWith(this.prefix)) continue;
        const entry = cache.get(key);
        this.on.set(key, entry && objectForScan(entry));
      }
    } else {
      this.on.reset();
      for (const entry of cache.list({ prefix: this.prefix }).items) this.on.set(entry.key, objectForScan(entry));
    }
    this.changeRevision = cache.changeRevision;
    this.position = position;
  }
}
