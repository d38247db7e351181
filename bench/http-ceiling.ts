/**
 * The ceiling the API figures live under: a bare Node.js HTTP/2 + TLS server that
 * echoes 1 KB JSON bodies, driven by the same client and load as bench/api.ts
 * on the same machine. What kapi reaches is to be read against this.
 *
 *   node dist/bench/http-ceiling.js [--quick]
 */
import { spawn } from 'node:child_process';
import http2 from 'node:http2';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureServingCertificates } from '../src/server/certs.js';
import { BenchClient, fmt, line, load } from './lib/client.js';

const quick = process.argv.includes('--quick');

if (process.argv[2] === 'server') {
  const tls = JSON.parse(process.env.KAPI_BENCH_TLS!) as { certPem: string; keyPem: string };
  const server = http2.createSecureServer({ cert: tls.certPem, key: tls.keyPem, allowHTTP1: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = chunks.length ? Buffer.concat(chunks) : Buffer.from('{"kind":"Thing"}');
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port));
} else {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-bench-h2-'));
  const tls = await ensureServingCertificates(dir, { hosts: ['127.0.0.1'] });
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'server'], { env: { ...process.env, KAPI_BENCH_TLS: JSON.stringify(tls) }, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((r) => child.stdout!.once('data', (d: Buffer) => r(Number(String(d).trim()))));
    const c = new BenchClient(`https://127.0.0.1:${port}`, 'token', tls.caCertPem, 4);
    const body = { apiVersion: 'bench.example.com/v1', kind: 'Thing', metadata: { name: 'x' }, spec: { pad: 'x'.repeat(700) } };
    const n = quick ? 5000 : 20_000;
    line('bare HTTP/2 echo server, POST 1 KB, 64 clients', fmt(await load(64, n, async () => void (await c.expect('POST', '/x', 201, body)))));
    line('bare HTTP/2 echo server, GET, 64 clients', fmt(await load(64, n, async () => void (await c.expect('GET', '/x', 200)))));
    c.close();
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
