/**
 * The CRD runtime. Follows every CustomResourceDefinition and keeps the server
 * in step with it: accepted names and the NamesAccepted/Established conditions
 * (conflicts are settled within a group, first come first served) and the
 * endpoints of each served version; a CRD being deleted is handed to the CRD
 * finalizer (finalizer.ts) on the leading replica.
 *
 * Reconciles are serialized per CRD. The CRD API waits for one after each write
 * (`sync`), so a CRD is served by the time its POST returns.
 */
import type { CacheEvent, CacheEventType, CacheWatcher } from '../cache/watch-cache.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { RestStore } from '../registry/store.js';
import type { CrConverter } from './conversion/index.js';
import type { CrdRestStore, CrdWriteOptions } from './crd-store.js';
import type { Strategy } from '../registry/types.js';
import type { KObject } from '../api/object.js';
import type { Storage } from '../storage/types.js';
import { deepEqual } from '../util/deep-equal.js';
import { KeyedSerializer } from '../util/keyed-serializer.js';
import { desiredState, isConditionTrue } from './naming.js';
import { AcceptedNamesIndex } from '../apis/apiextensions/names.js';
import type { CustomResourceDefinitionV1 } from '../api/apiextensions.js';
import type { CrdFinalizer } from './finalizer.js';
import { customResourceEndpoints, newCustomResourceStore, resourceNamesOf } from './serving.js';
import { customResourceOptions, customResourceStrategy } from './custom-resource-strategy.js';

interface Serving {
  uid: string;
  /** The CRD generation the endpoints were built from. */
  generation: number;
  store: RestStore;
  endpointKeys: Array<[string, string, string]>;
}

export class CrdController {
  private readonly servings = new Map<string, Serving>();
  /** The CRDs' accepted names by group, from the cache's events (naming looks names up, not every CRD). */
  private names = new AcceptedNamesIndex();
  private stopped = false;
  private readonly serializer = new KeyedSerializer((name, err) => {
    // Another replica wrote the same CRD first: look again (its write brings an event too).
    if ((err as { code?: number }).code === 409) void this.sync(name);
    else console.error(`kapi: reconciling CRD ${name}:`, err);
  });
  private watcher?: CacheWatcher;
  /** Only the leading replica deletes the instances of a CRD being deleted. */
  /** The CRD finalizer, while this replica leads (a controller of the leader's Manager). */
  private finalizer?: CrdFinalizer;

  constructor(
    private readonly storage: Storage,
    private readonly registry: ApiRegistry,
    private readonly crds: CrdRestStore,
    private readonly hooks: {
      converterFor: (crd: KObject) => CrConverter;
      /** The strategy a CRD's resources are served with, given the schema's (resources defined in TypeScript add their hooks). */
      strategyFor?: (crd: KObject, base: Strategy) => Strategy;
      /** Told when a CRD's served form changes, and when it is no longer served (OpenAPI publishing). */
      published?: { setCrd(crd: KObject): void; removeCrd(name: string): void };
    },
  ) {}

  async start(): Promise<void> {
    await this.crds.start();
    const initial = this.follow();
    await Promise.all(initial.map((name) => this.sync(name)));
  }

  /**
   * The CRDs as the cache has them now, into the names index, and a watch from that same revision (opened before
   * anything is reconciled: no change is missed); the watch closed by the cache (a relist) starts this again.
   */
  private follow(): string[] {
    const listed = this.crds.cache.list();
    this.names = new AcceptedNamesIndex();
    for (const e of listed.items) this.names.set(e.object as CustomResourceDefinitionV1);
    this.watcher = this.crds.cache.watch(
      { afterRevision: listed.revision },
      {
        onEvent: (type: CacheEventType, event: CacheEvent<KObject>) => {
          this.onCrdEvent(type, event.object);
          return true;
        },
        onClose: () => {
          if (this.stopped) return;
          // Watched again once the cache has listed again; every CRD is reconciled against what it holds.
          void this.crds.start().then(() => {
            if (this.stopped) return;
            for (const name of this.follow()) void this.sync(name);
          });
        },
      },
    );
    return listed.items.map((e) => e.object.metadata.name as string);
  }

  /** The finalizer of the leader's term (undefined: this replica does not lead); it finds the CRDs being deleted itself. */
  setFinalizer(finalizer: CrdFinalizer | undefined): void {
    this.finalizer = finalizer;
  }

  /** The store serving a CRD's resource, while it is served. */
  storeOf(name: string): RestStore | undefined {
    return this.servings.get(name)?.store;
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    for (const name of [...this.servings.keys()]) this.stopServing(name);
  }

