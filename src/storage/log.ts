/**
 * The durable half of a log-structured store (kine's model): every write is an
 * appended row carrying its revision, tombstones mark deletes, and a row points
 * at the row it supersedes. `LogStore` keeps the live keys in memory and asks a
 * `DurableLog` only to persist rows and to answer questions about history.
 */
import type { KeyValue, WatchEvent } from './types.js';

export interface LogRow {
  revision: number;
  key: string;
  created: boolean;
  deleted: boolean;
  createRevision: number;
  /** The revision of the row this one supersedes (0 when the key was absent). */
  prevRevision: number;
  /** '' for tombstones. */
  value: string;
}

export interface LoadedLog {
  revision: number;
  compactRevision: number;
  /** Every live key; a log that reads values back (`readValue`) leaves their values out (a restart reads none). */
  live: Array<Omit<KeyValue, 'value'> & { value?: string }>;
}

export interface DurableLog {
  /** Read what is stored: the current revision, the compact revision and every live key. */
  load(): LoadedLog;
  /** Persist rows atomically; when this returns (or its promise resolves) they survive a crash. Calls do not overlap. */
  append(rows: LogRow[]): void | Promise<void>;
  /** Live keys in [start, end) as of revision, from startKey on, sorted, at most limit (0: all). */
  rangeAt(start: string, end: string, revision: number, limit: number): { kvs: KeyValue[]; count: number };
  /**
   * Every event in [start, end) with a revision in (afterRevision, upToRevision], in order, with
   * previous values. (A log that commits on another thread may already hold rows past the store's revision.)
   */
  eventsAfter(start: string, end: string, afterRevision: number, upToRevision: number): WatchEvent[];
  /**
   * The value of the row written at `revision`, when the log can read one back quickly. A log
   * that can spares the store from keeping every live value in memory as well.
   */
  readValue?(revision: number): string;
  /** The values of the rows written at these revisions, in their order (many at a time: a list of a large prefix). */
  readValues?(revisions: readonly number[]): string[];
  /** Drop history in (fromRevision, toRevision] that the state at toRevision does not need. */
  compact(fromRevision: number, toRevision: number): void | Promise<void>;
  close(): void | Promise<void>;
}

/** The watch event a row stands for, given the row it superseded. */
export function rowToEvent(row: LogRow, prev: LogRow | undefined): WatchEvent {
  const prevKv = prev && !prev.deleted ? rowToKeyValue(prev) : undefined;
  if (row.deleted) {
    return {
      type: 'DELETE',
      kv: { key: row.key, value: '', createRevision: row.createRevision, modRevision: row.revision },
      prevKv,
    };
  }
  return { type: 'PUT', kv: rowToKeyValue(row), prevKv };
}

export function rowToKeyValue(row: LogRow): KeyValue {
  return { key: row.key, value: row.value, createRevision: row.createRevision, modRevision: row.revision };
}
