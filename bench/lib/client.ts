/** A small HTTPS client for benchmarks: keep-alive connections, JSON in and out, latency recording. */
import https from 'node:https';
import { performance } from 'node:perf_hooks';

export interface Reply {
  status: number;
  body: string;
}

export class BenchClient {
  private readonly agent: https.Agent;

  constructor(
    private readonly base: string,
    private readonly token: string,
    ca: string,
    connections = 64,
  ) {
    this.agent = new https.Agent({ ca, keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  }

  request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
    const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const h: Record<string, string> = { Authorization: `Bearer ${this.token}`, ...headers };
    if (payload) {
      h['Content-Type'] ??= 'application/json';
      h['Content-Length'] = String(payload.length);
    }
    return new Promise((resolve, reject) => {
      const req = https.request(new URL(path, this.base), { method, agent: this.agent, headers: h }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      });
      req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  async expect(method: string, path: string, status: number, body?: unknown, headers?: Record<string, string>): Promise<Reply> {
    const r = await this.request(method, path, body, headers);
    if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${r.body.slice(0, 300)}`);
    return r;
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface LoadResult {
  count: number;
  perSecond: number;
  p50: number;
  p99: number;
}

/** Run `op(i)` from `clients` concurrent loops until `total` operations are done. */
export async function load(clients: number, total: number, op: (i: number) => Promise<void>): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now();
        await op(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { count: total, perSecond: total / seconds, p50: pct(latencies, 0.5), p99: pct(latencies, 0.99) };
}

export function pct(sorted: number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
}

export function line(name: string, figure: string): void {
  console.log(`${name.padEnd(58)} ${figure}`);
}

export const fmt = (r: LoadResult) => `${r.perSecond.toFixed(0)}/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms`;
