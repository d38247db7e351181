/**
 * The watch cache of one resource: the current objects in memory plus a ring of
 * recent events, fed by a single storage watch on the resource's key prefix.
 *
 * It serves get, list (latest, or an exact revision still inside the ring's
 * window, with limit and a start key) and watch (from any revision inside the
 * window; older ones get TooOldRevisionError, which the API maps to 410).
 * Objects are decoded once, when their event arrives; every watcher receives the
 * same event object, whose `memo` lets the HTTP layer serialize it once.
 *
 * With a compact form (`WatchCacheOptions.compact`), an object not read lately is kept as its text
 * instead (a decoded object takes about twice the memory of its JSON) and decoded again when read:
 * every such cache in the process shares one set of decoded objects (`setDecodedObjectLimit`).
 */
import { lowerBound, SortedKeys } from '../util/sorted-keys.js';
import { nextTurn, runSteps, type Steps } from '../util/turns.js';
import { inRange, prefixEnd } from '../storage/keys.js';
import type { KeyValue, Storage, WatchEvent, WatchHandle } from '../storage/types.js';
import { EventRing } from './event-ring.js';
import { ListAbortedError, SlowWatcherError, TooLargeRevisionError, TooOldRevisionError } from './errors.js';

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

export type Labels = Readonly<Record<string, string>>;

export interface CacheListOptions<T> {
  /**
   * A label selector: entries whose labels it refuses are left out without their objects being read (those kept
   * as text are not decoded). `filter`, if any, must refuse them too.
   */
  labels?: (labels: Labels | undefined) => boolean;
  /** A narrower key prefix inside the cache's prefix, such as one namespace. */
  prefix?: string;
  /** The exact revision to list at (absent: the latest). */
  revision?: number;
  /** Start at this key (inclusive): a continue position. */
  startKey?: string;
  /** Only this key (inside the prefix): a list by name (a field selector `metadata.name=`) reads that one key. */
  key?: string;
  limit?: number;
  filter?: (object: T) => boolean;
  /** Checked at each pause of `listing`: true ends it (ListAbortedError), for a client that is gone. */
  aborted?: () => boolean;
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
  /**
   * Returns false when the watcher cannot take more; it is then dropped with SlowWatcherError. `initial`: one of the
   * current objects a watch without afterRevision starts with.
   */
  onEvent(type: CacheEventType, event: CacheEvent<T>, initial?: boolean): boolean;
  /**
   * For a watch whose first events go out in steps (`inSteps`): a promise when the watcher has taken as much as it
   * should before its client reads it, which the next of them waits for (undefined: send on).
   */
  waitForRoom?(): Promise<void> | undefined;
  /** A bookmark; `initialEventsEnd`: the one after the initial events of a watch-list. */
  onBookmark?(revision: number, initialEventsEnd?: boolean): boolean;
  onClose(error?: Error): void;
}

export interface CacheWatchOptions<T> {
  /** Send events after this revision; absent: first the current objects as ADDED, then live events. */
  afterRevision?: number;
  prefix?: string;
  /** Only this key (inside the prefix): a watch by name hears of that key alone, and its first events read no other. */
  key?: string;
  filter?: (object: T) => boolean;
  bookmarks?: boolean;
  /** After the current objects (afterRevision absent), a bookmark marking their end (when bookmarks are on). */
  initialEventsEnd?: boolean;
  /**
   * For the current objects (afterRevision absent): an object kept as text whose text this refuses gets no ADDED
   * event, and is not decoded for one (the watcher needs none for it).
   */
  initialText?: (text: string) => boolean;
  /** The label selector of `filter` (which must refuse what it refuses): the current objects it refuses are not decoded. */
  labels?: (labels: Labels | undefined) => boolean;
  /**
   * The current objects (afterRevision absent) sent in steps, with turns of the event loop between them when there
   * are many: `watch` returns after the first step, and events that come meanwhile follow them. Without it, they are
   * all sent before `watch` returns.
   */
  inSteps?: boolean;
}