  /** Reconcile one CRD now (after anything queued for it) and wait for it. */
  sync(name: string): Promise<void> {
    return this.serializer.run(name, () => this.reconcile(name));
  }

  private onCrdEvent(type: CacheEventType, crd: KObject): void {
    if (type === 'DELETED') this.names.remove(crd.metadata.name);
    else this.names.set(crd as CustomResourceDefinitionV1);
    void this.sync(crd.metadata.name);
    if (type === 'DELETED') {
      // A name it held may now be free for another CRD of its group.
      for (const other of this.names.members(crd.spec?.group)) void this.sync(other);
    }
  }

  private async reconcile(name: string): Promise<void> {
    let crd: KObject;
    try {
      crd = await this.crds.get(undefined, name);
    } catch (err) {
      if ((err as { code?: number }).code === 404) {
        // Gone: its names are free (a reconcile that read it before the delete may have indexed it again).
        this.names.remove(name);
        return this.stopServing(name);
      }
      throw err;
    }
    const serving = this.servings.get(name);
    if (serving && serving.uid !== crd.metadata.uid) this.stopServing(name); // deleted and created again
    this.names.set(crd as CustomResourceDefinitionV1);

    // The other CRDs of its group as the cache has them, through their accepted names.
    const desired = desiredState(crd, this.names);
    if (!deepEqual(desired.status, crd.status)) {
      crd = await this.writeStatus(name, desired.status);
      this.names.set(crd as CustomResourceDefinitionV1);
    }

    if (isConditionTrue(crd, 'NamesAccepted') || isConditionTrue(crd, 'Established')) this.serve(crd);
    else this.stopServing(name);

    if (crd.metadata.deletionTimestamp && this.finalizer) {
      // Deleting the instances and the finalizer here keeps a CRD's DELETE synchronous when nothing holds it:
      // the finalizer writes through the API, and the apiserver's own writes do not wait for this reconcile.
      await this.finalizer.finalizeNow(name);
      if (!(await this.crds.get(undefined, name).then(() => true, () => false))) this.stopServing(name);
    }
  }

  private async writeStatus(name: string, status: KObject): Promise<KObject> {
    const res = await this.crds.update(
      undefined,
      name,
      (old) => ({ ...old!, status: { ...status, storedVersions: old!.status?.storedVersions ?? status.storedVersions } }),
      { subresource: 'status', fromRuntime: true } as CrdWriteOptions,
    );
    return res.object;
  }

  private strategyOf(crd: KObject): Strategy {
    const base = customResourceStrategy(customResourceOptions(crd));
    return this.hooks.strategyFor ? this.hooks.strategyFor(crd, base) : base;
  }

  /** Register (or refresh) the endpoints of every served version. */
  private serve(crd: KObject): void {
    const name = crd.metadata.name;
    let serving = this.servings.get(name);
    if (!serving) {
      const store = newCustomResourceStore(this.storage, crd, this.strategyOf(crd));
      serving = { uid: crd.metadata.uid, generation: crd.metadata.generation, store, endpointKeys: [] };
      this.servings.set(name, serving);
      void store.start();
    } else {
      serving.store.names = resourceNamesOf(crd);
      serving.store.strategy = this.strategyOf(crd);
      if (serving.generation !== crd.metadata.generation) {
        // A changed spec ends open watches gracefully, as upstream does; clients watch again.
        serving.generation = crd.metadata.generation;
        serving.store.cache.closeWatchers();
        // Objects read from now on are defaulted and pruned by the new schema, the cached ones too.
        void serving.store.redecode().catch(() => {});
      }
    }
    const endpoints = customResourceEndpoints(crd, serving.store, Boolean(crd.metadata.deletionTimestamp), this.hooks.converterFor(crd));
    this.hooks.published?.setCrd(crd);
    const keep = new Set(endpoints.map((e) => `${e.group}/${e.version}/${e.names.resource}`));
    for (const [g, v, r] of serving.endpointKeys) if (!keep.has(`${g}/${v}/${r}`)) this.registry.remove(g, v, r);
    for (const ep of endpoints) this.registry.add(ep);
    serving.endpointKeys = endpoints.map((e) => [e.group, e.version, e.names.resource]);
  }

  private stopServing(name: string): void {
    const serving = this.servings.get(name);
    if (!serving) return;
    this.servings.delete(name);
    this.hooks.published?.removeCrd(name);
    for (const [g, v, r] of serving.endpointKeys) this.registry.remove(g, v, r);
    serving.store.stop();
  }
}
