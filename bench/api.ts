/**
 * The end-to-end benchmark suite (issue 8): a real `kapi serve` process on the
 * embedded store, driven over HTTPS with bearer-token auth and JSON, printing
 * one line per figure. `--quick` shrinks every size so the run takes under a minute.
 *
 *   node dist/bench/api.js [--quick]
 */
import http2 from 'node:http2';
import { performance } from 'node:perf_hooks';
import { BenchClient, connect, fmt, line, load, pct, withServerCpu } from './lib/client.js';
import { crontab, crontabCrd, crontabsPath, GROUP } from './lib/crontab.js';
import { startServer, type ServerProcess } from './lib/server-process.js';

const quick = process.argv.includes('--quick');
/**
 * `--only=watch,lists` runs just those sections (after the CRD exists), for profiling one figure:
 * writes (creates), updates (creates, then gets, status updates, patches, applies), lists, watch, crds, restart.
 */
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7).split(',');
const runs = (section: 'writes' | 'updates' | 'lists' | 'watch' | 'crds' | 'restart') => !only || only.includes(section) || (section === 'writes' && only.includes('updates'));
const N = {
  objects: quick ? 2000 : 10_000,
  small: quick ? 1000 : 3000,
  ops: quick ? 2000 : 10_000,
  watchers: quick ? 200 : 1000,
  events: quick ? 200 : 1000,
  crds: quick ? 100 : 1000,
};

const crd = crontabCrd;
const obj = (name: string, ns: string, i: number) => crontab(name, ns, i);
const path = crontabsPath;

async function settleRss(server: ServerProcess): Promise<number> {
  await new Promise((r) => setTimeout(r, 1000));
  return server.rssMb();
}

async function timeIt<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const v = await fn();
  return [performance.now() - t, v];
}