export interface CacheWatcher {
  close(): void;
}

/** How a cache keeps an object it has not read lately: as text, made into the object again when read. */
export interface CompactForm<T> {
  pack(obj: T): string;
  /** The object's labels, kept beside its text so that a label selector reads them without decoding it. */
  labels(obj: T): Labels | undefined;
  /** The object again; must not throw (the text is what `pack` made). */
  unpack(text: string): T;
  /** The object from its stored value, as the cache's decoder gives it (with no object just written to take instead). */
  unpackStored(kv: KeyValue): T;
}

export interface WatchCacheOptions<T = unknown> {
  /** Keep objects past the process's decoded set as text (absent: every object stays decoded). */
  compact?: CompactForm<T>;
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
  /** Events that came while the current objects are still being sent (they follow them). */
  held?: CacheEvent<T>[];
  /** What the sending of the current objects waits for before its next step (the client reading what it has). */
  room?: Promise<void>;
  /** Ends that wait (the watcher closed). */
  wake?: () => void;
}

/**
 * A cached object: decoded, or (with a compact form, once the clock has passed it unread) its text. Reading
 * `object` decodes it again and puts it back in the decoded set.
 */
class Cached<T> implements CacheEntry<T> {
  /** Read since the clock's hand last passed. */
  used = true;
  /** Replaced or removed from its cache: the clock lets it go without packing (whoever holds it keeps it whole). */
  stale = false;
  private obj: T | undefined;
  /** The object as text when it is kept so: `pack`'s, or (`stored`) its stored value. */
  text: string | undefined;
  private stored = false;
  /** The labels of an object kept as text (UNREAD: not read yet, for one kept as its stored value from a load). */
  private labels: Labels | undefined | typeof UNREAD;

  /** Without `object`: kept as its stored value from the start, `storedValue` (its labels read when first asked for). */
  constructor(
    readonly key: string,
    readonly revision: number,
    object: T | undefined,
    readonly bytes: number | undefined,
    /** Its cache's compact form (which also tells the caches' entries apart in the decoded set). */
    readonly form: CompactForm<T> | undefined,
    storedValue?: string,
  ) {
    this.obj = object;
    if (object === undefined) {
      this.text = storedValue;
      this.stored = true;
      this.labels = UNREAD;
      this.used = false;
    } else if (form && packs(bytes)) decodedSet.add(this as Cached<unknown>);
  }

  get object(): T {
    let obj = this.obj;
    if (obj === undefined) {
      obj = this.peek();
      this.obj = obj;
      this.text = undefined;
      this.stored = false;
      this.labels = undefined;
      decodedSet.add(this as Cached<unknown>);
    }
    this.used = true;
    return obj;
  }

  /** Whether the text is the stored value (not `pack`'s). */
  get isStoredValue(): boolean {
    return this.stored;
  }

  /** Whether the object is decoded (else kept as text). */
  get decoded(): boolean {
    return this.obj !== undefined;
  }

  /**
   * The object for a read of many (a list, a watch's initial events, a filter): decoded if it is, else decoded
   * for this read only, the decoded set left as it is (a scan would otherwise push out what point reads use).
   */
  peek(): T {
    const obj = this.obj;
    if (obj !== undefined) {
      this.used = true;
      return obj;
    }
    const form = this.form!;
    return this.stored ? form.unpackStored({ key: this.key, value: this.text!, modRevision: this.revision, createRevision: this.revision }) : form.unpack(this.text!);
  }

  /** The object's labels (those kept beside its text, or the decoded object's); undefined without a compact form. */
  currentLabels(): Labels | undefined {
    const form = this.form;
    if (!form) return undefined;
    if (this.obj !== undefined) return form.labels(this.obj);
    if (this.labels === UNREAD) this.labels = sharedLabels(form.labels(this.peek()));
    return this.labels;
  }

