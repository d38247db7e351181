/** A small HTTPS client for benchmarks (HTTP/2, JSON in and out) and a closed-loop load runner with latencies. */
import http2 from 'node:http2';
import { performance } from 'node:perf_hooks';

export interface Reply {
  status: number;
  body: string;
}

/**
 * HTTP/2 over TLS, as kubectl and client-go speak to the API server: a few
 * sessions with many concurrent streams each (the cheapest way for one client
 * process to keep 64 requests in flight on a 2-core machine).
 */
/**
 * An HTTP/2 session with client-go's flow-control windows (Go's http2 Transport:
 * 4 MiB per stream, 1 GiB per connection). Node's defaults (64 KiB) would make
 * the client, not the server, the limit: the server would idle waiting for
 * WINDOW_UPDATE frames.
 */
export function connect(base: string, ca: string | undefined): http2.ClientHttp2Session {
  // Without a CA (the reference kube-apiserver's self-signed certificate), the server is not verified.
  const s = http2.connect(base, { ca, rejectUnauthorized: ca !== undefined, settings: { initialWindowSize: 4 << 20 } });
  s.on('error', () => {});
  s.once('connect', () => s.setLocalWindowSize(1 << 30));
  return s;
}

export class BenchClient {
  private readonly sessions: http2.ClientHttp2Session[];
  private next = 0;

  constructor(
    private readonly base: string,
    private readonly token: string,
    private readonly ca: string | undefined,
    connections = 4,
  ) {
    this.sessions = Array.from({ length: Math.max(1, Math.min(connections, 8)) }, () => connect(base, ca));
  }

  /** The next session, connected again if the server closed it (as client-go's transport dials again). */
  private session(): http2.ClientHttp2Session {
    const i = this.next++ % this.sessions.length;
    if (this.sessions[i].closed || this.sessions[i].destroyed) this.sessions[i] = connect(this.base, this.ca);
    return this.sessions[i];
  }

  request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
    return this.requestBytes(method, path, body, headers).then((r) => ({ status: r.status, body: r.body.toString() }));
  }

  /** A request whose answer is kept as bytes (protobuf, or too large to be worth decoding). */
  requestBytes(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer; headers: http2.IncomingHttpHeaders }> {
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const h: http2.OutgoingHttpHeaders = { ':method': method, ':path': path, authorization: `Bearer ${this.token}` };
    for (const [k, v] of Object.entries(headers)) h[k.toLowerCase()] = v;
    if (payload) h['content-type'] ??= 'application/json';
    const session = this.session();
    return new Promise((resolve, reject) => {
      const stream = session.request(h, { endStream: !payload });
      let status = 0;
      let answered: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      stream.on('response', (headers) => {
        status = Number(headers[':status']);
        answered = headers;
      });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolve({ status, body: Buffer.concat(chunks), headers: answered }));
      stream.on('error', reject);
      stream.setTimeout(60_000, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      if (payload) stream.end(payload);
    });
  }

  async expect(method: string, path: string, status: number, body?: unknown, headers?: Record<string, string>): Promise<Reply> {
    const r = await this.request(method, path, body, headers);
    if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${r.body.slice(0, 300)}`);
    return r;
  }

  close(): void {
    for (const s of this.sessions) s.close();
  }
}

export interface LoadResult {
  count: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** The server's CPU time (all threads) per operation, when measured. */
  serverCpuUs?: number;
  /** Answers of another status than expected (when the run counts them), and the first such status. */
  failures?: number;
  failedStatus?: number;
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

export const fmt = (r: LoadResult) =>
  `${r.perSecond.toFixed(0)}/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms` +
  (r.serverCpuUs === undefined ? '' : `  server CPU ${r.serverCpuUs.toFixed(0)} µs/op`) +
  (r.failures ? `  ${r.failures} failed (e.g. ${r.failedStatus})` : '');

/** Run a load and note the server's CPU time per operation. */
export async function withServerCpu(server: { cpuMs(): number }, run: () => Promise<LoadResult>): Promise<LoadResult> {
  const before = server.cpuMs();
  const r = await run();
  return { ...r, serverCpuUs: ((server.cpuMs() - before) * 1000) / r.count };
}
