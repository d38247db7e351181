/**
 * LogStore: the `Storage` interface over a `DurableLog` (memory or sqlite).
 *
 * The process is the only writer, so compare-and-swap checks and revision
 * numbers are decided here, in memory, and the log only has to persist rows.
 * Writes that arrive together are group-committed: queued, checked in order,
 * appended in one transaction (one fsync), and only then acknowledged. One
 * append is in flight at a time; writes that arrive meanwhile form the next
 * batch, checked against the state the first one committed. Watchers
 * are told right after the commit, before the writers' promises resolve, so a
 * client that sees its write acknowledged finds it in every watch cache.
 */
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
  StorageUnavailableError,
} from './errors.js';
import { inRange, prefixEnd } from './keys.js';
import type { DurableLog, LoadedLog, LogRow } from './log.js';
import type {
  DeleteResult,
  KeyValue,
  RangeOptions,
  RangeResult,
  Storage,
  WatchEvent,
  WatchHandle,
  WatchListener,
} from './types.js';
import { SortedKeys } from '../util/sorted-keys.js';

type WriteOp =
  | { kind: 'create'; key: string; value: string; done: Settle<KeyValue> }
  | { kind: 'update'; key: string; value: string; expected: number; done: Settle<KeyValue> }
  | { kind: 'delete'; key: string; expected?: number; done: Settle<DeleteResult> };

interface Settle<T> {
  resolve(v: T): void;
  reject(e: Error): void;
}

interface Watcher {
  start: string;
  end: string;
  listener: WatchListener;
  closed: boolean;
}

/** Options of the embedded stores (memory and sqlite): background compaction of old revisions. */
export interface LogStoreOptions {
  /** Background compaction period in ms (0: off). Each run compacts to the revision seen at the previous run. */
  compactIntervalMs?: number;
  /** Revisions always kept by background compaction (default 1000). */
  compactMinRetain?: number;
}

const COMPACT_BATCH = 1000;

/**
 * A live key whose value stays in the log: read on access. It also serves as an
 * event's prevKv, which listeners read (if at all) while the event is delivered,
 * long before compaction could drop the row. `value` is a getter on the
 * prototype (no per-key cost), so a spread copy (`{ ...kv }`) would miss it:
 * copy a KeyValue field by field.
 */
class StoredKeyValue implements KeyValue {
  constructor(
    readonly key: string,
    readonly createRevision: number,
    readonly modRevision: number,
    private readonly log: DurableLog,
  ) {}

  get value(): string {
    return this.log.readValue!(this.modRevision);
  }
}

export class LogStore implements Storage {
  private revision: number;
  private compactRevision: number;
  /** The live keys. With a log that reads values back (sqlite), entries are StoredKeyValues, which keep no value. */
  private readonly live = new Map<string, KeyValue>();
  private readonly sorted = new SortedKeys();
  private readonly watchers = new Set<Watcher>();
  /**
   * Prefix watches whose prefix ends with '/' (the watch caches'), by prefix: an event finds its watchers by the
   * '/'-ended prefixes of its key, so a commit costs what its keys' watchers take, not a look at every watch.
   */
  private readonly byPrefix = new Map<string, Set<Watcher>>();
  /** The other watches (whole store, prefixes not ended by '/'), each looked at on every commit. */
  private readonly scanned = new Set<Watcher>();
  /** Watches told of progress at every commit (those not reading it on demand). */
  private readonly progressed = new Set<Watcher>();
  /** Watches that asked to be told of progress at the next commit (requestProgress). */
  private progressOnce = new Set<Watcher>();
  /** Every event up to this revision has been delivered to every watch (it lags `revision` while a commit is delivered). */
  private delivered = 0;
  private queue: WriteOp[] = [];
  private flushScheduled = false;
  /** The append in flight, if the log commits asynchronously. */
  private committing?: Promise<void>;
  private closed = false;
  private compactTimer?: NodeJS.Timeout;
  private compacting?: Promise<void>;

  constructor(private readonly log: DurableLog, options: LogStoreOptions = {}) {
    const loaded = log.load();
    this.revision = loaded.revision;
    this.delivered = loaded.revision;
    this.compactRevision = loaded.compactRevision;
    for (const kv of loaded.live) {
      this.live.set(kv.key, this.loadedLive(kv));
      this.sorted.add(kv.key);
    }
    const interval = options.compactIntervalMs ?? 0;
    if (interval > 0) this.startBackgroundCompaction(interval, options.compactMinRetain ?? 1000);
  }

