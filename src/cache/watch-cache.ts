/**
 * The watch cache of one resource: the current objects in memory plus a ring of
 * recent events, fed by a single storage watch on the resource's key prefix.
 *
 * It serves get, list (latest, or an exact revision still inside the ring's
 * window, with limit and a start key) and watch (from any revision inside the
 * window; older ones get TooOldRevisionError, which the API maps to 410).
 * Objects are decoded once, when their event arrives; every watcher receives the
 * same event object, whose `memo` lets the HTTP layer serialize it once.
 */
import { lowerBound, SortedKeys } from '../util/sorted-keys.js';
import { inRange, prefixEnd } from '../storage/keys.js';
import type { KeyValue, Storage, WatchEvent, WatchHandle } from '../storage/types.js';
import { EventRing } from './event-ring.js';
import { SlowWatcherError, TooLargeRevisionError, TooOldRevisionError } from './errors.js';

export type CacheEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface CacheEntry<T> {
  key: string;
  /** The mod revision of this state of the object. */
  revision: number;
  object: T;
  /** The length of its stored value (a write to a large object is worked through in steps); unknown for an older state. */
  bytes?: number;
}

/** What an event is for a watcher with this filter; undefined: nothing. */
export function filteredEventType<T>(event: CacheEvent<T>, filter: (object: T) => boolean): CacheEventType | undefined {
  const now = filter(event.object);
  if (event.type === 'DELETED') return now ? 'DELETED' : undefined;
  // A change that moves an object into or out of a selector is an ADDED or DELETED for that watcher.
  const before = event.prevObject !== undefined && filter(event.prevObject);
  if (now) return before ? 'MODIFIED' : 'ADDED';
  return before ? 'DELETED' : undefined;
}

export interface CacheEvent<T> {
  type: CacheEventType;
  key: string;
  /** The event's revision; for DELETED, the revision of the delete. */
  revision: number;
  /** The new state; for DELETED, the last state. */
  object: T;
  prevObject?: T;
  prevRevision?: number;
  /** Serializations of this event, shared by every watcher (keyed by the HTTP layer); made by the first watcher to write it. */
  memo?: Map<string, unknown>;
}

/** Turns a stored key-value into the cached object; must not throw. */
export type Decoder<T> = (kv: KeyValue) => T;

export interface CacheListOptions<T> {
  /** A narrower key prefix inside the cache's prefix, such as one namespace. */
  prefix?: string;
  /** The exact revision to list at (absent: the latest). */
  revision?: number;
  /** Start at this key (inclusive): a continue position. */
  startKey?: string;
  limit?: number;
  filter?: (object: T) => boolean;
}

export interface CacheListResult<T> {
  items: CacheEntry<T>[];
  revision: number;
  /** Keys remain after lastKey. */
  more: boolean;
  /** The last key examined, for a continue token. */
  lastKey?: string;
  /** Keys after lastKey, when no filter was used. */
  remaining?: number;
}

export interface CacheWatchSink<T> {
  /** Returns false when the watcher cannot take more; it is then dropped with SlowWatcherError. */
  onEvent(type: CacheEventType, event: CacheEvent<T>): boolean;
  /** A bookmark; `initialEventsEnd`: the one after the initial events of a watch-list. */
  onBookmark?(revision: number, initialEventsEnd?: boolean): boolean;
  onClose(error?: Error): void;
}

export interface CacheWatchOptions<T> {
  /** Send events after this revision; absent: first the current objects as ADDED, then live events. */
  afterRevision?: number;
  prefix?: string;
  filter?: (object: T) => boolean;
  bookmarks?: boolean;
  /** After the current objects (afterRevision absent), a bookmark marking their end (when bookmarks are on). */
  initialEventsEnd?: boolean;
}

export interface CacheWatcher {
  close(): void;
}

export interface WatchCacheOptions<T = unknown> {
  /** A copy of a cached object carrying another revision (saves a decode for DELETED events). */
  restamp?: (obj: T, revision: number) => T;
  /** Events kept for watch resumption and past-revision lists. */
  capacity?: number;
  bookmarkIntervalMs?: number;
}

/** Watchers sent a bookmark in one turn of the event loop. */
const BOOKMARKS_PER_TURN = 1000;

interface Watcher<T> {
  start: string;
  end: string;
  filter?: (object: T) => boolean;
  bookmarks: boolean;
  sink: CacheWatchSink<T>;
  closed: boolean;
}

export class WatchCache<T> {
  private readonly entries = new Map<string, CacheEntry<T>>();
  private sorted = new SortedKeys();
  private readonly watchers = new Set<Watcher<T>>();
  private ring: EventRing<CacheEvent<T>>;
  private revision = 0;
  /** Counts lists and applied events (changeRevision). */
  private changes = 0;
  private handle?: WatchHandle;
  private waiters: Array<{ revision: number; resolve: () => void }> = [];
  private bookmarkTimer?: NodeJS.Timeout;
  /** Bookmarks are being sent (in slices). */
  private bookmarking = false;
  private stopped = false;
  private ready?: Promise<void>;

