/**
 * An in-memory DurableLog for unit tests and throwaway servers: the same
 * row-per-write model as the sqlite log, kept in an array. Nothing survives
 * the process.
 */
import { inRange } from '../keys.js';
import { rowToEvent, rowToKeyValue, type DurableLog, type LoadedLog, type LogRow } from '../log.js';
import type { KeyValue, WatchEvent } from '../types.js';

export class MemoryLog implements DurableLog {
  /** Rows in revision order. */
  private rows: LogRow[] = [];
  private readonly byRevision = new Map<number, LogRow>();
  private compactRevision = 0;

  load(): LoadedLog {
    const latest = new Map<string, LogRow>();
    for (const row of this.rows) latest.set(row.key, row);
    const live = [...latest.values()].filter((r) => !r.deleted).map(rowToKeyValue);
    const last = this.rows.length > 0 ? this.rows[this.rows.length - 1].revision : 0;
    return { revision: Math.max(last, this.compactRevision), compactRevision: this.compactRevision, live };
  }

  append(rows: LogRow[]): void {
    for (const row of rows) {
      this.rows.push(row);
      this.byRevision.set(row.revision, row);
    }
  }

  rangeAt(start: string, end: string, revision: number, limit: number): { kvs: KeyValue[]; count: number } {
    const latest = new Map<string, LogRow>();
    for (const row of this.rows) {
      if (row.revision > revision) break;
      if (inRange(row.key, start, end)) latest.set(row.key, row);
    }
    const live = [...latest.values()].filter((r) => !r.deleted).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const kvs = (limit > 0 ? live.slice(0, limit) : live).map(rowToKeyValue);
    return { kvs, count: live.length };
  }

  eventsAfter(start: string, end: string, afterRevision: number, upToRevision: number): WatchEvent[] {
    const events: WatchEvent[] = [];
    for (let i = this.firstAfter(afterRevision); i < this.rows.length; i++) {
      const row = this.rows[i];
      if (row.revision > upToRevision) break;
      if (inRange(row.key, start, end)) events.push(rowToEvent(row, this.byRevision.get(row.prevRevision)));
    }
    return events;
  }

  compact(fromRevision: number, toRevision: number): void {
    const drop = new Set<number>();
    for (const row of this.rows) {
      if (row.revision <= fromRevision) continue;
      if (row.revision > toRevision) break;
      if (row.prevRevision > 0) drop.add(row.prevRevision);
      if (row.deleted) drop.add(row.revision);
    }
    this.rows = this.rows.filter((r) => !drop.has(r.revision));
    for (const rev of drop) this.byRevision.delete(rev);
    this.compactRevision = toRevision;
  }

  close(): void {}

  private firstAfter(revision: number): number {
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.rows[mid].revision <= revision) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
