/**
 * The embedded store's DurableLog: one SQLite file in WAL mode with
 * `synchronous=FULL`, so a committed append has been fsynced.
 *
 * Table `log` holds one row per write, keyed by revision (kine's layout without
 * `old_value`: a watch event's previous value is one primary-key lookup away via
 * `prev_revision`). Table `meta` holds the compact revision.
 *
 * Writes (appends and compactions) run on a writer thread (`sqlite-writer.ts`)
 * so fsync does not stall the event loop; reads of history run here, on a
 * second connection, which WAL lets read while the writer commits. A lock file
 * beside the store, held in exclusive locking mode, refuses a second kapi on
 * the same data dir instead of letting it corrupt the in-memory index of the first.
 */
import { closeSync, openSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { StorageFormatError, StorageUnavailableError } from '../errors.js';
import { rowToEvent, type DurableLog, type LoadedLog, type LogRow } from '../log.js';
import type { KeyValue, WatchEvent } from '../types.js';
import type { WriterData, WriterReply, WriterRequest } from './sqlite-writer.js';
import { prepareWrites, type LogWrites } from './sqlite-writes.js';

// Beside this module in the compiled tree, and beside the bundle (`npm run bundle` builds both).
const WRITER = new URL('./sqlite-writer.js', import.meta.url);

/** Appends of at most this many rows commit on the main thread when the writer thread is idle. */
const LOCAL_BATCH = 2;

type Pending = { resolve(): void; reject(e: Error): void };
type WriterOp = { op: 'append'; rows: LogRow[] } | { op: 'compact'; from: number; to: number } | { op: 'close' };

/** Bumped whenever the on-disk layout changes; a newer file is refused. */
export const FORMAT_VERSION = 1;

/** The store's tables (bench/cores.ts builds its shared-log prototype on the same layout). */
export const SCHEMA = `
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

/** Values read by one statement (`readValues`). */
const VALUES_PER_READ = 256;

export class SqliteLog implements DurableLog {
  private readonly lock: Database.Database;
  private readonly db: Database.Database;
  private readonly writer: Worker;
  /** Writes run here while the writer thread is not up: before it starts (a start does not wait for it), and after it fails. */
  private readonly localWrites: LogWrites;
  private readonly valueAt: Database.Statement<[number], string>;
  private writerUp = false;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(readonly path: string) {
    this.lock = this.openLock();
    let db: Database.Database | undefined;
    try {
      createPrivate(path);
      db = new Database(path, { timeout: 5000 });
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      this.migrate(db);
    } catch (e) {
      db?.close();
      this.lock.close();
      throw this.openError(e as Error & { code?: string });
    }
    this.db = db;
    this.localWrites = prepareWrites(db);
    this.valueAt = db.prepare<[number], string>('SELECT value FROM log WHERE revision = ?').pluck();
    this.writer = new Worker(WRITER, { workerData: { path } satisfies WriterData });
    this.writer.unref(); // referenced only while a request is outstanding (see send)
    this.writer.on('message', (reply: WriterReply) => this.settle(reply));
    this.writer.on('error', (e) => this.fail(new StorageUnavailableError(`storage writer failed: ${e.message}`)));
    this.writer.on('exit', () => this.fail(new StorageUnavailableError('storage is closed')));
  }

  load(): LoadedLog {
    const max = this.db.prepare('SELECT MAX(revision) AS r FROM log').get() as { r: number | null };
    const compactRevision = this.compactRevision();
    // Without values: the store reads them back when asked (readValue), so a start does not read them all.
    const rows = this.db
      .prepare(
        `SELECT l.key, l.revision, l.create_revision FROM log l JOIN (SELECT MAX(revision) AS r FROM log GROUP BY key) m ON l.revision = m.r
         WHERE l.deleted = 0`,
      )
      .all() as Array<Pick<DbRow, 'key' | 'revision' | 'create_revision'>>;
    const live = rows.map((r) => ({ key: r.key, createRevision: r.create_revision, modRevision: r.revision }));
    return { revision: Math.max(max.r ?? 0, compactRevision), compactRevision, live };
  }

  append(rows: LogRow[]): void | Promise<void> {
    // A lone write commits here: two thread hops would cost more than the fsync
    // blocks. Batches, which form under load, go to the writer thread.
    if (!this.writerUp || (rows.length <= LOCAL_BATCH && this.pending.size === 0)) return this.localWrites.append(rows);
    return this.send({ op: 'append', rows });
  }

  readValue(revision: number): string {
    const value = this.valueAt.get(revision);
    if (value === undefined) throw new StorageUnavailableError(`storage has no row at revision ${revision}`);
    return value;
  }

  readValues(revisions: readonly number[]): string[] {
    const out = new Array<string>(revisions.length);
    const at = new Map<number, number>();
    for (let from = 0; from < revisions.length; from += VALUES_PER_READ) {
      const batch = revisions.slice(from, from + VALUES_PER_READ);
      at.clear();
      for (let i = 0; i < batch.length; i++) at.set(batch[i], from + i);
      // A full batch's statement is prepared once; the last, shorter one each time.
      const statement = batch.length === VALUES_PER_READ ? (this.valuesAt ??= this.valuesStatement(VALUES_PER_READ)) : this.valuesStatement(batch.length);
      const rows = statement.all(...batch) as Array<[number, string]>;
      for (const [revision, value] of rows) out[at.get(revision)!] = value;
      if (rows.length !== batch.length) throw new StorageUnavailableError(`storage has no row at some of revisions ${batch[0]}…`);
    }
    return out;
  }

  private valuesAt: Database.Statement<number[]> | undefined;

  private valuesStatement(n: number): Database.Statement<number[]> {
    return this.db.prepare<number[]>(`SELECT revision, value FROM log WHERE revision IN (${new Array<string>(n).fill('?').join(',')})`).raw();
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

  eventsAfter(start: string, end: string, afterRevision: number, upToRevision: number): WatchEvent[] {
    const upper = end === '' ? '' : 'AND l.key < @end';
    const rows = this.db
      .prepare(
        `SELECT l.*, p.revision AS p_revision, p.key AS p_key, p.deleted AS p_deleted,
                p.create_revision AS p_create_revision, p.value AS p_value
         FROM log l LEFT JOIN log p ON p.revision = l.prev_revision
         WHERE l.revision > @after AND l.revision <= @upTo AND l.key >= @start ${upper} ORDER BY l.revision`,
      )
      .all({ start, after: afterRevision, upTo: upToRevision, ...(end === '' ? {} : { end }) }) as EventRow[];
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

  compact(fromRevision: number, toRevision: number): void | Promise<void> {
    if (!this.writerUp) return this.localWrites.compact(fromRevision, toRevision);
    return this.send({ op: 'compact', from: fromRevision, to: toRevision });
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    if (this.writerUp) await this.send({ op: 'close' }).catch(() => undefined);
    await this.writer.terminate();
    this.db.close();
    this.lock.close();
  }

  private send(req: WriterOp): Promise<void> {
    const id = this.nextId++;
    if (this.pending.size === 0) this.writer.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.writer.postMessage({ id, ...req } as WriterRequest);
    });
  }

  private settle(reply: WriterReply): void {
    if (reply.id === 0) {
      this.writerUp = true;
      return;
    }
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.writer.unref();
    if (reply.error) p.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    else p.resolve();
  }

  /** The writer thread is gone: what it had in hand fails, and later writes commit on this connection. */
  private fail(err: Error): void {
    this.writerUp = false;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** The store's lock: a file beside it, locked exclusively by an open write for as long as this process holds it. */
  private openLock(): Database.Database {
    let lock: Database.Database | undefined;
    try {
      createPrivate(`${this.path}.lock`);
      lock = new Database(`${this.path}.lock`, { timeout: 0 });
      lock.pragma('locking_mode = EXCLUSIVE');
      lock.pragma('user_version = 1'); // a write: takes the exclusive lock, held until close
      return lock;
    } catch (e) {
      lock?.close();
      throw this.openError(e as Error & { code?: string });
    }
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

/**
 * Create a database file readable by its owner only (0600) where it does not
 * exist yet; SQLite gives its -wal, -shm and -journal files the database file's
 * mode. An existing file keeps its mode (kapi warns at start when it is wider).
 */
function createPrivate(path: string): void {
  closeSync(openSync(path, 'a', 0o600));
}