  constructor(
    private readonly storage: Storage,
    readonly prefix: string,
    private readonly decode: Decoder<T>,
    private readonly options: WatchCacheOptions<T> = {},
  ) {
    this.ring = new EventRing(options.capacity ?? 10_000, 0);
  }

  /** List the prefix and start watching it; resolves when the cache can serve. */
  start(): Promise<void> {
    this.ready ??= this.load();
    return this.ready;
  }

  get currentRevision(): number {
    this.catchUp();
    return this.revision;
  }

  /**
   * Progress elsewhere in the store, read from the storage watch when asked (an in-process store tells it at once):
   * a commit is not broadcast to every cache whose prefix it did not touch.
   */
  private catchUp(): void {
    const delivered = this.handle?.revision?.();
    if (delivered !== undefined && delivered > this.revision) this.advance(delivered);
  }

  /**
   * Changes when the cache's contents may have: at each event it applies, and at each (re)list. Unlike
   * currentRevision, progress elsewhere in the store leaves it be: what is derived from the contents (RBAC's
   * indexes and decisions) stays valid until it moves.
   */
  get changeRevision(): number {
    return this.changes;
  }

  /** The oldest revision a watch or list may start from. */
  get oldestRevision(): number {
    return this.ring.startRevision;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): CacheEntry<T> | undefined {
    return this.entries.get(key);
  }

  /** Resolve once the cache has seen every write up to `revision`, or fail after timeoutMs. */
  async waitUntilFresh(revision: number, timeoutMs = 3000): Promise<void> {
    this.catchUp();
    if (this.revision >= revision) return;
    this.askProgress();
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        revision,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new TooLargeRevisionError(revision, this.revision));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /**
   * Decode the cached objects again from storage, keeping watchers: the decoder changed (a CRD's new
   * schema defaults and prunes what is read). An entry changed since the read was decoded anew already.
   */
  async redecode(): Promise<void> {
    await this.start();
    const { kvs } = await this.storage.range(this.prefix);
    for (let i = 0; i < kvs.length; i++) {
      const kv = kvs[i];
      const cur = this.entries.get(kv.key);
      if (cur && cur.revision === kv.modRevision) this.entries.set(kv.key, { ...cur, object: this.decode(kv) });
      // A large cache is decoded in slices, letting requests in between.
      if (i % 500 === 499) await new Promise((r) => setImmediate(r));
    }
  }

  /** A consistent read: wait until the cache has everything the store has committed. */
  async sync(): Promise<void> {
    await this.waitUntilFresh(await this.storage.currentRevision());
  }

  list(options: CacheListOptions<T> = {}): CacheListResult<T> {
    const prefix = options.prefix ?? this.prefix;
    const start = options.startKey && options.startKey > prefix ? options.startKey : prefix;
    const end = prefixEnd(prefix);
    this.catchUp();
    const revision = options.revision ?? this.revision;
    if (revision > this.revision) throw new TooLargeRevisionError(revision, this.revision);
    if (revision < this.ring.startRevision) throw new TooOldRevisionError(revision, this.ring.startRevision);
    const { keys, lookup } = revision === this.revision ? this.current() : this.snapshotAt(revision);
    let i = lowerBound(keys, start);
    const limit = options.limit ?? 0;
    const items: CacheEntry<T>[] = [];
    let lastKey: string | undefined;
    for (; i < keys.length; i++) {
      const key = keys[i];
      if (end !== '' && key >= end) break;
      const entry = lookup(key);
      if (!entry) continue;
      if (limit > 0 && items.length >= limit) break;
      lastKey = key;
      if (!options.filter || options.filter(entry.object)) items.push(entry);
    }
    const endIdx = end === '' ? keys.length : lowerBound(keys, end);
    let remaining = endIdx - i;
    if (revision !== this.revision) for (let j = i; j < endIdx; j++) if (!lookup(keys[j])) remaining--;
    return {
      items,
      revision,
      more: remaining > 0,
      lastKey,
      remaining: options.filter ? undefined : remaining,
    };
  }

