/** The statements that change the sqlite log, prepared on a connection: used by the writer thread, and by the main thread until that thread is up. */
import type Database from 'better-sqlite3';
import type { LogRow } from '../log.js';

export interface LogWrites {
  append(rows: LogRow[]): void;
  /** Drop history in (from, to] that the state at `to` does not need, and record `to`. */
  compact(from: number, to: number): void;
}

export function prepareWrites(db: Database.Database): LogWrites {
  const insert = db.prepare(
    'INSERT INTO log (revision, key, created, deleted, create_revision, prev_revision, value) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const dropSuperseded = db.prepare(
    'DELETE FROM log WHERE revision IN (SELECT prev_revision FROM log WHERE revision > ? AND revision <= ? AND prev_revision > 0)',
  );
  const dropTombstones = db.prepare('DELETE FROM log WHERE revision > ? AND revision <= ? AND deleted = 1');
  const saveCompactRevision = db.prepare("INSERT OR REPLACE INTO meta (name, value) VALUES ('compact_revision', ?)");
  return {
    append: db.transaction((rows: LogRow[]) => {
      for (const r of rows) insert.run(r.revision, r.key, r.created ? 1 : 0, r.deleted ? 1 : 0, r.createRevision, r.prevRevision, r.value);
    }),
    compact: db.transaction((from: number, to: number) => {
      // Rows superseded within the window, then tombstones in it: the state at `to` stays whole.
      dropSuperseded.run(from, to);
      dropTombstones.run(from, to);
      saveCompactRevision.run(to);
    }),
  };
}
