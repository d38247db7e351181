/**
 * The sqlite log's writer thread. Commits (`synchronous=FULL`: each one waits
 * for fsync) and compactions run here, so the server's event loop keeps
 * serving requests while the disk syncs. Requests are handled one at a time,
 * in the order they arrive; each gets a reply with its id. Reply 0 says the
 * thread is up.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { LogRow } from '../log.js';
import { prepareWrites } from './sqlite-writes.js';

export type WriterRequest =
  | { id: number; op: 'append'; rows: LogRow[] }
  | { id: number; op: 'compact'; from: number; to: number }
  | { id: number; op: 'close' };

export interface WriterReply {
  id: number;
  /** Absent on success. */
  error?: { message: string; code?: string };
}

export interface WriterData {
  path: string;
}

const { path } = workerData as WriterData;
// The main thread has created the schema and holds the store's lock; once this
// thread is up, its connection is the only writer. Readers never block it in WAL mode.
const db = new Database(path, { timeout: 5000 });
db.pragma('synchronous = FULL');

const writes = prepareWrites(db);

parentPort!.postMessage({ id: 0 } satisfies WriterReply);
parentPort!.on('message', (req: WriterRequest) => {
  const reply: WriterReply = { id: req.id };
  try {
    if (req.op === 'append') writes.append(req.rows);
    else if (req.op === 'compact') writes.compact(req.from, req.to);
    else db.close();
  } catch (e) {
    const err = e as Error & { code?: string };
    reply.error = { message: err.message, code: err.code };
  }
  parentPort!.postMessage(reply);
  if (req.op === 'close') parentPort!.close();
});
