/**
 * Several processes on one embedded store (docs/cores.md): a prototype of the shared log that would let kapi
 * processes serve from one SQLite file, measured on this machine. Each writer process appends rows to the same
 * `log` table as kapi's (`src/storage/sqlite/sqlite-log.ts`), each write a compare-and-swap on the key's last
 * revision inside `BEGIN IMMEDIATE`, its revision the log's last plus one; every process tails the table in
 * revision order into its own memory, as a watch cache would. A follower process only tails.
 *
 * Prints, for 1, 2 and 4 writer processes: durable writes/s in all, CAS conflicts (10% of the writes go to ten
 * keys every writer shares), revisions seen out of order or missed by any tailer (must be 0: resourceVersion
 * order and watch consistency), and the delay from a write to the follower having applied it. Then the other way
 * to more cores, worker threads: a message's round trip to a worker, beside the work a request would hand it
 * (decoding and encoding a 1 KB object).
 *
 *   node dist/bench/cores.js [--quick]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { SCHEMA } from '../src/storage/sqlite/sqlite-log.js';
import { line, pct } from './lib/client.js';


/** A wall clock that two processes on one machine agree on, in milliseconds with fractions. */
const now = () => performance.timeOrigin + performance.now();

interface ChildReport {
  writes: number;
  conflicts: number;
  /** Revisions applied out of order or skipped. */
  gaps: number;
  /** Commit-to-applied delays of other processes' rows (ms), at most 20,000 kept. */
  delays: number[];
  applied: number;
  /** How long the writer wrote (ms). */
  elapsedMs: number;
}

