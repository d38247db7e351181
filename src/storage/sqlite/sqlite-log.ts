/**
 * The embedded store's DurableLog: one SQLite file in WAL mode with
 * `synchronous=FULL`, so a committed append has been fsynced.
 *
 * Table `log` holds one row per write, keyed by revision (kine's layout without
 * `old_value`: a watch event's previous value is one primary-key lookup away via
 * `prev_revision`). Table `meta` holds the compact revision. The file is opened
 * in exclusive locking mode: a second kapi on the same data dir is refused
 * instead of corrupting the in-memory index of the first.
 */
import Database from 'better-sqlite3';
import { StorageFormatError, StorageUnavailableError } from '../errors.js';
import { rowToEvent, type DurableLog, type LoadedLog, type LogRow } from '../log.js';
import type { KeyValue, WatchEvent } from '../types.js';

/** Bumped whenever the on-disk layout changes; a newer file is refused. */
export const FORMAT_VERSION = 1;

const SCHEMA = `
CREATE TABLE log (
  revision INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision INTEGER NOT NULL,
  value TEXT NOT NULL
);
CREATE INDEX log_key_revision ON log (key, revision);
CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
`;

interface DbRow {
  revision: number;
  key: string;
  created: number;
  deleted: number;
  create_revision: number;
  prev_revision: number;
  value: string;
}

interface EventRow extends DbRow {
  p_revision: number | null;
  p_key: string | null;
  p_deleted: number | null;
  p_create_revision: number | null;
  p_value: string | null;
}

const toLogRow = (r: DbRow): LogRow => ({
  revision: r.revision,
  key: r.key,
  created: r.created === 1,
  deleted: r.deleted === 1,
  createRevision: r.create_revision,
  prevRevision: r.prev_revision,
  value: r.value,
});

export class SqliteLog implements DurableLog {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly appendTx: (rows: LogRow[]) => void;

  constructor(readonly path: string) {
    let db: Database.Database | undefined;
    try {
      db = new Database(path, { timeout: 0 });
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      this.migrate(db);
    } catch (e) {
      db?.close(); // releases the lock a failed open may have taken
      throw this.openError(e as Error & { code?: string });
    }
    this.db = db;
    this.insert = this.db.prepare(
      'INSERT INTO log (revision, key, created, deleted, create_revision, prev_revision, value) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.appendTx = this.db.transaction((rows: LogRow[]) => {
      for (const r of rows) {
        this.insert.run(r.revision, r.key, r.created ? 1 : 0, r.deleted ? 1 : 0, r.createRevision, r.prevRevision, r.value);
      }
    });
  }

  load(): LoadedLog {
    const max = this.db.prepare('SELECT MAX(revision) AS r FROM log').get() as { r: number | null };
    const compactRevision = this.compactRevision();
    const rows = this.db
      .prepare(
        `SELECT l.* FROM log l JOIN (SELECT MAX(revision) AS r FROM log GROUP BY key) m ON l.revision = m.r
         WHERE l.deleted = 0`,
      )
      .all() as DbRow[];
    const live = rows.map((r) => ({ key: r.key, value: r.value, createRevision: r.create_revision, modRevision: r.revision }));
    return { revision: Math.max(max.r ?? 0, compactRevision), compactRevision, live };
  }

  append(rows: LogRow[]): void {
    this.appendTx(rows);
  }

  rangeAt(start: string, end: string, revision: number, limit: number): { kvs: KeyValue[]; count: number } {
    const upper = end === '' ? '' : 'AND key < @end';
    const rows = this.db
      .prepare(
        `SELECT l.* FROM log l
         JOIN (SELECT MAX(revision) AS r FROM log WHERE key >= @start ${upper} AND revision <= @revision GROUP BY key) m
           ON l.revision = m.r
         WHERE l.deleted = 0 ORDER BY l.key`,
      )
      .all(end === '' ? { start, revision } : { start, end, revision }) as DbRow[];
    const kept = limit > 0 ? rows.slice(0, limit) : rows;
    return {
      kvs: kept.map((r) => ({ key: r.key, value: r.value, createRevision: r.create_revision, modRevision: r.revision })),
      count: rows.length,
    };
  }

  eventsAfter(start: string, end: string, afterRevision: number): WatchEvent[] {
    const upper = end === '' ? '' : 'AND l.key < @end';
    const rows = this.db
      .prepare(
        `SELECT l.*, p.revision AS p_revision, p.key AS p_key, p.deleted AS p_deleted,
                p.create_revision AS p_create_revision, p.value AS p_value
         FROM log l LEFT JOIN log p ON p.revision = l.prev_revision
         WHERE l.revision > @after AND l.key >= @start ${upper} ORDER BY l.revision`,
      )
      .all(end === '' ? { start, after: afterRevision } : { start, end, after: afterRevision }) as EventRow[];
    return rows.map((r) => {
      const prev =
        r.p_revision === null
          ? undefined
          : toLogRow({
              revision: r.p_revision,
              key: r.p_key!,
              created: 0,
              deleted: r.p_deleted!,
              create_revision: r.p_create_revision!,
              prev_revision: 0,
              value: r.p_value!,
            });
      return rowToEvent(toLogRow(r), prev);
    });
  }

  compact(fromRevision: number, toRevision: number): void {
    this.db.transaction(() => {
      // Rows superseded within the window, then tombstones in it: the state at toRevision stays whole.
      this.db
        .prepare('DELETE FROM log WHERE revision IN (SELECT prev_revision FROM log WHERE revision > ? AND revision <= ? AND prev_revision > 0)')
        .run(fromRevision, toRevision);
      this.db.prepare('DELETE FROM log WHERE revision > ? AND revision <= ? AND deleted = 1').run(fromRevision, toRevision);
      this.db.prepare("INSERT OR REPLACE INTO meta (name, value) VALUES ('compact_revision', ?)").run(toRevision);
    })();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private compactRevision(): number {
    const row = this.db.prepare("SELECT value FROM meta WHERE name = 'compact_revision'").get() as { value: number } | undefined;
    return row?.value ?? 0;
  }

  private migrate(db: Database.Database): void {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > FORMAT_VERSION) {
      throw new StorageFormatError(
        `${this.path} was written by a newer kapi (storage format ${version}; this kapi reads up to ${FORMAT_VERSION})`,
      );
    }
    if (version === 0) {
      const tables = db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number };
      if (tables.n > 0) throw new StorageFormatError(`${this.path} is a SQLite database, but not a kapi store`);
      db.transaction(() => {
        db.exec(SCHEMA);
        db.pragma(`user_version = ${FORMAT_VERSION}`);
      })();
    }
    // Take the exclusive lock now, so a second process fails at start rather than later.
    db.exec('BEGIN IMMEDIATE; COMMIT');
  }

  private openError(e: Error & { code?: string }): Error {
    if (e instanceof StorageFormatError) return e;
    if (e.code === 'SQLITE_BUSY' || e.code === 'SQLITE_LOCKED') {
      return new StorageUnavailableError(`${this.path} is in use by another process (is another kapi running on this data dir?)`);
    }
    if (e.code === 'SQLITE_NOTADB' || e.code === 'SQLITE_CORRUPT') {
      return new StorageFormatError(`${this.path} is not a usable kapi store: ${e.message}`);
    }
    return new StorageUnavailableError(`cannot open ${this.path}: ${e.message}`);
  }
}