  async get(key: string): Promise<KeyValue | undefined> {
    this.assertOpen();
    const kv = this.live.get(key);
    return kv && this.materialize(kv);
  }

  modRevisionOf(key: string): number | undefined {
    return this.closed ? undefined : (this.live.get(key)?.modRevision ?? 0);
  }

  async range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    this.assertOpen();
    const end = prefixEnd(prefix);
    const start = options.startKey && options.startKey > prefix ? options.startKey : prefix;
    const limit = options.limit ?? 0;
    const revision = options.revision || this.revision;
    if (revision > this.revision) throw new FutureRevisionError(revision, this.revision);
    if (revision < this.compactRevision) throw new CompactedError(revision, this.compactRevision);
    if (revision < this.revision) {
      const { kvs, count } = this.log.rangeAt(start, end, revision, limit);
      return { kvs, count, revision, more: count > kvs.length };
    }
    const count = this.sorted.count(start, end);
    const n = limit > 0 ? Math.min(limit, count) : count;
    const kvs = new Array<KeyValue>(n);
    let i = 0;
    for (const key of this.sorted.range(start, end)) {
      if (i === n) break;
      kvs[i++] = this.live.get(key)!;
    }
    // Values kept in the log are read many to a statement (a cache's first list reads every value of its prefix).
    const readValues = this.log.readValues?.bind(this.log);
    if (readValues && n > 1) {
      const at: number[] = [];
      for (let j = 0; j < n; j++) if (kvs[j] instanceof StoredKeyValue) at.push(j);
      const values = readValues(at.map((j) => kvs[j].modRevision));
      for (let v = 0; v < at.length; v++) {
        const kv = kvs[at[v]];
        kvs[at[v]] = { key: kv.key, value: values[v], createRevision: kv.createRevision, modRevision: kv.modRevision };
      }
    } else for (let j = 0; j < n; j++) kvs[j] = this.materialize(kvs[j]);
    return { kvs, count, revision, more: count > n };
  }

  create(key: string, value: string): Promise<KeyValue> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'create', key, value, done: { resolve, reject } }));
  }

  update(key: string, value: string, expectedModRevision: number): Promise<KeyValue> {
    return new Promise((resolve, reject) =>
      this.enqueue({ kind: 'update', key, value, expected: expectedModRevision, done: { resolve, reject } }),
    );
  }

  delete(key: string, expectedModRevision?: number): Promise<DeleteResult> {
    return new Promise((resolve, reject) =>
      this.enqueue({ kind: 'delete', key, expected: expectedModRevision, done: { resolve, reject } }),
    );
  }

  watch(prefix: string, afterRevision: number, listener: WatchListener): WatchHandle {
    const watcher: Watcher = { start: prefix, end: prefixEnd(prefix), listener, closed: false };
    const handle: WatchHandle = {
      close: () => this.unwatch(watcher),
      revision: () => this.delivered,
      requestProgress: () => {
        if (!watcher.closed) this.progressOnce.add(watcher);
      },
    };
    if (this.closed) {
      watcher.closed = true;
      queueMicrotask(() => listener.onError(new StorageUnavailableError('storage is closed')));
      return handle;
    }
    if (afterRevision < this.compactRevision) {
      watcher.closed = true;
      const err = new CompactedError(afterRevision, this.compactRevision);
      queueMicrotask(() => listener.onError(err));
      return handle;
    }
    // History and registration happen in the same tick: no write can slip between them.
    const history = afterRevision < this.revision ? this.log.eventsAfter(watcher.start, watcher.end, afterRevision, this.revision) : [];
    this.watchers.add(watcher);
    if (prefix.endsWith('/')) {
      let set = this.byPrefix.get(prefix);
      if (!set) this.byPrefix.set(prefix, (set = new Set()));
      set.add(watcher);
    } else {
      this.scanned.add(watcher);
    }
    if (listener.onProgress && !listener.progressOnDemand) this.progressed.add(watcher);
    if (history.length > 0) this.deliver(watcher, history, this.revision);
    return handle;
  }

  async currentRevision(): Promise<number> {
    this.assertOpen();
    return this.revision;
  }

  async compact(revision: number): Promise<void> {
    this.assertOpen();
    if (revision > this.revision) throw new FutureRevisionError(revision, this.revision);
    while (this.compacting) await this.compacting;
    if (revision <= this.compactRevision) return;
    this.compacting = this.compactInBatches(revision);
    try {
      await this.compacting;
    } finally {
      this.compacting = undefined;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.compactTimer) clearInterval(this.compactTimer);
    // Writes already accepted are committed (and answered) before the log closes.
    while (this.committing || this.queue.length > 0) {
      if (this.committing) await this.committing;
      else this.flush();
    }
    while (this.compacting) await this.compacting.catch(() => undefined);
    this.closed = true;
    for (const w of [...this.watchers]) {
      this.unwatch(w);
      w.listener.onError(new StorageUnavailableError('storage is closed'));
    }
    await this.log.close();
  }

  private async compactInBatches(target: number): Promise<void> {
    while (this.compactRevision < target && !this.closed) {
      const to = Math.min(target, this.compactRevision + COMPACT_BATCH);
      await this.log.compact(this.compactRevision, to);
      this.compactRevision = to;
      if (to < target) await new Promise((r) => setImmediate(r));
    }
  }

  private startBackgroundCompaction(intervalMs: number, minRetain: number): void {
    let seen = this.revision;
    this.compactTimer = setInterval(() => {
      const target = Math.min(seen, this.revision - minRetain);
      seen = this.revision;
      if (target > this.compactRevision) this.compact(target).catch(() => undefined);
    }, intervalMs);
    this.compactTimer.unref();
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageUnavailableError('storage is closed');
  }

  private enqueue(op: WriteOp): void {
    if (this.closed) {
      op.done.reject(new StorageUnavailableError('storage is closed'));
      return;
    }
    this.queue.push(op);
    if (!this.flushScheduled && !this.committing) {
      this.flushScheduled = true;
      // setImmediate, not a microtask: lets pending I/O add its writes to this batch.
      setImmediate(() => this.flush());
    }
  }

  /** Check every queued write in order, persist the ones that pass in one append, then answer all. */
  private flush(): void {
    this.flushScheduled = false;
    const ops = this.queue;
    this.queue = [];
    if (ops.length === 0) return;
    const staged = new Map<string, KeyValue | undefined>();
    const current = (key: string) => (staged.has(key) ? staged.get(key) : this.live.get(key));
    const rows: LogRow[] = [];
    const events: WatchEvent[] = [];
    const outcomes: Array<() => void> = [];
    let rev = this.revision;
    for (const op of ops) {
      const cur = current(op.key);
      if (op.kind === 'create') {
        if (cur) {
          outcomes.push(() => op.done.reject(new KeyExistsError(op.key, cur)));
          continue;
        }
        rev++;
        const kv: KeyValue = { key: op.key, value: op.value, createRevision: rev, modRevision: rev };
        rows.push({ revision: rev, key: op.key, created: true, deleted: false, createRevision: rev, prevRevision: 0, value: op.value });
        events.push({ type: 'PUT', kv });
        staged.set(op.key, kv);
        outcomes.push(() => op.done.resolve(kv));
        continue;
      }
      if (!cur) {
        outcomes.push(() => op.done.reject(new KeyNotFoundError(op.key)));
        continue;
      }
      if (op.expected !== undefined && op.expected !== cur.modRevision) {
        const expected = op.expected;
        outcomes.push(() => op.done.reject(new ConflictError(op.key, expected, cur)));
        continue;
      }
      rev++;
      const base = { revision: rev, key: op.key, created: false, createRevision: cur.createRevision, prevRevision: cur.modRevision };
      if (op.kind === 'update') {
        const kv: KeyValue = { key: op.key, value: op.value, createRevision: cur.createRevision, modRevision: rev };
        rows.push({ ...base, deleted: false, value: op.value });
        events.push({ type: 'PUT', kv, prevKv: cur });
        staged.set(op.key, kv);
        outcomes.push(() => op.done.resolve(kv));
      } else {
        const revision = rev;
        rows.push({ ...base, deleted: true, value: '' });
        events.push({ type: 'DELETE', kv: { key: op.key, value: '', createRevision: cur.createRevision, modRevision: rev }, prevKv: cur });
        staged.set(op.key, undefined);
        outcomes.push(() => op.done.resolve({ prevKv: this.materialize(cur), revision }));
      }
    }
    if (rows.length === 0) {
      for (const settle of outcomes) settle();
      return;
    }
    const failed = (e: Error) => {
      const err = new StorageUnavailableError(`storage write failed: ${e.message}`);
      for (const op of ops) op.done.reject(err);
    };
    const committed = () => {
      this.revision = rev;
      for (const [key, kv] of staged) {
        if (kv) {
          if (!this.live.has(key)) this.sorted.add(key);
          this.live.set(key, this.toLive(kv));
        } else if (this.live.delete(key)) {
          this.sorted.delete(key);
        }
      }
      this.broadcast(events);
      for (const settle of outcomes) settle();
    };
    let appended: void | Promise<void>;
    try {
      appended = this.log.append(rows);
    } catch (e) {
      return failed(e as Error);
    }
    if (!appended) return committed();
    this.committing = appended.then(committed, failed).finally(() => {
      this.committing = undefined;
      // Writes that queued during the commit form the next batch at once.
      if (this.queue.length > 0 && !this.flushScheduled) this.flush();
    });
  }

  /** What the live map keeps of a written key-value. */
  /** A key as the log loaded it: its value read back when asked for, or (a log that cannot) the loaded one. */
  private loadedLive(kv: LoadedLog['live'][number]): KeyValue {
    if (this.log.readValue) return new StoredKeyValue(kv.key, kv.createRevision, kv.modRevision, this.log);
    if (kv.value === undefined) throw new StorageUnavailableError(`storage loaded ${kv.key} without its value`);
    return kv as KeyValue;
  }

  private toLive(kv: KeyValue): KeyValue {
    return this.log.readValue ? new StoredKeyValue(kv.key, kv.createRevision, kv.modRevision, this.log) : kv;
  }

  /** A key-value whose value is read now (for callers that may keep it past a compaction). */
  private materialize(kv: KeyValue): KeyValue {
    return kv instanceof StoredKeyValue ? { key: kv.key, value: kv.value, createRevision: kv.createRevision, modRevision: kv.modRevision } : kv;
  }

  private broadcast(events: WatchEvent[]): void {
    // Those that asked before this commit are told of it; asking while it is delivered is for the next one.
    const asked = this.progressOnce;
    if (asked.size > 0) this.progressOnce = new Set();
    // Each prefix watch's share of the events, in order: found through the '/'-ended prefixes of each key.
    const shares = new Map<Watcher, WatchEvent[]>();
    if (this.byPrefix.size > 0) {
      for (const e of events) {
        const key = e.kv.key;
        for (let i = key.indexOf('/'); i >= 0; i = key.indexOf('/', i + 1)) {
          const set = this.byPrefix.get(key.slice(0, i + 1));
          if (!set) continue;
          for (const w of set) {
            const share = shares.get(w);
            if (share) share.push(e);
            else shares.set(w, [e]);
          }
        }
      }
    }
    for (const w of this.scanned) {
      const mine = w.start === '' && w.end === '' ? events : events.filter((e) => inRange(e.kv.key, w.start, w.end));
      if (mine.length > 0) shares.set(w, mine);
    }
    for (const [w, mine] of shares) if (!w.closed) this.deliver(w, mine, this.revision);
    // Progress for the watches that hear it at every commit and had no events in this one.
    for (const w of this.progressed) if (!shares.has(w) && !w.closed) this.deliver(w, [], this.revision);
    this.delivered = this.revision;
    for (const w of asked) if (!shares.has(w) && !w.closed) this.tellProgress(w, this.revision);
  }

  private tellProgress(w: Watcher, revision: number): void {
    try {
      w.listener.onProgress?.(revision);
    } catch (e) {
      this.unwatch(w);
      w.listener.onError(e as Error);
    }
  }

  private deliver(w: Watcher, events: WatchEvent[], revision: number): void {
    try {
      if (events.length > 0) w.listener.onEvents(events);
      if (!w.closed && (!w.listener.progressOnDemand || events.length > 0)) w.listener.onProgress?.(revision);
    } catch (e) {
      // A listener that throws loses its watch rather than breaking the store.
      this.unwatch(w);
      w.listener.onError(e as Error);
    }
  }

  private unwatch(w: Watcher): void {
    w.closed = true;
    this.watchers.delete(w);
    this.scanned.delete(w);
    this.progressed.delete(w);
    this.progressOnce.delete(w);
    const set = this.byPrefix.get(w.start);
    if (set?.delete(w) && set.size === 0) this.byPrefix.delete(w.start);
  }
}
