/**
 * Load from h2load (nghttp2's HTTP/2 benchmarking client, Debian package
 * nghttp2-client), when it is installed. On this 2-core machine the client
 * shares the CPU with the server: Node's HTTP/2 client spends about 140 µs of
 * CPU per request, h2load a fraction of that, so its figures are closer to
 * what the server itself can do.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pct, type LoadResult } from './client.js';

export function h2loadInstalled(): boolean {
  try {
    execFileSync('h2load', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface H2loadRun {
  /** Full URLs, used in turn. */
  urls: string[];
  requests: number;
  token: string;
  method?: string;
  body?: unknown;
  contentType?: string;
  accept?: string;
  /** Every response must have this status. */
  status: number;
  /** Count the answers of another status (as `failures`) instead of failing the run: for the reference server. */
  countFailures?: boolean;
  /** Connections, the 64 streams shared among them (default 1: see below). */
  connections?: number;
}

/**
 * 64 concurrent requests on one HTTP/2 connection, as 64 goroutines sharing one
 * client-go client send them (Go multiplexes all requests to a host on one
 * connection); closed loop, latency percentiles from h2load's per-request log.
 * (With several connections h2load would walk the URL list from its start on
 * each, so they would write the same objects at the same moments.)
 */
export async function h2load(run: H2loadRun): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-h2load-'));
  try {
    const c = run.connections ?? 1;
    const args = ['-c', String(c), '-m', String(Math.max(1, Math.floor(64 / c))), '-n', String(run.requests), '-H', `authorization: Bearer ${run.token}`];
    if (run.body !== undefined) {
      writeFileSync(join(dir, 'body'), typeof run.body === 'string' || Buffer.isBuffer(run.body) ? run.body : JSON.stringify(run.body));
      args.push('-d', join(dir, 'body'), '-H', `content-type: ${run.contentType ?? 'application/json'}`);
    }
    if (run.method) args.push('-H', `:method: ${run.method}`);
    if (run.accept) args.push('-H', `accept: ${run.accept}`);
    writeFileSync(join(dir, 'urls'), run.urls.join('\n') + '\n');
    const rows = await one([...args, '-i', join(dir, 'urls'), '--log-file', join(dir, 'log')], join(dir, 'log'));
    const wrong = rows.filter((r) => r[1] !== run.status);
    if (rows.length !== run.requests || (wrong.length > 0 && !run.countFailures)) {
      throw new Error(`h2load: ${rows.length} of ${run.requests} requests logged, ${wrong.length} without status ${run.status} (e.g. ${wrong[0]?.[1]})`);
    }
    let start = Infinity;
    let end = 0;
    for (const [at, , took] of rows) {
      start = Math.min(start, at);
      end = Math.max(end, at + took);
    }
    const latencies = rows.map((r) => r[2] / 1000).sort((a, b) => a - b);
    return { count: rows.length, perSecond: (rows.length * 1e6) / (end - start), p50: pct(latencies, 0.5), p99: pct(latencies, 0.99), failures: wrong.length, failedStatus: wrong[0]?.[1] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One h2load run; its log's rows: start time (µs since the epoch), status, duration (µs). */
async function one(args: string[], log: string): Promise<number[][]> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn('h2load', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    const timer = setTimeout(() => child.kill(), 300_000);
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`h2load exited with ${code}: ${text}`));
    });
  });
  return readFileSync(log, 'utf8').trim().split('\n').map((l) => l.split('\t').map(Number));
}
