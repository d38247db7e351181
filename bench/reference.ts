/**
 * kapi beside the reference, kube-apiserver 1.20.2 on etcd (built from Debian's kubernetes source by
 * scripts/conformance-build.sh; bench/lib/reference-server.ts), measured the same way in one run: h2load with
 * 4 connections × 16 streams, a CRD with a status subresource, a token in system:masters. Creates (generateName),
 * gets and status merge patches of ~1 KB CronTabs, each server in turn, `ROUNDS` times; then the ratios.
 * Each line also gives the server's CPU per request (kube-apiserver's with etcd's).
 *
 * Both servers first serve a round of their own (not counted): kapi's code is compiled by V8 as it first runs.
 *
 *   npm run bench:reference            (builds the reference first; skipped with a message where it cannot)
 *   node dist/bench/reference.js [--quick]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, line, type LoadResult } from './lib/client.js';
import { h2loadInstalled } from './lib/h2load.js';
import { prepare, RATES, round, type Rate, type Target } from './lib/rates.js';
import { referenceBuilt, startReference } from './lib/reference-server.js';
import { startServer } from './lib/server-process.js';

const quick = process.argv.includes('--quick');
const N = quick ? 3000 : 10_000;
const WARM = quick ? 1000 : 3000;
const ROUNDS = 2;

function buildReference(): string | undefined {
  if (referenceBuilt()) return undefined;
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  try {
    execFileSync('bash', [join(root, 'scripts', 'conformance-build.sh')], { stdio: 'inherit' });
    return referenceBuilt() ? undefined : 'scripts/conformance-build.sh built no kube-apiserver or etcd is missing';
  } catch (err) {
    return `the reference could not be built (${(err as Error).message.split('\n')[0]}); scripts/test-tools.sh installs Debian's Go, etcd and the kubernetes source`;
  }
}

async function main(): Promise<void> {
  if (!h2loadInstalled()) {
    line('kapi beside kube-apiserver', 'skipped: h2load is not installed (Debian package nghttp2-client)');
    return;
  }
  const missing = buildReference();
  if (missing) {
    line('kapi beside kube-apiserver', `skipped: ${missing}`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'kapi-reference-'));
  const kapi = await startServer();
  const ref = await startReference(dir).catch(async (err: unknown) => {
    await kapi.stop();
    kapi.cleanup();
    throw err;
  });
  try {
    const targets: Target[] = [
      { name: 'kapi', url: kapi.url, token: kapi.token, ca: kapi.ca, cpuMs: () => kapi.cpuMs() },
      { name: 'kube-apiserver', url: ref.url, token: ref.token, ca: undefined, cpuMs: () => ref.kubeApiserver.cpuMs() + ref.etcd.cpuMs() },
    ];
    const namespaces = ['warm', ...Array.from({ length: ROUNDS }, (_, i) => `round-${i + 1}`)];
    for (const t of targets) await prepare(t, namespaces);
    for (const t of targets) await round(t, 'warm', WARM);
    const results: Array<Map<string, Map<Rate, LoadResult>>> = [];
    for (let r = 0; r < ROUNDS; r++) {
      const byTarget = new Map<string, Map<Rate, LoadResult>>();
      for (const t of targets) {
        const res = await round(t, `round-${r + 1}`, N);
        byTarget.set(t.name, res);
        for (const rate of RATES) line(`round ${r + 1}: ${t.name}, ${rate}`, fmt(res.get(rate)!));
      }
      results.push(byTarget);
    }
    for (const rate of RATES) {
      const ratios = results.map((byTarget) => byTarget.get('kapi')!.get(rate)!.perSecond / byTarget.get('kube-apiserver')!.get(rate)!.perSecond);
      const cpu = results.map((byTarget) => byTarget.get('kube-apiserver')!.get(rate)!.serverCpuUs! / byTarget.get('kapi')!.get(rate)!.serverCpuUs!);
      line(`kapi / kube-apiserver, ${rate}`, `${ratios.map((x) => `${x.toFixed(1)}×`).join(', ')} the rate (goal 10×); ${cpu.map((x) => `${x.toFixed(1)}×`).join(', ')} less server CPU per request`);
    }
  } finally {
    await ref.kubeApiserver.stop();
    await ref.etcd.stop();
    await kapi.stop();
    kapi.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