  /** Whether a label selector takes this object (without a compact form: true, the filter decides). */
  labelsMatch(selector: (labels: Labels | undefined) => boolean): boolean {
    return !this.form || selector(this.currentLabels());
  }

  /** Leaves the decoded set: kept as text from now on (or decoded, outside the set, if it cannot be packed). */
  pack(): void {
    if (this.stale || this.obj === undefined) return;
    const form = this.form!;
    try {
      const text = form.pack(this.obj);
      this.labels = sharedLabels(form.labels(this.obj));
      this.text = text;
      this.obj = undefined;
    } catch {
      // An object its form cannot write (a stored value from elsewhere): it stays decoded, as without a form.
    }
  }
}

/** The labels of an entry kept as its stored value since a load, until a label selector reads them. */
const UNREAD: unique symbol = Symbol('unread labels');

/** The text of an entry kept as `pack` made it (not a stored value), without decoding it; else undefined. */
export function packedText<T>(entry: CacheEntry<T>): string | undefined {
  return entry instanceof Cached && !entry.decoded && !entry.isStoredValue ? entry.text : undefined;
}

/** An entry's object for a read of many entries (a list's items, a filter, a watch's initial events): `Cached.peek`. */
export function objectForScan<T>(entry: CacheEntry<T>): T {
  return entry instanceof Cached ? (entry as Cached<T>).peek() : entry.object;
}

/**
 * Label sets by their JSON: objects labelled alike (an app's, a shard's) share one set while kept as text, not
 * one each. Bounded; cleared when full.
 */
const labelSets = new Map<string, Labels>();
const MAX_LABEL_SETS = 4096;

function sharedLabels(labels: Labels | undefined): Labels | undefined {
  if (labels === undefined || labels === null || typeof labels !== 'object') return undefined;
  // Only sets of strings are shared (a stored value from elsewhere may hold anything: kept as it is).
  for (const k in labels) if (typeof labels[k] !== 'string') return labels;
  const key = JSON.stringify(labels);
  const known = labelSets.get(key);
  if (known) return known;
  if (labelSets.size >= MAX_LABEL_SETS) labelSets.clear();
  labelSets.set(key, labels);
  return labels;
}

/**
 * The decoded objects of every compact cache in the process, at most `limit`: a clock, whose hand packs the
 * first object not read since it last passed (a read sets `used`), so what is read often stays decoded.
 */
class DecodedSet {
  private ring: Array<Cached<unknown>> = [];
  private hand = 0;
  /** How many of the set's entries each cache (by its form) has. */
  private readonly counts = new Map<CompactForm<unknown>, number>();

  constructor(public limit: number) {}

  add(entry: Cached<unknown>): void {
    // No limit: every object stays decoded, and nothing needs following.
    if (this.limit === Infinity) return;
    const form = entry.form!;
    this.counts.set(form, (this.counts.get(form) ?? 0) + 1);
    if (this.ring.length < this.limit) {
      this.ring.push(entry);
      return;
    }
    // Each pass clears a `used`: at most one round before an entry is found.
    for (;;) {
      if (this.hand >= this.ring.length) this.hand = 0;
      const at = this.ring[this.hand];
      if (at.used && !at.stale) {
        at.used = false;
        this.hand++;
        continue;
      }
      this.ring[this.hand++] = entry;
      this.left(at);
      at.pack();
      return;
    }
  }

  /** An entry left the set. */
  private left(entry: Cached<unknown>): void {
    const form = entry.form!;
    const n = (this.counts.get(form) ?? 1) - 1;
    if (n > 0) this.counts.set(form, n);
    else this.counts.delete(form);
  }

  /**
   * Lets go of a stopped cache's entries (the set would keep them, and their objects, until its hand came by): a
   * look at the whole set only for a cache that has entries in it.
   */
  forget(form: CompactForm<unknown>): void {
    if (!this.counts.has(form)) return;
    this.counts.delete(form);
    this.ring = this.ring.filter((e) => e.form !== form);
    this.hand = 0;
  }

