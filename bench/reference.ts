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
import { BenchClient, fmt, line, type LoadResult } from './lib/client.js';
import { crontab, crontabCrd, crontabsPath } from './lib/crontab.js';
import { h2load, h2loadInstalled, type H2loadRun } from './lib/h2load.js';
import { referenceBuilt, startReference } from './lib/reference-server.js';
import { startServer } from './lib/server-process.js';

const quick = process.argv.includes('--quick');
const N = quick ? 3000 : 10_000;
const WARM = quick ? 1000 : 3000;
const ROUNDS = 2;
const CONNECTIONS = 4;
const MERGE = 'application/merge-patch+json';
const RATES = ['creates', 'gets', 'status merge patches'] as const;
type Rate = (typeof RATES)[number];

interface Target {
  name: string;
  url: string;
  token: string;
  ca: string | undefined;
  /** CPU time of the server's processes, in ms. */
  cpuMs(): number;
}

/** A namespace and the CRD, served once its first object can be created. */
async function prepare(t: Target, namespaces: string[]): Promise<void> {
  const c = new BenchClient(t.url, t.token, t.ca, 1);
  try {
    await c.expect('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 201, crontabCrd());
    for (const ns of namespaces) await c.expect('POST', '/api/v1/namespaces', 201, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await c.request('POST', crontabsPath(namespaces[0]), crontab('first', namespaces[0], 0));
      if (r.status === 201) break;
      if (Date.now() > deadline) throw new Error(`${t.name}: the CRD is not served: ${r.status} ${r.body.slice(0, 200)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    c.close();
  }
}

/** Creates `n` objects in `ns`, then gets (2n), status merge patches (n); each rate with the servers' CPU per request. */
async function round(t: Target, ns: string, n: number): Promise<Map<Rate, LoadResult>> {
  const out = new Map<Rate, LoadResult>();
  const measure = async (rate: Rate, run: Omit<H2loadRun, 'token' | 'connections'>) => {
    const before = t.cpuMs();
    const r = await h2load({ ...run, connections: CONNECTIONS, token: t.token });
    out.set(rate, { ...r, serverCpuUs: ((t.cpuMs() - before) * 1000) / r.count });
  };
  const collection = t.url + crontabsPath(ns);
  await measure('creates', { urls: [collection], requests: n, method: 'POST', body: crontab(undefined, ns, 3), status: 201 });
  const c = new BenchClient(t.url, t.token, t.ca, 1);
  let names: string[];
  try {
    const list = JSON.parse((await c.expect('GET', crontabsPath(ns), 200)).body) as { items: { metadata: { name: string } }[] };
    names = list.items.map((o) => o.metadata.name).filter((name) => name !== 'first');
  } finally {
    c.close();
  }
  const urls = names.map((name) => `${collection}/${name}`);
  await measure('gets', { urls, requests: n * 2, status: 200 });
  const status = { status: { replicas: 3, phase: 'Running' } };
  await measure('status merge patches', { urls: urls.map((u) => `${u}/status`), requests: n, method: 'PATCH', body: status, contentType: MERGE, status: 200 });
  return out;
}

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
