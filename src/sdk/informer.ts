/**
 * An informer, as client-go's shared informer: list a resource, then watch it from the list's
 * resourceVersion (with bookmarks), keeping a local copy of every object (with indexes) and telling
 * handlers of adds, updates and deletes. A watch that ends is resumed from the last resourceVersion seen;
 * one the server refuses as too old (410) makes a fresh list, whose differences with the local copy
 * become events. With `resyncMs`, every object is told again as an update (old and new the same) that often.
 */
import type { KObject } from '../api/object.js';
import type { ResourceClient } from './client.js';

/** What an informer tells, as client-go's ResourceEventHandler (OnAdd, OnUpdate, OnDelete). */
export interface InformerHandlers {
  /** An object seen for the first time (by the first list, a watch, or a relist). */
  added?(obj: KObject): void;
  /** An object whose resourceVersion changed, with the copy held before (on resync, both the same). */
  updated?(obj: KObject, old: KObject): void;
  /** An object deleted, or gone from a relist (its last state known). */
  deleted?(obj: KObject): void;
}

/** Options of an Informer: what it lists and watches, and how it retries. */
export interface InformerOptions {
  /** Only this namespace's objects (default: all namespaces). */
  namespace?: string;
  /** Accept header of the list and watch (e.g. PartialObjectMetadata for a metadata informer). */
  accept?: string;
  /** Wait before listing again after a failure (ms; doubles to 30 s). */
  retryMs?: number;
  /** Told about a failed list or watch (then retried). */
  onError?: (err: unknown) => void;
  /** Only the objects these select (list and watch). */
  labelSelector?: string;
  /** e.g. `metadata.name=foo`. */
  fieldSelector?: string;
  /** Every object told again as an update this often (ms; client-go's resync). */
  resyncMs?: number;
}

/** The values an object is indexed under (client-go's IndexFunc). */
export type IndexFunc = (obj: KObject) => string[];