  /** 0: no limit (every object decoded, as without a compact form). */
  setLimit(limit: number): void {
    this.limit = limit <= 0 ? Infinity : limit;
    if (this.limit === Infinity) {
      this.ring = [];
      this.counts.clear();
      this.hand = 0;
      return;
    }
    if (this.ring.length <= this.limit) return;
    const out = this.ring.slice(this.limit);
    this.ring = this.ring.slice(0, this.limit);
    this.hand = 0;
    for (const entry of out) {
      this.left(entry);
      entry.pack();
    }
  }

  get full(): boolean {
    return this.ring.length >= this.limit;
  }
}

/**
 * Objects whose stored form is larger stay decoded, outside the decoded set: a large object's decoded form is mostly
 * its strings, little more than its text, while decoding it again costs a parse of all of it; and an object kapi
 * wrote carries what it knows of its managed fields (fieldsV1 nested deeper than a client may send them, say).
 */
const MAX_PACKED_BYTES = 16 * 1024;

function packs(bytes: number | undefined): boolean {
  return bytes === undefined || bytes <= MAX_PACKED_BYTES;
}

/** 50,000 decoded objects of ~1 KB take ~100 MB with their JSON; a million objects as text, ~0.7 GB. */
const DEFAULT_DECODED_OBJECTS = 50_000;
const decodedSet = new DecodedSet(DEFAULT_DECODED_OBJECTS);

/**
 * How many objects the compact watch caches of this process keep decoded (the rest as text; 0: all). Lowering it
 * packs those past it; raising it from 0 leaves the objects decoded until they are replaced.
 */
export function setDecodedObjectLimit(limit: number): void {
  decodedSet.setLimit(limit);
}

export function decodedObjectLimit(): number {
  return decodedSet.limit === Infinity ? 0 : decodedSet.limit;
}

/** A cache event; the previous object is decoded when asked for (a watcher's filter, a conversion). */
class Event<T> implements CacheEvent<T> {
  memo?: Map<string, unknown>;

  constructor(
    readonly type: CacheEventType,
    readonly key: string,
    readonly revision: number,
    readonly object: T,
    private readonly prev: Cached<T> | T | undefined,
    readonly prevRevision: number | undefined,
  ) {}

  private prevDecoded: T | undefined;

  get prevObject(): T | undefined {
    const prev = this.prev;
    if (!(prev instanceof Cached)) return prev;
    // The entry was replaced: decoded for this event, not put back in the decoded set.
    return (this.prevDecoded ??= (prev as Cached<T>).peek());
  }
}

/**
 * A watch's first event for an object kept as text: decoded when the watcher reads it, once, so that a watcher
 * dropped partway (one that cannot keep up with a million) leaves the rest undecoded.
 */
class InitialEvent<T> implements CacheEvent<T> {
  readonly type = 'ADDED';
  readonly key: string;
  readonly revision: number;
  memo?: Map<string, unknown>;
  private decoded: T | undefined;

  constructor(private readonly entry: Cached<T>) {
    this.key = entry.key;
    this.revision = entry.revision;
  }

  get object(): T {
    return (this.decoded ??= this.entry.peek());
  }
}

export class WatchCache<T> {
  private readonly entries = new Map<string, Cached<T>>();
  private sorted = new SortedKeys();
  private readonly watchers = new Set<Watcher<T>>();
  private ring: EventRing<CacheEvent<T>>;
  private revision = 0;
  /** Counts lists and applied events (changeRevision). */
  private changes = 0;
  /** Bumped when the cache lists the store again (restart): a list in steps from before cannot go on. */
  private epoch = 0;
  /** The lists of the store the contents were made from (each start and relist): see keysChangedSince. */
  private lists = 0;
  private isRelisting = false;
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

  /** Where the contents stand, for keysChangedSince. */
  get position(): CachePosition {
    return { lists: this.lists, revision: this.revision };
  }