async function main(): Promise<void> {
  const server = await startServer();
  const c = new BenchClient(server.url, server.token, server.ca, 4);
  try {
    line('start -> serving, empty data dir', `${server.startMs.toFixed(0)} ms`);
    line('RSS idle', `${(await settleRss(server)).toFixed(0)} MB`);

    for (const ns of ['bench', 'list-small']) await c.expect('POST', '/api/v1/namespaces', 201, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const [crdToFirst] = await timeIt(async () => {
      await c.expect('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 201, crd('crontabs', 'CronTab'));
      await c.expect('POST', path('bench'), 201, obj('first', 'bench', 0));
    });
    line('CRD create -> first object created', `${crdToFirst.toFixed(1)} ms`);

    if (runs('writes')) await writes(server, c);
    if (runs('lists')) await lists(c);
    if (runs('watch')) await watchFanOut(server, c);
    if (runs('crds')) await manyCrds(server, c);
  } finally {
    c.close();
    await server.stop();
  }
  if (runs('crds') && (runs('writes') || runs('lists') || runs('watch'))) await crdsAloneRss();
  if (!runs('restart')) return server.cleanup();

  const again = await startServer(server.dataDir);
  try {
    const c2 = new BenchClient(again.url, again.token, again.ca, 1);
    const t = performance.now();
    await c2.expect('GET', '/readyz', 200);
    line(`start -> serving with ${N.crds} CRDs and ${N.objects} objects`, `${(again.startMs + performance.now() - t).toFixed(0)} ms`);
    c2.close();
  } finally {
    await again.stop();
    server.cleanup();
  }
}

async function writes(server: ServerProcess, c: BenchClient): Promise<void> {
  const creates = await withServerCpu(server, () => load(64, N.objects, async (i) => {
    const ns = i < N.small ? 'list-small' : 'bench';
    await c.expect('POST', path(ns), 201, obj(`o-${i}`, ns, i));
  }));
  line(`creates, 64 clients (${N.objects} objects of ~1 KB)`, fmt(creates));
  line(`RSS after ${N.objects} objects`, `${(await settleRss(server)).toFixed(0)} MB`);
  if (!runs('updates')) return;

  const nsOf = (i: number) => (i < N.small ? 'list-small' : 'bench');
  const gets = await withServerCpu(server, () => load(64, N.ops * 2, async (i) => {
    const k = i % N.objects;
    await c.expect('GET', `${path(nsOf(k))}/o-${k}`, 200);
  }));
  line('gets, 64 clients', fmt(gets));
  const status = await withServerCpu(server, () => load(64, N.ops, async (i) => {
    const k = i % N.objects;
    await c.expect('PATCH', `${path(nsOf(k))}/o-${k}/status`, 200, { status: { replicas: i, phase: 'Running' } }, { 'Content-Type': 'application/merge-patch+json' });
  }));
  line('status updates (merge patch on /status), 64 clients', fmt(status));
  const patches = await withServerCpu(server, () => load(64, N.ops, async (i) => {
    const k = i % N.objects;
    await c.expect('PATCH', `${path(nsOf(k))}/o-${k}`, 200, { metadata: { annotations: { touched: String(i) } } }, { 'Content-Type': 'application/merge-patch+json' });
  }));
  line('merge patches, 64 clients', fmt(patches));
  const applies = await withServerCpu(server, () => load(64, N.ops, async (i) => {
    const k = i % N.objects;
    const body = `apiVersion: ${GROUP}/v1\nkind: CronTab\nmetadata:\n  name: o-${k}\n  namespace: ${nsOf(k)}\nspec:\n  image: applied-${i}\n`;
    await c.expect('PATCH', `${path(nsOf(k))}/o-${k}?fieldManager=bench&force=true`, 200, body, { 'Content-Type': 'application/apply-patch+yaml' });
  }));
  line('server-side applies (1 KB objects), 64 clients', fmt(applies));
  const sample = JSON.parse((await c.expect('GET', `${path('bench')}/o-${N.objects - 1}`, 200)).body);
  const mfBytes = JSON.stringify(sample.metadata.managedFields ?? []).length;
  line(`managedFields per object (JSON), x ${N.objects} objects`, `${mfBytes} B, ${((mfBytes * N.objects) / 1024 / 1024).toFixed(1)} MB in JSON`);
}

async function lists(c: BenchClient): Promise<void> {
  const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
  const repeats = quick ? 3 : 10;
  const measure = async (name: string, p: string, accept?: string) => {
    const times: number[] = [];
    let size = 0;
    let table = false;
    for (let i = 0; i < repeats; i++) {
      const [ms, r] = await timeIt(() => c.expect('GET', p, 200, undefined, accept ? { Accept: accept } : {}));
      times.push(ms);
      size = r.body.length;
      table = r.body.includes('"kind":"Table"');
    }
    times.sort((a, b) => a - b);
    line(name + (accept?.includes('as=Table') && !table ? ' (served as JSON: no Table yet)' : ''), `${pct(times, 0.5).toFixed(1)} ms median, ${(size / 1024 / 1024).toFixed(1)} MB`);
  };
  await measure(`list ${N.small} objects (JSON)`, path('list-small'));
  await measure(`list ${N.small} objects (Table)`, path('list-small'), TABLE);
  // A built-in (typed) list, whose items go out without apiVersion and kind.
  await Promise.all(
    Array.from({ length: 8 }, async (_, w) => {
      for (let i = w; i < N.small; i += 8) {
        const cm = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: `cm-${i}`, labels: { shard: String(i % 10) } }, data: { key: `value-${i}`, other: 'x'.repeat(200) } };
        await c.expect('POST', '/api/v1/namespaces/list-small/configmaps', 201, cm);
      }
    }),
  );
  await measure(`list ${N.small} ConfigMaps (JSON)`, '/api/v1/namespaces/list-small/configmaps');
  await measure(`list ${N.small} ConfigMaps (protobuf)`, '/api/v1/namespaces/list-small/configmaps', 'application/vnd.kubernetes.protobuf');
  await measure(`list ${N.objects} objects (JSON)`, `/apis/${GROUP}/v1/crontabs`);
  await measure(`list ${N.objects} objects (Table)`, `/apis/${GROUP}/v1/crontabs`, TABLE);
  await measure(`list ${N.objects} objects with labelSelector shard=3`, `/apis/${GROUP}/v1/crontabs?labelSelector=shard%3D3`);
  const [ms, pages] = await timeIt(async () => {
    let cont = '';
    let n = 0;
    do {
      const r = await c.expect('GET', `/apis/${GROUP}/v1/crontabs?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`, 200);
      cont = JSON.parse(r.body).metadata.continue;
      n++;
    } while (cont);
    return n;
  });
  line(`list ${N.objects} objects paginated (limit=500)`, `${ms.toFixed(0)} ms for ${pages} pages`);
}

/**
 * Watchers over HTTP/2, as client-go runs them: many watch streams share a few
 * connections. A first round of events (printed on its own line) reaches the
 * watchers while V8 still compiles the fan-out; the figures that follow are
 * the steady state.
 */
