/**
 * What each stage of the request path costs: the server's CPU per request by stage (authentication,
 * authorization, audit, admission, decode, validation, managed fields, store, watch cache, encode…) for the
 * three rates of bench/reference.ts (creates, gets, status merge patches of a CRD with a status subresource,
 * h2load 4 × 16), read from a CPU profile of the server's main thread (bench/lib/stage-profile.ts: no
 * instrumentation in the server, so a stage not in use shows ~0). The SQLite writer thread's CPU is its own line.
 * Profiling costs the server some speed: the rates printed here are below bench/throughput.ts's.
 *
 *   node dist/bench/stages.js [--quick] [--detail]
 *     --detail: under each stage, the functions that cost the most in it (µs per request)
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { line } from './lib/client.js';
import { h2loadInstalled } from './lib/h2load.js';
import { prepare, RATES, round, type Marks } from './lib/rates.js';
import { startServer } from './lib/server-process.js';
import { stagesOf } from './lib/stage-profile.js';

const quick = process.argv.includes('--quick');
const N = quick ? 2000 : 10_000;
const WARM = quick ? 1000 : 3000;
const DETAIL = process.argv.includes('--detail');

async function main(): Promise<void> {
  if (!h2loadInstalled()) {
    line('CPU per request by stage', 'skipped: h2load is not installed (Debian package nghttp2-client)');
    return;
  }
  const profiles = mkdtempSync(join(tmpdir(), 'kapi-stages-'));
  const server = await startServer(undefined, [], ['--cpu-prof', `--cpu-prof-dir=${profiles}`, '--cpu-prof-interval=100']);
  const marks: Marks = new Map();
  const target = { name: 'kapi', url: server.url, token: server.token, ca: server.ca, cpuMs: () => server.cpuMs() };
  let results;
  try {
    await prepare(target, ['warm', 'measured']);
    await round(target, 'warm', WARM);
    results = await round(target, 'measured', N, marks);
  } finally {
    await server.stop();
    server.cleanup();
  }
  try {
    // One profile per thread: CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile, the main thread's is thread 0.
    const files = readdirSync(profiles).filter((f) => f.endsWith('.cpuprofile'));
    const main = files.find((f) => f.split('.')[4] === '0');
    if (!main) throw new Error(`no profile of the server's main thread in ${profiles}`);
    const windows = RATES.map((rate) => marks.get(rate)!);
    const counts = RATES.map((rate) => results.get(rate)!.count);
    const detail: Array<Map<string, Map<string, number>>> = [];
    const byStage = stagesOf(join(profiles, main), windows, DETAIL ? detail : undefined);
    const writer = files.filter((f) => f !== main).map((f) => stagesOf(join(profiles, f), windows));
    const stages = [...new Set(byStage.flatMap((m) => [...m.keys()]))].sort(
      (a, b) => byStage.reduce((s, m, i) => s + (m.get(b) ?? 0) / counts[i], 0) - byStage.reduce((s, m, i) => s + (m.get(a) ?? 0) / counts[i], 0),
    );
    const cell = (us: number) => `${us.toFixed(0).padStart(6)}`;
    line('µs of server CPU per request, by stage', RATES.map((r) => r.split(' ')[0].padStart(7)).join(' '));
    for (const stage of stages) {
      line(`  ${stage}`, byStage.map((m, i) => cell((m.get(stage) ?? 0) / counts[i])).join('  '));
      if (!DETAIL) continue;
      const frames = [...new Set(detail.flatMap((d) => [...(d.get(stage)?.keys() ?? [])]))];
      const cost = (f: string) => detail.map((d, i) => (d.get(stage)?.get(f) ?? 0) / counts[i]);
      frames.sort((a, b) => Math.max(...cost(b)) - Math.max(...cost(a)));
      for (const f of frames.slice(0, 6)) line(`      ${f.slice(0, 52)}`, cost(f).map(cell).join('  '));
    }
    const total = (m: Map<string, number>, i: number) => [...m.values()].reduce((s, v) => s + v, 0) / counts[i];
    line('  main thread, in all', byStage.map((m, i) => cell(total(m, i))).join('  '));
    line('  other threads (SQLite writer, YAML)', RATES.map((_, i) => cell(writer.reduce((s, w) => s + total(w[i], i), 0))).join('  '));
    line('  rate while profiled (per s)', RATES.map((rate) => cell(results.get(rate)!.perSecond)).join('  '));
  } finally {
    rmSync(profiles, { recursive: true, force: true });
  }
}

await main();
