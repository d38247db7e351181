/**
 * The storage contract: an MVCC key-value store shaped like etcd v3.
 *
 * One global revision counter; every write gets the next revision. A key's
 * `modRevision` is the revision of its last write and becomes the object's
 * `metadata.resourceVersion`. Every mutation is a compare-and-swap: create
 * fails if the key exists, update and (optionally) delete check the expected
 * mod revision. Backends: memory (tests), sqlite (embedded default), etcd.
 */

export interface KeyValue {
  key: string;
  /** The stored bytes, as a string (JSON for API objects). */
  value: string;
  createRevision: number;
  modRevision: number;
}

export type WatchEventType = 'PUT' | 'DELETE';

export interface WatchEvent {
  type: WatchEventType;
  /** The key's new state; for DELETE, `value` is '' and `modRevision` is the delete's revision. */
  kv: KeyValue;
  /** The key's state before this event, when it existed. */
  prevKv?: KeyValue;
}

export interface RangeOptions {
  /** Read the state as of this revision (0 or absent: the current one). */
  revision?: number;
  /** At most this many keys (0 or absent: no limit). */
  limit?: number;
  /** Start at this key (inclusive) instead of the prefix's first key: a continue position. */
  startKey?: string;
}

export interface RangeResult {
  kvs: KeyValue[];
  /** The revision the range was read at. */
  revision: number;
  /** More keys follow the last one returned. */
  more: boolean;
  /** How many keys lie in [startKey, end of prefix) at that revision, returned or not. */
  count: number;
}

export interface DeleteResult {
  /** The key's state just before the delete. */
  prevKv: KeyValue;
  /** The revision of the delete. */
  revision: number;
}

export interface WatchListener {
  /** Events in revision order, each after the watch's start revision. */
  onEvents(events: WatchEvent[]): void;
  /** The store has committed everything up to this revision (whether or not it touched the prefix). */
  onProgress?(revision: number): void;
  /**
   * The listener reads progress from the handle when it needs it (`WatchHandle.revision`): a store that can tell
   * then calls onProgress only for history, not at every commit (a write's cost does not grow with the watches).
   */
  progressOnDemand?: boolean;
  /** The watch has ended with an error (compacted, backend gone); no more calls follow. */
  onError(err: Error): void;
}

export interface WatchHandle {
  close(): void;
  /**
   * The revision up to which every event of this watch has been delivered, known at once (in-process stores);
   * absent where only onProgress tells (etcd).
   */
  revision?(): number;
  /** Ask for onProgress at the next commit, whatever it touches (a listener with progressOnDemand that waits for a revision). */
  requestProgress?(): void;
}

export interface Storage {
  get(key: string): Promise<KeyValue | undefined>;
  /**
   * The key's current modRevision (0 when absent), if the store can tell without
   * reading the value: in-process stores can, so a reader holding that revision
   * decoded (the watch cache) need not read the value again. Undefined: read it.
   */
  modRevisionOf?(key: string): number | undefined;
  /**
   * Whether the value stored at this revision is not as a write would store it now (encrypted with a key
   * that is no longer the first, or not at all): an update that changes nothing writes it anyway, as
   * upstream's transformer staleness does (`kubectl replace` re-encrypts Secrets after a key rotation).
   */
  isStale?(key: string, modRevision: number): boolean;
  range(prefix: string, options?: RangeOptions): Promise<RangeResult>;
  create(key: string, value: string): Promise<KeyValue>;
  update(key: string, value: string, expectedModRevision: number): Promise<KeyValue>;
  delete(key: string, expectedModRevision?: number): Promise<DeleteResult>;
  /** Deliver every event under prefix with a revision greater than afterRevision, then live ones. */
  watch(prefix: string, afterRevision: number, listener: WatchListener): WatchHandle;
  currentRevision(): Promise<number>;
  /** Discard history before `revision`; reads and watches at or after it keep working. */
  compact(revision: number): Promise<void>;
  close(): Promise<void>;
}
