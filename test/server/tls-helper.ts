/**
 * Helpers for the TLS tests: temporary data dirs, a tiny HTTPS server on an
 * ephemeral port, and a request that reports how TLS verification went.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type RequestOptions } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const WAIT_MS = 5000;

export function tempDir(prefix: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Rejects when promise has not settled within ms. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export interface TestServer {
  port: number;
  /** Headers of every request served, in order. */
  requests: { url: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const defaultHandler: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('ok');
};

/** An HTTPS server with the given certificate, listening on host (127.0.0.1 by default) port 0. */
export async function startHttpsServer(
  tls: { certPem: string; keyPem: string },
  handler: Handler = defaultHandler,
  host = '127.0.0.1',
): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
    handler(req, res);
  });
  await withTimeout(
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    }),
    WAIT_MS,
    `listen on ${host}`,
  );
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      withTimeout(
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
        WAIT_MS,
        'close server',
      ),
  };
}

export type FetchResult = { ok: true; status: number; body: string } | { ok: false; code: string; message: string };

/** GET path over HTTPS; TLS and connection failures come back as { ok: false, code }, not as rejections. */
export function httpsGet(options: RequestOptions & { port: number }): Promise<FetchResult> {
  const attempt = new Promise<FetchResult>((resolve) => {
    const req = request({ host: '127.0.0.1', path: '/', method: 'GET', agent: false, ...options }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ ok: true, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ ok: false, code: err.code ?? '', message: err.message }));
    });
    req.setTimeout(WAIT_MS, () => req.destroy(new Error('request timed out')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ ok: false, code: err.code ?? '', message: err.message }));
    req.end();
  });
  return withTimeout(attempt, WAIT_MS * 2, `GET https://${options.servername ?? options.host ?? '127.0.0.1'}:${options.port}`);
}
