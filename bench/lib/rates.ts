/**
 * The three request rates of issue #42, as h2load sends them (4 connections × 16 streams, a CRD with a status
 * subresource, ~1 KB CronTabs): creates with generateName, gets of the created objects (twice as many), status
 * merge patches. Used by bench/reference.ts (kapi beside kube-apiserver) and bench/stages.ts (kapi's stages).
 */
import { BenchClient, type LoadResult } from './client.js';
import { crontab, crontabCrd, crontabsPath } from './crontab.js';
import { h2load, type H2loadRun } from './h2load.js';

export const CONNECTIONS = 4;
const MERGE = 'application/merge-patch+json';
export const RATES = ['creates', 'gets', 'status merge patches'] as const;
export type Rate = (typeof RATES)[number];

export interface Target {
  name: string;
  url: string;
  token: string;
  ca: string | undefined;
  /** CPU time of the server's processes, in ms. */
  cpuMs(): number;
}

/** The CRD and the namespaces; resolves once the CRD serves its first object. */
export async function prepare(t: Target, namespaces: string[]): Promise<void> {
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

/** When each rate's load ran, in µs of the monotonic clock (a V8 CPU profile's clock). */
export type Marks = Map<Rate, { from: number; to: number }>;

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/** Creates `n` objects in `ns`, then gets (2n) and status merge patches (n) of them; each with the server's CPU per request. */
export async function round(t: Target, ns: string, n: number, marks?: Marks): Promise<Map<Rate, LoadResult>> {
  const out = new Map<Rate, LoadResult>();
  const measure = async (rate: Rate, run: Omit<H2loadRun, 'token' | 'connections'>) => {
    const before = t.cpuMs();
    const from = nowUs();
    const r = await h2load({ ...run, connections: CONNECTIONS, token: t.token, countFailures: true });
    marks?.set(rate, { from, to: nowUs() });
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
