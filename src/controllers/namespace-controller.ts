/**
 * Namespace deletion, run in process (kube-controller-manager's job upstream):
 * a namespace marked for deletion is emptied of every namespaced object, built-in
 * and custom, honoring their finalizers; then its `kubernetes` finalizer is
 * removed and the namespace goes.
 */
import type { CacheEventType, CacheEvent } from '../cache/watch-cache.js';
import type { CacheWatcher } from '../cache/watch-cache.js';
import { NAMESPACE_FINALIZER, namespaceFinalizers } from '../apis/core/namespaces.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { RestStore } from '../registry/store.js';
import type { KObject } from '../registry/types.js';
import { KeyedSerializer } from '../util/keyed-serializer.js';

/** How long to wait before looking again at a namespace whose objects are held by finalizers. */
const RETRY_MS = 1000;

export class NamespaceController {
  private readonly serializer = new KeyedSerializer((name, err) => console.error(`kapi: deleting namespace ${name}:`, err));
  private watcher?: CacheWatcher;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly namespaces: RestStore,
    private readonly registry: ApiRegistry,
  ) {}

  async start(): Promise<void> {
    await this.namespaces.start();
    this.watcher = this.namespaces.cache.watch(
      {},
      {
        onEvent: (_type: CacheEventType, event: CacheEvent<KObject>) => {
          if (event.object.metadata.deletionTimestamp) void this.sync(event.object.metadata.name);
          return true;
        },
        onClose: () => {},
      },
    );
  }

  stop(): void {
    this.watcher?.close();
    for (const t of this.timers) clearTimeout(t);
  }

  sync(name: string): Promise<void> {
    return this.serializer.run(name, () => this.reconcile(name));
  }

  private async reconcile(name: string): Promise<void> {
    let ns: KObject;
    try {
      ns = await this.namespaces.get(undefined, name);
    } catch {
      return;
    }
    if (!ns.metadata.deletionTimestamp || !namespaceFinalizers(ns).includes(NAMESPACE_FINALIZER)) return;
    let remaining = 0;
    for (const store of this.namespacedStores()) {
      await store.deleteCollection({ namespace: name, consistent: true });
      remaining += (await store.list({ namespace: name, consistent: true })).items.length;
    }
    if (remaining > 0) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        void this.sync(name);
      }, RETRY_MS);
      this.timers.add(timer);
      return;
    }
    await this.namespaces.update(undefined, name, (old) => {
      old!.spec = { ...old!.spec, finalizers: namespaceFinalizers(old!).filter((f) => f !== NAMESPACE_FINALIZER) };
      return old!;
    });
  }

  private namespacedStores(): RestStore[] {
    return [...new Set(this.registry.all().filter((ep) => ep.names.namespaced).map((ep) => ep.store))];
  }
}