  /**
   * The keys whose objects changed after `from` (a key changed twice is named twice), or undefined when the cache
   * cannot tell: it listed the store anew since, or its ring of events no longer reaches back so far. What was made
   * from the contents at `from` (RBAC's index of bindings) can be brought up to date key by key instead of made again.
   */
  keysChangedSince(from: CachePosition): string[] | undefined {
    if (from.lists !== this.lists || from.revision < this.ring.startRevision) return undefined;
    return this.ring.after(from.revision).map((e) => e.key);
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
      if (cur && cur.revision === kv.modRevision) this.loaded(kv);
      // A large cache is decoded in slices, letting requests in between.
      if (i % 500 === 499) await new Promise((r) => setImmediate(r));
    }
  }

  /**
   * Emptied to list the store again (its watch of the store broke), until it has: what it holds is then the state
   * at no revision (`start()` waits for the new list).
   */
  get relisting(): boolean {
    return this.isRelisting;
  }

  /** A consistent read: wait until the cache has everything the store has committed. */
  async sync(): Promise<void> {
    await this.waitUntilFresh(await this.storage.currentRevision());
  }

  list(options: CacheListOptions<T> = {}): CacheListResult<T> {
    return runSteps(this.listing(options));
  }

  /**
   * `list` in steps (util/turns.ts): a pause after each LIST_STEP_MS of work, so that listing a million objects
   * (or filtering them by a field, which reads each) is many short steps between other requests. Writes that come
   * meanwhile do not show: after a pause in which the cache moved on, the list goes on at its revision (as a list
   * at a past revision does), from the key after the last one it read.
   */
  *listing(options: CacheListOptions<T> = {}): Steps<CacheListResult<T>> {
    const prefix = options.prefix ?? this.prefix;
    const [start, end] = keyRange(prefix, options.key, options.startKey);
    this.catchUp();
    const revision = options.revision ?? this.revision;
    if (revision > this.revision) throw new TooLargeRevisionError(revision, this.revision);
    if (revision < this.ring.startRevision) throw new TooOldRevisionError(revision, this.ring.startRevision);
    let past = revision === this.revision ? undefined : this.changesSince(revision);
    // The cache's revision when `keys` and `lookup` were made: they hold while it is the same (and it has not listed
    // the store again: a relist empties it, then loads it at a revision of its own).
    let at = this.revision;
    const epoch = this.epoch;
    const entries = this.entries;
    const view = (from: string) => {
      const changes = past;
      return {
        lookup: changes ? (key: string) => (changes.before.has(key) ? changes.before.get(key) : entries.get(key)) : (key: string) => entries.get(key),
        keys: changes ? mergeSorted(this.sorted.range(from, end), changes.gone, from, end) : this.sorted.range(from, end),
      };
    };
    let { lookup, keys } = view(start);
    const limit = options.limit ?? 0;
    const items: CacheEntry<T>[] = [];
    let lastKey: string | undefined;
    // The first key left out for the limit.
    let next: string | undefined;
    let stepStart = performance.now();
    let read = 0;
    for (let r = keys.next(); !r.done; r = keys.next()) {
      const key = r.value;
      if (pauseDue(++read, stepStart)) {
        yield;
        stepStart = performance.now();
        if (options.aborted?.()) throw new ListAbortedError();
        if (this.epoch !== epoch) throw new TooOldRevisionError(revision, this.ring.startRevision);
        if (this.revision !== at) {
          if (revision < this.ring.startRevision) throw new TooOldRevisionError(revision, this.ring.startRevision);
          past = this.changesSince(revision);
          at = this.revision;
          // Still to read: this key and those after it, at the list's revision.
          ({ lookup, keys } = view(key));
          continue;
        }
      }
      const entry = lookup(key);
      if (!entry) continue;
      if (limit > 0 && items.length >= limit) {
        next = key;
        break;
      }
      lastKey = key;
      if (options.labels && entry instanceof Cached && !entry.labelsMatch(options.labels)) continue;
      if (!options.filter) items.push(entry);
      else {
        const obj = objectForScan(entry);
        // The object the filter read goes with the item (one kept as text is not decoded twice).
        if (options.filter(obj)) items.push(entry instanceof Cached && !entry.decoded ? { key: entry.key, revision: entry.revision, object: obj, bytes: entry.bytes } : entry);
      }
    }
    const remaining = next === undefined ? 0 : this.countAt(next, end, past);
    return {
      items,
      revision,
      more: remaining > 0,
      lastKey,
      remaining: options.filter ? undefined : remaining,
    };
  }

  /** How many keys in [from, end) there were at the list's revision (now, unless `past` says what changed since). */
  private countAt(from: string, end: string, past: PastChanges<T> | undefined): number {
    let n = this.sorted.count(from, end);
    if (past) {
      const inRangeOf = (key: string) => key >= from && (end === '' || key < end);
      n += past.gone.filter(inRangeOf).length;
      for (const [key, was] of past.before) if (was === undefined && inRangeOf(key)) n--;
    }
    return n;
  }

  watch(options: CacheWatchOptions<T>, sink: CacheWatchSink<T>): CacheWatcher {
    const prefix = options.prefix ?? this.prefix;
    const [start, end] = keyRange(prefix, options.key);
    const w: Watcher<T> = {
      start,
      end,
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
    const close = { close: () => this.dropWatcher(w) };
    if (after !== undefined) {
      this.watchers.add(w);
      for (const e of this.ring.after(after)) if (inRange(e.key, w.start, w.end) && !this.dispatch(w, e)) break;
      return close;
    }
    // The current objects first: in steps when there are many (a million, each read by a field selector), with
    // the events that come meanwhile held back until they are sent.
    w.held = [];
    this.watchers.add(w);
    const steps = this.sendingInitialEvents(w, prefix, options);
    let first: IteratorResult<void, void>;
    try {
      first = options.inSteps ? steps.next() : { done: true, value: runSteps(steps) };
    } catch (err) {
      w.closed = true;
      this.watchers.delete(w);
      throw err;
    }
    if (!first.done) void this.sendInTurns(w, steps);
    return close;
  }

  /** The rest of a watch's first events: a step per turn of the loop, or once its client has read what it has. */
  private async sendInTurns(w: Watcher<T>, steps: Steps<void>): Promise<void> {
    try {
      for (;;) {
        const room = w.room;
        w.room = undefined;
        if (!room) await nextTurn();
        // Until the client has read, or the watcher is closed (its client may never read again).
        else if (!w.closed) await new Promise<void>((resolve) => void room.then((w.wake = resolve), resolve));
        w.wake = undefined;
        if (steps.next().done) return;
      }
    } catch (err) {
      this.dropWatcher(w, err instanceof Error ? err : new Error(String(err)));
    }
  }

  /**
   * The current objects as ADDED events (less those whose labels the watch's selector refuses and those kept as text
   * whose text `initialText` refuses), then the events held back meanwhile, then (watch-list) the bookmark that
   * marks their end. A pause after each LIST_STEP_MS of work.
   */
  private *sendingInitialEvents(w: Watcher<T>, prefix: string, options: CacheWatchOptions<T>): Steps<void> {
    const wanted = options.initialText;
    let items: CacheEntry<T>[];
    try {
      ({ items } = yield* this.listing({ prefix, key: options.key, labels: options.labels, aborted: () => w.closed }));
    } catch (err) {
      // Closed meanwhile: nothing more to send.
      if (err instanceof ListAbortedError) return;
      throw err;
    }
    let stepStart = performance.now();
    for (let i = 0; i < items.length; i++) {
      if (w.closed) return;
      if (i > 0 && pauseDue(i, stepStart)) {
        yield;
        stepStart = performance.now();
        if (w.closed) return;
      }
      const e = items[i];
      const text = wanted && e instanceof Cached ? e.text : undefined;
      if (text !== undefined && !wanted!(text)) continue;
      const event: CacheEvent<T> = e instanceof Cached && !e.decoded ? new InitialEvent(e as Cached<T>) : { type: 'ADDED', key: e.key, revision: e.revision, object: e.object };
      if (!this.dispatch(w, event, true)) return;
      // A client that reads more slowly than they are made: the rest wait for it (never dropped for it).
      const room = w.sink.waitForRoom?.();
      if (room) {
        w.room = room;
        yield;
        stepStart = performance.now();
        if (w.closed) return;
      }
    }
    const held = w.held ?? [];
    w.held = undefined;
    for (const e of held) if (!this.dispatch(w, e)) return;
    if (options.initialEventsEnd && w.bookmarks && w.sink.onBookmark && !w.sink.onBookmark(this.revision, true)) {
      this.dropWatcher(w, new SlowWatcherError());
    }
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
    if (this.options.compact) decodedSet.forget(this.options.compact as CompactForm<unknown>);
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
    for (const kv of kvs) this.loaded(kv);
    this.revision = revision;
    this.changes++;
    this.lists++;
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
    this.epoch++;
    this.handle = undefined;
    for (const w of [...this.watchers]) this.dropWatcher(w, err);
    if (this.stopped) return;
    for (const entry of this.entries.values()) entry.stale = true;
    this.entries.clear();
    this.sorted = new SortedKeys();
    this.changes++;
    this.lists++;
    this.isRelisting = true;
    this.ready = new Promise<void>((resolve) => {
      const retry = () =>
        this.load().then(() => {
          this.isRelisting = false;
          resolve();
        }, () => {
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
        const gone = this.entries.get(event.key);
        if (gone) gone.stale = true;
        this.entries.delete(event.key);
        this.sorted.delete(event.key);
      } else {
        this.put(event.key, event.revision, event.object, e.kv.value.length);
      }
      this.ring.push(event);
      this.revision = event.revision;
      for (const w of this.watchers) {
        if (!inRange(event.key, w.start, w.end)) continue;
        if (!w.held) this.dispatch(w, event);
        // A watcher whose first events take so long that more than MAX_HELD_EVENTS come meanwhile starts again.
        else if (w.held.push(event) > MAX_HELD_EVENTS) this.dropWatcher(w, new SlowWatcherError());
      }
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
    // The previous state as cached (decoded only if asked for), else decoded from the event.
    const cached = prev ? this.entries.get(prev.key) : undefined;
    const before = cached && cached.revision === prev!.modRevision ? cached : prev ? this.decode(prev) : undefined;
    if (e.type === 'DELETE') {
      const prevObject = before instanceof Cached ? (before as Cached<T>).peek() : before;
      // Kubernetes sends the last state of a deleted object, at the delete's revision.
      const last = prev ? this.atRevision(prevObject, prev, e.kv.modRevision) : prevObject!;
      return new Event<T>('DELETED', e.kv.key, e.kv.modRevision, last, prevObject, prev?.modRevision);
    }
    return new Event<T>(prev ? 'MODIFIED' : 'ADDED', e.kv.key, e.kv.modRevision, this.decode(e.kv), before, prev?.modRevision);
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

  /**
   * A stored object listed (a load) or read again (redecode). Past what the decoded set holds, it is kept as its
   * stored value from the start and decoded when read (by the decoder of then): a restart does not decode a
   * million objects.
   */
  private loaded(kv: KeyValue): void {
    const compact = this.options.compact;
    const value = kv.value;
    if (!compact || !decodedSet.full || !packs(value.length)) {
      this.put(kv.key, kv.modRevision, this.decode(kv), value.length);
      return;
    }
    this.set(new Cached(kv.key, kv.modRevision, undefined, value.length, compact, value));
  }

  private put(key: string, revision: number, object: T, bytes: number | undefined): void {
    this.set(new Cached(key, revision, object, bytes, this.options.compact));
  }

  /** An entry in, the one it replaces marked stale. */
  private set(entry: Cached<T>): void {
    const old = this.entries.get(entry.key);
    if (old) old.stale = true;
    else this.sorted.add(entry.key);
    this.entries.set(entry.key, entry);
  }

  /** Send one event to one watcher, turning it into what that watcher's filter sees. */
  /** One event to one watcher; whatever its filter or sink throws ends that watcher alone, never the cache. */
  private dispatch(w: Watcher<T>, event: CacheEvent<T>, initial?: boolean): boolean {
    try {
      return this.deliver(w, event, initial);
    } catch (err) {
      this.dropWatcher(w, err instanceof Error ? err : new Error(String(err)));
      return false;
    }
  }

  private deliver(w: Watcher<T>, event: CacheEvent<T>, initial?: boolean): boolean {
    if (w.closed) return false;
    const type = w.filter ? filteredEventType(event, w.filter) : event.type;
    if (!type) return true;
    if (w.sink.onEvent(type, type === 'DELETED' ? this.deletedView(event) : event, initial)) return true;
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
    // Not to a watcher still sending its first events: it has not sent everything up to the bookmark.
    const pending = [...this.watchers].filter((w) => w.bookmarks && w.sink.onBookmark && !w.held);
    let next = 0;
    const slice = () => {
      const end = Math.min(pending.length, next + BOOKMARKS_PER_TURN);
      for (; next < end; next++) {
        const w = pending[next];
        if (!w.closed && !w.held && !this.stopped && !w.sink.onBookmark!(this.revision)) this.dropWatcher(w, new SlowWatcherError());
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
    w.wake?.();
    w.sink.onClose(error);
  }

  /**
   * What changed after `revision`, from the ring: each changed key's entry at that revision (undefined: it did not
   * exist then) and, sorted, the keys gone since (which the current keys lack).
   */
  private changesSince(revision: number): PastChanges<T> {
    const before = new Map<string, CacheEntry<T> | undefined>();
    for (const e of this.ring.after(revision)) {
      if (before.has(e.key)) continue;
      // The entry as it was, its object decoded only if the list reads it (a page reads few of them).
      before.set(e.key, e.type === 'ADDED' || e.prevRevision === undefined ? undefined : { key: e.key, revision: e.prevRevision, get object() { return e.prevObject as T; } });
    }
    const gone = [...before.keys()].filter((k) => !this.entries.has(k)).sort();
    return { before, gone };
  }
}

/** Where a cache's contents stand (WatchCache.position). */
export interface CachePosition {
  readonly lists: number;
  readonly revision: number;
}

interface PastChanges<T> {
  before: Map<string, CacheEntry<T> | undefined>;
  gone: string[];
}

/**
 * The keys a list or watch reads, [start, end): the prefix's, or only `key` (a name), from `startKey` on (a continue
 * position) when it is later.
 */
function keyRange(prefix: string, key?: string, startKey?: string): [string, string] {
  const from = key ?? prefix;
  return [startKey && startKey > from ? startKey : from, key !== undefined ? `${key}\x00` : prefixEnd(prefix)];
}

/** Events held back for a watcher still sending its first events, at most (the ring's default size). */
const MAX_HELD_EVENTS = 10_000;

/** A list pauses once it has worked this long (looking at the clock every LIST_CLOCK_EVERY keys). */
const LIST_STEP_MS = 5;
const LIST_CLOCK_EVERY = 256;

/** Whether a step that has read `count` keys (or sent that many events) since `since` should pause. */
const pauseDue = (count: number, since: number) => count % LIST_CLOCK_EVERY === 0 && performance.now() - since > LIST_STEP_MS;

/** The keys of two sorted sources in [start, end), in order: `a` (already in range) and the sorted array `b`. */
function* mergeSorted(a: Iterable<string>, b: readonly string[], start: string, end: string): Generator<string, void, undefined> {
  let j = lowerBound(b, start);
  const inB = () => j < b.length && (end === '' || b[j] < end);
  for (const key of a) {
    while (inB() && b[j] < key) yield b[j++];
    yield key;
  }
  while (inB()) yield b[j++];
}
