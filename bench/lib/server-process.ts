/** Benchmarks' kapi: a real `kapi serve` child process on a free port with its own data dir. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const bin = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'kapi.js');

export interface ServerProcess {
  url: string;
  token: string;
  ca: string;
  dataDir: string;
  pid: number;
  /** ms from spawn to the serving line */
  startMs: number;
  rssMb(): number;
  /** CPU time the server process has used (all threads, user and system), in ms. */
  cpuMs(): number;
  stop(): Promise<void>;
}

export async function startServer(dataDir?: string, extraArgs: string[] = [], moreNodeArgs: string[] = []): Promise<ServerProcess & { cleanup(): void }> {
  const root = dataDir ? undefined : mkdtempSync(join(tmpdir(), 'kapi-bench-'));
  const dir = dataDir ?? join(root!, 'data');
  const t0 = performance.now();
  // The node flags of bin/kapi.js's `#!` line (as `npx kapi` and `npm start` run it), and
  // KAPI_BENCH_NODE_ARGS for more, e.g. --cpu-prof to profile a figure (--trace-gc with KAPI_BENCH_SERVER_STDOUT=1).
  const nodeArgs = [...shebangFlags(), ...moreNodeArgs, ...(process.env.KAPI_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, bin, 'serve', '--data-dir', dir, '--secure-port', '0', ...extraArgs], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((res, rej) => {
    let out = '';
    const timer = setTimeout(() => rej(new Error(`kapi did not start: ${out}`)), 60_000);
    let serving = false;
    child.stdout!.on('data', (c: Buffer) => {
      // Once serving, what the server prints goes to this process's stderr with KAPI_BENCH_SERVER_STDOUT=1
      // (e.g. --trace-gc in KAPI_BENCH_NODE_ARGS), else nowhere.
      if (serving) {
        if (process.env.KAPI_BENCH_SERVER_STDOUT) process.stderr.write(c);
        return;
      }
      out += c.toString();
      const m = /kapi serving on (https:\/\/\S+)/.exec(out);
      if (m) {
        serving = true;
        clearTimeout(timer);
        res(m[1]);
      }
    });
  });
  const startMs = performance.now() - t0;
  return {
    url,
    token: readFileSync(join(dir, 'admin.token'), 'utf8').trim(),
    ca: readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8'),
    dataDir: dir,
    pid: child.pid!,
    startMs,
    rssMb() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
    },
    cpuMs() {
      // Fields 14 and 15 of /proc/<pid>/stat (utime, stime), in clock ticks of 10 ms.
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
    cleanup() {
      if (root) rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The node flags on bin/kapi.js's first line (`#!/usr/bin/env -S node <flags>`). */
function shebangFlags(): string[] {
  const first = readFileSync(bin, 'utf8').split('\n', 1)[0];
  const m = /^#!\/usr\/bin\/env -S node(?: (.*))?$/.exec(first);
  return m?.[1]?.split(' ').filter(Boolean) ?? [];
}