async function watchFanOut(server: ServerProcess, c: BenchClient): Promise<void> {
  const sessions = Array.from({ length: 10 }, () => connect(server.url, server.ca));
  const sent = new Map<string, number>();
  let latencies: number[] = [];
  let received = 0;
  let expected = 0;
  let allDone: () => void = () => {};
  await c.expect('POST', '/api/v1/namespaces', 201, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'watched' } });
  const rv = JSON.parse((await c.expect('GET', `${path('watched')}?limit=1`, 200)).body).metadata.resourceVersion;
  const streams: http2.ClientHttp2Stream[] = [];
  await Promise.all(
    Array.from(
      { length: N.watchers },
      (_, i) =>
        new Promise<void>((ready, fail) => {
          const stream = sessions[i % sessions.length].request({ ':path': `${path('watched')}?watch=true&resourceVersion=${rv}`, authorization: `Bearer ${server.token}` });
          stream.on('response', () => ready());
          stream.on('error', fail);
          let buf = '';
          stream.on('data', (chunk: Buffer) => {
            buf += chunk.toString();
            let nl;
            // The client only finds each event's name: parsing a million events would make the client the bottleneck.
            while ((nl = buf.indexOf('\n')) >= 0) {
              const at = buf.indexOf('"name":"');
              const name = buf.slice(at + 8, buf.indexOf('"', at + 8));
              buf = buf.slice(nl + 1);
              latencies.push(performance.now() - sent.get(name)!);
              if (++received === expected) allDone();
            }
          });
          streams.push(stream);
        }),
    ),
  );
  const round = async (prefix: string, events: number) => {
    latencies = [];
    received = 0;
    expected = N.watchers * events;
    const done = new Promise<void>((r) => (allDone = r));
    const t = performance.now();
    const cpu = server.cpuMs();
    await load(16, events, async (i) => {
      sent.set(`${prefix}${i}`, performance.now());
      await c.expect('POST', path('watched'), 201, obj(`${prefix}${i}`, 'watched', i));
    });
    const timeout = setTimeout(allDone, 60_000);
    await done;
    clearTimeout(timeout);
    const total = performance.now() - t;
    const cpuNs = ((server.cpuMs() - cpu) * 1e6) / received;
    latencies.sort((a, b) => a - b);
    return `${received} delivered in ${total.toFixed(0)} ms, p50 ${pct(latencies, 0.5).toFixed(1)} ms, p99 ${pct(latencies, 0.99).toFixed(1)} ms, server CPU ${cpuNs.toFixed(0)} ns/delivery`;
  };
  const cold = Math.max(1, Math.floor(N.events / 10));
  line(`cold: first ${cold} events to ${N.watchers} watchers on a fresh server`, await round('cold-', cold));
  line(`watch fan-out ${N.watchers} watchers (HTTP/2, 10 connections) x ${N.events} events`, await round('w-', N.events));
  for (const st of streams) st.close();
  for (const s of sessions) s.close();
}

/** N.crds CRDs, 16 at a time, until the last one's resource is served. */
async function createCrds(c: BenchClient): Promise<void> {
  await load(16, N.crds, async (i) => {
    await c.expect('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 201, crd(`kinds${i}`, `Kind${i}`));
  });
  await c.expect('GET', `/apis/${GROUP}/v1/namespaces/bench/kinds${N.crds - 1}`, 200);
}

async function manyCrds(server: ServerProcess, c: BenchClient): Promise<void> {
  const [ms] = await timeIt(() => createCrds(c));
  line(`${N.crds} CRDs created, established and served`, `${ms.toFixed(0)} ms`);
  const time = async (name: string, p: string, accept?: string) => {
    const [t, r] = await timeIt(() => c.expect('GET', p, 200, undefined, accept ? { Accept: accept } : {}));
    line(name, `${t.toFixed(1)} ms, ${(r.body.length / 1024).toFixed(0)} KB`);
  };
  await time(`discovery /apis/${GROUP}/v1 with ${N.crds} CRDs`, `/apis/${GROUP}/v1`);
  await time('aggregated discovery /apis', '/apis', 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
  await time('/openapi/v2 (JSON)', '/openapi/v2');
  line(`RSS after ${N.crds} CRDs (and all of the above)`, `${(await settleRss(server)).toFixed(0)} MB`);
}

/** The target's figure: a fresh server with the CRDs alone, once it has served /openapi/v2. */
async function crdsAloneRss(): Promise<void> {
  const server = await startServer();
  const c = new BenchClient(server.url, server.token, server.ca, 4);
  try {
    await createCrds(c);
    await c.expect('GET', '/openapi/v2', 200);
    line(`RSS with ${N.crds} CRDs alone (fresh server, after /openapi/v2)`, `${(await settleRss(server)).toFixed(0)} MB`);
  } finally {
    c.close();
    await server.stop();
    server.cleanup();
  }
}

await main();