  watch(options: CacheWatchOptions<T>, sink: CacheWatchSink<T>): CacheWatcher {
    const prefix = options.prefix ?? this.prefix;
    const w: Watcher<T> = {
      start: prefix,
      end: prefixEnd(prefix),
      filter: options.filter,
      bookmarks: options.bookmarks ?? false,
      sink,
      closed: false,
    };
    const after = options.afterRevision;
    this.catchUp();
    if (after !== undefined && after < this.ring.startRevision) {
      throw new TooOldRevisionError(after, this.ring.startRevision);
    }
    const backlog: CacheEvent<T>[] =
      after === undefined
        ? this.list({ prefix }).items.map((e) => ({ type: 'ADDED', key: e.key, revision: e.revision, object: e.object }))
        : this.ring.after(after).filter((e) => inRange(e.key, w.start, w.end));
    this.watchers.add(w);
    let open = true;
    for (const e of backlog) if (!(open = this.dispatch(w, e))) break;
    if (open && after === undefined && options.initialEventsEnd && w.bookmarks && w.sink.onBookmark && !w.sink.onBookmark(this.revision, true)) {
      this.dropWatcher(w, new SlowWatcherError());
    }
    return { close: () => this.dropWatcher(w) };
  }

  get watcherCount(): number {
    return this.watchers.size;
  }

  /** End every open watch cleanly (no error): clients re-watch from their last revision. */
  closeWatchers(): void {
    for (const w of [...this.watchers]) this.dropWatcher(w);
  }

  stop(): void {
    this.stopped = true;
    this.handle?.close();
    // A stopped cache hears of no progress: its revision stays where its contents are.
    this.handle = undefined;
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    for (const w of [...this.watchers]) this.dropWatcher(w);
  }

  private async load(): Promise<void> {
    const { kvs, revision } = await this.storage.range(this.prefix);
    // Stopped while listing: no watch is opened (it would outlive the cache and keep its connection).
    if (this.stopped) return;
    for (const kv of kvs) this.put({ key: kv.key, revision: kv.modRevision, object: this.decode(kv), bytes: kv.value.length });
    this.revision = revision;
    this.changes++;
    this.ring.reset(revision);
    this.handle = this.storage.watch(this.prefix, revision, {
      onEvents: (events) => this.apply(events),
      onProgress: (rev) => this.advance(rev),
      progressOnDemand: true,
      onError: (err) => this.restart(err),
    });
    // Waiters from before a relist: the new revision may be theirs, and later commits are asked to tell.
    this.releaseWaiters();
    const interval = this.options.bookmarkIntervalMs ?? 60_000;
    if (interval > 0 && !this.bookmarkTimer) {
      this.bookmarkTimer = setInterval(() => this.sendBookmarks(), interval);
      this.bookmarkTimer.unref();
    }
  }

  /** The storage watch ended (backend restart, compaction): drop watchers and list again. */
  private restart(err: Error): void {
    this.handle = undefined;
    for (const w of [...this.watchers]) this.dropWatcher(w, err);
    if (this.stopped) return;
    this.entries.clear();
    this.sorted = new SortedKeys();
    this.changes++;
    this.ready = new Promise<void>((resolve) => {
      const retry = () =>
        this.load().then(resolve, () => {
          if (!this.stopped) setTimeout(retry, 1000).unref();
        });
      retry();
    });
  }

  private apply(events: WatchEvent[]): void {
    if (events.length > 0) this.changes++;
    for (const e of events) {
      const event = this.toCacheEvent(e);
      if (event.type === 'DELETED') {
        this.entries.delete(event.key);
        this.sorted.delete(event.key);
      } else {
        this.put({ key: event.key, revision: event.revision, object: event.object, bytes: e.kv.value.length });
      }
      this.ring.push(event);
      this.revision = event.revision;
      for (const w of this.watchers) if (inRange(event.key, w.start, w.end)) this.dispatch(w, event);
    }
    this.releaseWaiters();
  }

  private advance(revision: number): void {
    if (revision > this.revision) this.revision = revision;
    this.releaseWaiters();
  }

  /** Progress at the next commit, from a store that tells it on demand only (etcd tells it anyway). */
  private askProgress(): void {
    if (this.handle?.revision) this.handle.requestProgress?.();
  }

  private releaseWaiters(): void {
    if (this.waiters.length === 0) return;
    const due = this.waiters.filter((w) => w.revision <= this.revision);
    if (due.length > 0) {
      this.waiters = this.waiters.filter((w) => w.revision > this.revision);
      for (const w of due) w.resolve();
    }
    // Still waiting: told of the next commit too.
    if (this.waiters.length > 0) this.askProgress();
  }

  private toCacheEvent(e: WatchEvent): CacheEvent<T> {
    const prev = e.prevKv;
    const prevObject = prev ? this.entries.get(prev.key)?.object ?? this.decode(prev) : undefined;
    if (e.type === 'DELETE') {
      // Kubernetes sends the last state of a deleted object, at the delete's revision.
      const last = prev ? this.atRevision(prevObject, prev, e.kv.modRevision) : prevObject!;
      return { type: 'DELETED', key: e.kv.key, revision: e.kv.modRevision, object: last, prevObject, prevRevision: prev?.modRevision };
    }
    return {
      type: prev ? 'MODIFIED' : 'ADDED',
      key: e.kv.key,
      revision: e.kv.modRevision,
      object: this.decode(e.kv),
      prevObject,
      prevRevision: prev?.modRevision,
    };
  }

