/**
 * A manager's HTTP endpoints, as controller-runtime serves them: health probes (`/healthz` and `/readyz`, each
 * with its checks, pkg/healthz's text and codes) on one address, Prometheus metrics (`/metrics`) on another.
 * Plain HTTP, as controller-runtime's defaults: a kubelet probes them, Prometheus scrapes them, from inside the
 * Pod's network.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Registry } from 'prom-client';

/** A health check: throws (or rejects) when unhealthy; the request is the probe's. */
export type HealthChecker = (req: IncomingMessage) => void | Promise<void>;

/** Always healthy (controller-runtime's healthz.Ping). */
export const ping: HealthChecker = () => {};

/** At most this many checks are named in `exclude` (a query is the prober's, bounded all the same). */
const MAX_EXCLUDES = 100;

/**
 * controller-runtime's manager refuses names it could not serve as a path (`/healthz/<name>`); so does this.
 */
export function checkName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(name)) throw new Error(`invalid health check name ${JSON.stringify(name)}: letters, digits, '.', '_' and '-', at most 63`);
  return name;
}

const EXCLUDED = Symbol('excluded');

async function passes(check: HealthChecker, req: IncomingMessage): Promise<unknown> {
  try {
    await check(req);
    return undefined;
  } catch (err) {
    return err ?? new Error('check failed');
  }
}

function text(res: ServerResponse, code: number, body: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** One probe endpoint (`sub` is the path below it: '' for the aggregate, else a check's name), as pkg/healthz's Handler. */
async function serveChecks(checks: ReadonlyMap<string, HealthChecker>, sub: string, req: IncomingMessage, url: URL, res: ServerResponse): Promise<void> {
  if (sub !== '') {
    // An individual check; with none added, the default ping.
    const check = checks.size === 0 && sub === 'ping' ? ping : checks.get(sub);
    if (!check) return text(res, 404, '404 page not found\n');
    const err = await passes(check, req);
    return err === undefined ? text(res, 200, 'ok') : text(res, 500, `internal server error: ${(err as Error)?.message ?? String(err)}\n`);
  }
  const excluded = new Set(url.searchParams.getAll('exclude').slice(0, MAX_EXCLUDES));
  const parts: Array<{ name: string; healthy: boolean; excluded: boolean }> = [];
  const names = [...checks.keys()];
  const results = await Promise.all(names.map((name) => (excluded.delete(name) ? EXCLUDED : passes(checks.get(name)!, req))));
  names.forEach((name, i) => parts.push({ name, healthy: results[i] === undefined || results[i] === EXCLUDED, excluded: results[i] === EXCLUDED }));
  if (checks.size === 0) parts.push({ name: 'ping', healthy: true, excluded: false });
  parts.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const failed = parts.some((p) => !p.healthy);
  if (!failed && !url.searchParams.has('verbose')) return text(res, 200, 'ok');
  let body = '';
  for (const p of parts) body += p.excluded ? `[+]${p.name} excluded: ok\n` : p.healthy ? `[+]${p.name} ok\n` : `[-]${p.name} failed: reason withheld\n`;
  if (excluded.size > 0) body += `warn: some health checks cannot be excluded: no matches for ${[...excluded].sort().map((n) => JSON.stringify(n)).join(',')}\n`;
  body += failed ? 'healthz check failed\n' : 'healthz check passed\n';
  text(res, failed ? 500 : 200, body);
}

/** `host:port` as Go's net.Listen reads it (`:8080` is every interface); '0' or '' means off. */
export function parseBindAddress(address: string): { host: string | undefined; port: number } | undefined {
  if (address === '' || address === '0') return undefined;
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d{1,5})$/.exec(address);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`invalid bind address ${JSON.stringify(address)}: want host:port, :port or 0 (off)`);
  const host = m[1] ?? m[2];
  return { host: host === '' ? undefined : host, port };
}

/** An HTTP server of the manager's, listening on `address`. */
export async function listen(address: { host: string | undefined; port: number }, handle: (req: IncomingMessage, url: URL, res: ServerResponse) => Promise<void>): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://probe');
    if (req.method !== 'GET' && req.method !== 'HEAD') return text(res, 405, 'method not allowed\n');
    handle(req, url, res).catch((err: unknown) => {
      if (!res.headersSent) text(res, 500, `internal server error: ${(err as Error)?.message ?? String(err)}\n`);
      else res.destroy();
    });
  });
  // A prober's connection that sends nothing is closed as Go's server closes it (no ReadHeaderTimeout there: this bounds it).
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await listening(server, address.port, address.host);
  return server;
}

/** Listens on the port (and host, or every interface); rejects with the error of a port in use. */
export function listening(server: NetServer, port: number, host: string | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The probe server's handler: `/healthz[/<name>]` and `/readyz[/<name>]` (a trailing slash as none, as path.Clean does). */
export function probeHandler(healthz: ReadonlyMap<string, HealthChecker>, readyz: ReadonlyMap<string, HealthChecker>) {
  return async (req: IncomingMessage, url: URL, res: ServerResponse): Promise<void> => {
    const m = /^\/(healthz|readyz)(?:\/([^/]*))?\/?$/.exec(url.pathname);
    if (!m) return text(res, 404, '404 page not found\n');
    await serveChecks(m[1] === 'healthz' ? healthz : readyz, m[2] ?? '', req, url, res);
  };
}

/** The metrics server's handler: the registry's text at `/metrics`. */
export function metricsHandler(registry: Registry) {
  return async (_req: IncomingMessage, url: URL, res: ServerResponse): Promise<void> => {
    if (url.pathname !== '/metrics') return text(res, 404, '404 page not found\n');
    const body = await registry.metrics();
    res.writeHead(200, { 'Content-Type': registry.contentType, 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };
}

/** The address a server listens on, as `host:port`. */
export function addressOf(server: Server): string {
  const a = server.address() as AddressInfo;
  return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}