function open(path: string): Database.Database {
  const db = new Database(path, { timeout: 10_000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  return db;
}

/** One process: writes for `seconds` (a writer) or tails until told to stop (the follower), then reports. */
async function child(path: string, id: number, seconds: number, writes: boolean): Promise<void> {
  const db = open(path);
  const tail = db.prepare<[number], { revision: number; key: string; value: string }>('SELECT revision, key, value FROM log WHERE revision > ? ORDER BY revision LIMIT 1000');
  const lastOf = db.prepare<[string], number>('SELECT revision FROM log WHERE key = ? ORDER BY revision DESC LIMIT 1').pluck();
  const maxRevision = db.prepare<[], number | null>('SELECT MAX(revision) FROM log').pluck();
  const insert = db.prepare('INSERT INTO log (revision, key, created, deleted, create_revision, prev_revision, value) VALUES (?, ?, ?, 0, ?, ?, ?)');
  // The compare-and-swap: the key's last row must be the one this process last saw, else nothing is written.
  const write = db.transaction((key: string, expected: number, value: string): number => {
    if ((lastOf.get(key) ?? 0) !== expected) return -1;
    const revision = (maxRevision.get() ?? 0) + 1;
    insert.run(revision, key, expected === 0 ? 1 : 0, revision, expected, value);
    return revision;
  });
  const known = new Map<string, number>();
  const report: ChildReport = { writes: 0, conflicts: 0, gaps: 0, delays: [], applied: 0, elapsedMs: 0 };
  let applied = maxRevision.get() ?? 0;
  const catchUp = () => {
    for (let rows = tail.all(applied); rows.length > 0; rows = tail.all(applied)) {
      for (const row of rows) {
        if (row.revision !== applied + 1) report.gaps++;
        applied = row.revision;
        known.set(row.key, row.revision);
        report.applied++;
        const [writer, at] = row.value.split(' ', 2);
        if (Number(writer) !== id && report.delays.length < 20_000) report.delays.push(now() - Number(at));
      }
    }
  };
  if (writes) {
    const started = performance.now();
    const deadline = started + seconds * 1000;
    for (let i = 0; performance.now() < deadline; i++) {
      catchUp();
      const key = i % 10 === 0 ? `/registry/shared/k${i % 100}` : `/registry/p${id}/k${i % 1000}`;
      const revision = write.immediate(key, known.get(key) ?? 0, `${id} ${now()} ${'x'.repeat(800)}`);
      if (revision < 0) report.conflicts++;
      else report.writes++;
      // Another process may have committed between this one's last tail and its write: its rows come first.
      if (i % 64 === 0) await new Promise((r) => setImmediate(r));
    }
    report.elapsedMs = performance.now() - started;
    catchUp();
  } else {
    // The follower: tails every millisecond until its parent closes stdin.
    let stop = false;
    process.stdin.on('end', () => (stop = true)).resume();
    while (!stop) {
      catchUp();
      await new Promise((r) => setTimeout(r, 1));
    }
    catchUp();
  }
  db.close();
  process.stdout.write(JSON.stringify(report));
}

function run(args: string[], stdin: 'pipe' | 'ignore'): { done: Promise<ChildReport>; stdin: NodeJS.WritableStream | null } {
  const p = spawn(process.execPath, [fileURLToPath(import.meta.url), 'child', ...args], { stdio: [stdin, 'pipe', 'inherit'] });
  let out = '';
  p.stdout!.on('data', (c: Buffer) => (out += c));
  const done = new Promise<ChildReport>((resolve, reject) => {
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as ChildReport) : reject(new Error(`child exited ${code}`))));
  });
  return { done, stdin: p.stdin };
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const seconds = quick ? 1 : 3;
  for (const writers of [1, 2, 4]) {
    const dir = mkdtempSync(join(tmpdir(), 'kapi-cores-'));
    const path = join(dir, 'state.db');
    try {
      open(path).exec(SCHEMA).close();
      const follower = run([path, '0', String(seconds), 'follow'], 'pipe');
      await new Promise((r) => setTimeout(r, 100));
      const reports = await Promise.all(Array.from({ length: writers }, (_, w) => run([path, String(w + 1), String(seconds), 'write'], 'ignore').done));
      follower.stdin?.end();
      const f = await follower.done;
      const total = reports.reduce((n, r) => n + r.writes, 0);
      const rate = reports.reduce((n, r) => n + r.writes / (r.elapsedMs / 1000), 0);
      const conflicts = reports.reduce((n, r) => n + r.conflicts, 0);
      const gaps = [f, ...reports].reduce((n, r) => n + r.gaps, 0);
      const delays = [...f.delays].sort((a, b) => a - b);
      line(
        `shared log, ${writers} writer process${writers > 1 ? 'es' : ''} + 1 follower`,
        `${rate.toFixed(0)} durable writes/s, ${conflicts} CAS conflicts, ${gaps} revisions out of order, follower ${f.applied}/${total} applied, write to follower p50 ${pct(delays, 0.5).toFixed(1)} / p99 ${pct(delays, 0.99).toFixed(1)} ms`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  await workerRoundTrip(quick);
}

/** A 1 KB object's round trip to a worker thread and back, and its JSON decode and encode here, in µs. */
async function workerRoundTrip(quick: boolean): Promise<void> {
  const text = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default', labels: { app: 'a' } }, data: { pad: 'x'.repeat(900) } });
  const worker = new Worker("require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m))", { eval: true });
  const n = quick ? 2_000 : 20_000;
  try {
    const once = (m: unknown) => new Promise((r) => { worker.once('message', r); worker.postMessage(m); });
    for (let i = 0; i < 200; i++) await once(text);
    let t = performance.now();
    for (let i = 0; i < n; i++) await once(text);
    const roundTrip = ((performance.now() - t) / n) * 1000;
    const obj = JSON.parse(text) as unknown;
    t = performance.now();
    for (let i = 0; i < n; i++) await once(obj);
    const objectTrip = ((performance.now() - t) / n) * 1000;
    t = performance.now();
    for (let i = 0; i < n; i++) JSON.stringify(JSON.parse(text));
    const work = ((performance.now() - t) / n) * 1000;
    line('worker thread round trip, 1 KB JSON text / object', `${roundTrip.toFixed(1)} / ${objectTrip.toFixed(1)} µs (its decode + encode here: ${work.toFixed(1)} µs)`);
  } finally {
    await worker.terminate();
  }
}

if (process.argv[2] === 'child') {
  const [, , , path, id, seconds, role] = process.argv;
  await child(path, Number(id), Number(seconds), role === 'write');
} else {
  await main();
}