  private readonly leftViews = new WeakMap<CacheEvent<T>, CacheEvent<T>>();

  /**
   * The event a watcher sees as DELETED: for a change that took the object out of its selector, the
   * object as it was (the one the watcher knew), at the event's revision, as upstream's cacher sends it.
   */
  deletedView(event: CacheEvent<T>): CacheEvent<T> {
    if (event.type === 'DELETED' || event.prevObject === undefined || !this.options.restamp) return event;
    let view = this.leftViews.get(event);
    if (!view) {
      view = { type: 'DELETED', key: event.key, revision: event.revision, object: this.options.restamp(event.prevObject, event.revision) };
      this.leftViews.set(event, view);
    }
    return view;
  }

  /** The last state of a deleted object at the delete's revision: a restamped copy of what is cached, or a decode. */
  private atRevision(cached: T | undefined, prev: KeyValue, revision: number): T {
    if (cached !== undefined && this.options.restamp) return this.options.restamp(cached, revision);
    return this.decode({ key: prev.key, value: prev.value, createRevision: prev.createRevision, modRevision: revision });
  }

  private put(entry: CacheEntry<T>): void {
    if (!this.entries.has(entry.key)) this.sorted.add(entry.key);
    this.entries.set(entry.key, entry);
  }

  /** Send one event to one watcher, turning it into what that watcher's filter sees. */
  /** One event to one watcher; whatever its filter or sink throws ends that watcher alone, never the cache. */
  private dispatch(w: Watcher<T>, event: CacheEvent<T>): boolean {
    try {
      return this.deliver(w, event);
    } catch (err) {
      this.dropWatcher(w, err instanceof Error ? err : new Error(String(err)));
      return false;
    }
  }

  private deliver(w: Watcher<T>, event: CacheEvent<T>): boolean {
    if (w.closed) return false;
    const type = w.filter ? filteredEventType(event, w.filter) : event.type;
    if (!type) return true;
    if (w.sink.onEvent(type, type === 'DELETED' ? this.deletedView(event) : event)) return true;
    this.dropWatcher(w, new SlowWatcherError());
    return false;
  }

  /**
   * A bookmark to every watcher that asked for them, BOOKMARKS_PER_TURN watchers per turn of the loop (20,000
   * watchers in one go held the loop for 230 ms). Each slice sends the revision of its time: events are
   * dispatched to every watcher as they come (apply), so a watcher has all events up to it.
   */
  private sendBookmarks(): void {
    if (this.bookmarking) return;
    this.catchUp();
    const pending = [...this.watchers].filter((w) => w.bookmarks && w.sink.onBookmark);
    let next = 0;
    const slice = () => {
      const end = Math.min(pending.length, next + BOOKMARKS_PER_TURN);
      for (; next < end; next++) {
        const w = pending[next];
        if (!w.closed && !this.stopped && !w.sink.onBookmark!(this.revision)) this.dropWatcher(w, new SlowWatcherError());
      }
      if (next < pending.length && !this.stopped) setImmediate(slice);
      else this.bookmarking = false;
    };
    this.bookmarking = true;
    slice();
  }

  private dropWatcher(w: Watcher<T>, error?: Error): void {
    if (w.closed) return;
    w.closed = true;
    this.watchers.delete(w);
    w.sink.onClose(error);
  }

  private current(): { keys: readonly string[]; lookup: (key: string) => CacheEntry<T> | undefined } {
    return { keys: this.sorted.keys(), lookup: (key) => this.entries.get(key) };
  }

  /** The objects as they were at `revision`, undoing the ring's later events. */
  private snapshotAt(revision: number): { keys: readonly string[]; lookup: (key: string) => CacheEntry<T> | undefined } {
    const before = new Map<string, CacheEntry<T> | undefined>();
    for (const e of this.ring.after(revision)) {
      if (before.has(e.key)) continue;
      before.set(e.key, e.type === 'ADDED' || e.prevObject === undefined ? undefined : { key: e.key, revision: e.prevRevision!, object: e.prevObject });
    }
    const current = this.sorted.keys();
    const gone = [...before.keys()].filter((k) => !this.entries.has(k)).sort();
    return {
      keys: gone.length === 0 ? current : mergeSorted(current, gone),
      lookup: (key) => (before.has(key) ? before.get(key) : this.entries.get(key)),
    };
  }
}

function mergeSorted(a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(a[i] < b[j] ? a[i++] : b[j++]);
  while (i < a.length) out.push(a[i++]);
  while (j < b.length) out.push(b[j++]);
  return out;
}
