/**
 * Startup benchmark: `kapi serve` with an empty data dir, from process spawn to
 * the first successful /readyz, and again on the now-populated data dir.
 * Prints one line per figure (median of several runs).
 *
 *   node dist/bench/startup.js [--quick]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const bin = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'kapi.js');
const quick = process.argv.includes('--quick');

function readyz(port: number): Promise<boolean> {
  return new Promise((res) => {
    const req = https.get({ host: '127.0.0.1', port, path: '/readyz', rejectUnauthorized: false, timeout: 1000 }, (r) => {
      r.resume();
      res(r.statusCode === 200);
    });
    req.on('error', () => res(false));
  });
}

async function startOnce(dataDir: string): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, 'serve', '--data-dir', dataDir, '--secure-port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((res, rej) => {
      let out = '';
      const timer = setTimeout(() => rej(new Error(`no serving line: ${out}`)), 10_000);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /serving on https:\/\/[^:]+:(\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          res(Number(m[1]));
        }
      });
    });
    while (!(await readyz(port))) {
      if (performance.now() - t0 > 10_000) throw new Error('never ready');
    }
    return performance.now() - t0;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const runs = quick ? 3 : 7;
  const empty: number[] = [];
  const again: number[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'kapi-startup-'));
    try {
      empty.push(await startOnce(join(dir, 'data')));
      again.push(await startOnce(join(dir, 'data')));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(`${'start -> ready, empty data dir (ms, median)'.padEnd(52)} ${median(empty).toFixed(0)}`);
  console.log(`${'start -> ready, existing data dir (ms, median)'.padEnd(52)} ${median(again).toFixed(0)}`);
}

await main();