/** `<namespace>/<name>`, or the name of a cluster-scoped object (client-go's MetaNamespaceKeyFunc). */
export function objectKey(obj: KObject): string {
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${obj.metadata.name}` : obj.metadata?.name;
}

/**
 * An informer, as client-go's SharedIndexInformer: a local cache of one resource's objects kept by list and
 * watch, with handlers and indexes. A failed list or watch is retried (and told to `onError`), never thrown.
 */
export class Informer {
  private readonly objects = new Map<string, KObject>();
  private resourceVersion = '';
  private watch?: { close(): void };
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private failures = 0;
  private synced = false;
  private readonly handlerList: InformerHandlers[] = [];
  private readonly indexers = new Map<string, { fn: IndexFunc; values: Map<string, Set<string>> }>();
  private resyncTimer?: NodeJS.Timeout;
  /** The kind of the objects, from the list (`FooList` lists `Foo`). */
  kind = '';

  constructor(
    /** The resource listed and watched. */
    readonly resource: ResourceClient,
    handlers: InformerHandlers = {},
    private readonly opts: InformerOptions = {},
  ) {
    this.handlerList.push(handlers);
  }

  /** More handlers; once synced, they are told of every object there is as added, as client-go does. */
  addHandlers(handlers: InformerHandlers): void {
    this.handlerList.push(handlers);
    if (this.synced) for (const obj of this.objects.values()) handlers.added?.(obj);
  }

  /** An index of the objects by the values `fn` gives (e.g. by owner uid). */
  addIndexer(name: string, fn: IndexFunc): void {
    const values = new Map<string, Set<string>>();
    this.indexers.set(name, { fn, values });
    for (const [key, obj] of this.objects) this.index(key, undefined, obj);
  }

  /** The objects an index has under a value. */
  byIndex(name: string, value: string): KObject[] {
    const keys = this.indexers.get(name)?.values.get(value);
    return keys ? [...keys].map((k) => this.objects.get(k)!).filter(Boolean) : [];
  }

  /** Starts; resolves once the first list is in (or the first attempt failed; it is retried). */
  async start(): Promise<void> {
    await this.listAndWatch();
    if (this.opts.resyncMs && !this.resyncTimer) {
      this.resyncTimer = setInterval(() => {
        for (const obj of this.objects.values()) this.emit('updated', obj, obj);
      }, this.opts.resyncMs);
      this.resyncTimer.unref();
    }
  }

  /** Stops the watch, retries and resyncs; the cache keeps what it holds. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.watch?.close();
  }

  private emit(what: 'added' | 'deleted', obj: KObject): void;
  private emit(what: 'updated', obj: KObject, old: KObject): void;
  private emit(what: keyof InformerHandlers, obj: KObject, old?: KObject): void {
    for (const h of this.handlerList) {
      if (what === 'updated') h.updated?.(obj, old!);
      else h[what]?.(obj);
    }
  }

  private index(key: string, old: KObject | undefined, obj: KObject | undefined): void {
    for (const { fn, values } of this.indexers.values()) {
      for (const v of old ? fn(old) : []) {
        const keys = values.get(v);
        keys?.delete(key);
        if (keys?.size === 0) values.delete(v);
      }
      for (const v of obj ? fn(obj) : []) {
        let keys = values.get(v);
        if (!keys) values.set(v, (keys = new Set()));
        keys.add(key);
      }
    }
  }

  private remove(obj: KObject): void {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    this.objects.delete(key);
    this.index(key, old, undefined);
    this.emit('deleted', obj);
  }

  private get selectors(): Record<string, string | undefined> {
    return { labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector };
  }

  /** Whether the first list is in (client-go's HasSynced). */
  get hasSynced(): boolean {
    return this.synced;
  }

  /** Why the last list or watch failed (until one succeeds again), for the reads that wait on the cache. */
  lastError?: string;

  /** The resourceVersion the cache is at (client-go's LastSyncResourceVersion): its list's, then its watch's. */
  get lastResourceVersion(): string {
    return this.resourceVersion;
  }

  /** The object of a key (`<namespace>/<name>`, or the name if cluster-scoped; see objectKey), from the cache. */
  get(key: string): KObject | undefined {
    return this.objects.get(key);
  }

  /** Every object in the cache. */
  list(): KObject[] {
    return [...this.objects.values()];
  }

  private async listAndWatch(): Promise<void> {
    if (this.stopped) return;
    let list: KObject;
    try {
      list = await this.resource.list(this.opts.namespace, this.selectors, this.opts.accept);
    } catch (err) {
      return this.retry(err);
    }
    if (this.stopped) return;
    if (typeof list.kind === 'string' && list.kind.endsWith('List')) this.kind = list.kind.slice(0, -4);
    const seen = new Set<string>();
    for (const item of (list.items ?? []) as KObject[]) {
      const key = objectKey(item);
      seen.add(key);
      this.put(item);
    }
    for (const [key, obj] of this.objects) if (!seen.has(key)) this.remove(obj);
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    this.synced = true;
    this.failures = 0;
    this.lastError = undefined;
    this.startWatch();
  }

  private startWatch(): void {
    if (this.stopped) return;
    const query = { ...this.selectors, resourceVersion: this.resourceVersion, allowWatchBookmarks: 'true' };
    let expired = false;
    let failure: Error | undefined;
    const watch = this.resource.watch(this.opts.namespace, query, {
      event: (type, object) => {
        if (this.stopped) return;
        if (type === 'ERROR') {
          expired = object?.code === 410;
          if (!expired) failure = new Error(typeof object?.message === 'string' ? object.message : 'watch error');
          return;
        }
        const rv = object?.metadata?.resourceVersion;
        if (typeof rv === 'string' && rv) this.resourceVersion = rv;
        if (type === 'BOOKMARK') return;
        if (type === 'DELETED') {
          this.remove(object);
          return;
        }
        this.put(object);
        this.failures = 0;
      },
      closed: (err) => {
        if (this.stopped || this.watch !== watch) return;
        this.watch = undefined;
        if (expired || (err as { code?: number } | undefined)?.code === 410) {
          void this.listAndWatch();
          return;
        }
        // Any other error (the server's ERROR event, a broken stream) is retried with backoff.
        if (err || failure) return this.retry(err ?? failure);
        this.startWatch();
      },
    });
    this.watch = watch;
  }

  private put(obj: KObject): void {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    this.objects.set(key, obj);
    if (this.indexers.size > 0) this.index(key, old, obj);
    if (!old) this.emit('added', obj);
    else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.emit('updated', obj, old);
  }

  private retry(err: unknown): void {
    if (this.stopped) return;
    this.lastError = ((err as Error)?.message ?? String(err)).trim();
    this.opts.onError?.(err);
    const delay = Math.min((this.opts.retryMs ?? 100) * 2 ** this.failures++, 30_000);
    this.timer = setTimeout(() => void this.listAndWatch(), delay);
  }
}
