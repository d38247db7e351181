/**
 * An informer, as client-go's: list a resource, then watch it from the list's
 * resourceVersion (with bookmarks), keeping a local copy of every object and
 * telling handlers of adds, updates and deletes. A watch that ends is resumed
 * from the last resourceVersion seen; one the server refuses as too old (410)
 * makes a fresh list, whose differences with the local copy become events.
 */
import type { KObject } from '../registry/types.js';
import type { ResourceClient } from './client.js';

export interface InformerHandlers {
  added?(obj: KObject): void;
  updated?(obj: KObject, old: KObject): void;
  deleted?(obj: KObject): void;
}

export interface InformerOptions {
  namespace?: string;
  /** Accept header of the list and watch (e.g. PartialObjectMetadata for a metadata informer). */
  accept?: string;
  /** Wait before listing again after a failure (ms; doubles to 30 s). */
  retryMs?: number;
  /** Told about a failed list or watch (then retried). */
  onError?: (err: unknown) => void;
}

/** `<namespace>/<name>`, or the name of a cluster-scoped object (client-go's MetaNamespaceKeyFunc). */
export function objectKey(obj: KObject): string {
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${obj.metadata.name}` : obj.metadata?.name;
}

export class Informer {
  private readonly objects = new Map<string, KObject>();
  private resourceVersion = '';
  private watch?: { close(): void };
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private failures = 0;
  private synced = false;

  constructor(
    private readonly resource: ResourceClient,
    private readonly handlers: InformerHandlers,
    private readonly opts: InformerOptions = {},
  ) {}

  /** Starts; resolves once the first list is in (or the first attempt failed; it is retried). */
  async start(): Promise<void> {
    await this.listAndWatch();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.watch?.close();
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  get(key: string): KObject | undefined {
    return this.objects.get(key);
  }

  list(): KObject[] {
    return [...this.objects.values()];
  }

  private async listAndWatch(): Promise<void> {
    if (this.stopped) return;
    let list: KObject;
    try {
      list = await this.resource.list(this.opts.namespace, {}, this.opts.accept);
    } catch (err) {
      return this.retry(err);
    }
    if (this.stopped) return;
    const seen = new Set<string>();
    for (const item of (list.items ?? []) as KObject[]) {
      const key = objectKey(item);
      seen.add(key);
      this.put(item);
    }
    for (const [key, obj] of this.objects) {
      if (seen.has(key)) continue;
      this.objects.delete(key);
      this.handlers.deleted?.(obj);
    }
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    this.synced = true;
    this.startWatch();
  }

  private startWatch(): void {
    if (this.stopped) return;
    const query = { resourceVersion: this.resourceVersion, allowWatchBookmarks: 'true' };
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
          this.objects.delete(objectKey(object));
          this.handlers.deleted?.(object);
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
    if (!old) this.handlers.added?.(obj);
    else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.handlers.updated?.(obj, old);
  }

  private retry(err: unknown): void {
    if (this.stopped) return;
    this.opts.onError?.(err);
    const delay = Math.min((this.opts.retryMs ?? 100) * 2 ** this.failures++, 30_000);
    this.timer = setTimeout(() => void this.listAndWatch(), delay);
  }
}
