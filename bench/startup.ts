/**
 * Startup benchmark: `kapi serve` with an empty data dir, from process spawn to
 * the first successful /readyz, and again on the now-populated data dir.
 * Prints one line per figure (median of several runs). The first start after a
 * build has no code cache for the bundle (bin/kapi.js): it is measured once, and
 * kept running until it has written one; the other starts use it.
 *
 *   node dist/bench/startup.js [--quick]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const bin = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'kapi.js');
const dist = resolve(dirname(bin), '..', 'dist');
const codeCaches = () => readdirSync(dist).filter((f) => f.endsWith('.v8cache'));
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

/** Spawn to the first 200 of /readyz (ms); with `until`, the server runs on until it says so (10 s at most). */
async function startOnce(dataDir: string, until?: () => boolean): Promise<number> {
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
    const ready = performance.now() - t0;
    for (const end = performance.now() + 10_000; until && !until() && performance.now() < end; ) await new Promise((r) => setTimeout(r, 50));
    return ready;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const runs = quick ? 3 : 7;
  for (const f of codeCaches()) rmSync(join(dist, f));
  const first = mkdtempSync(join(tmpdir(), 'kapi-startup-'));
  try {
    const cold = await startOnce(join(first, 'data'), () => codeCaches().length > 0);
    console.log(`${'start -> ready, first start after a build (ms)'.padEnd(52)} ${cold.toFixed(0)}${existsSync(join(dist, codeCaches()[0] ?? '-')) ? '' : ' (and no code cache was written)'}`);
  } finally {
    rmSync(first, { recursive: true, force: true });
  }
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
