/**
 * A million objects on one kapi (#42 goal 3): 1,000,000 small CronTabs of one CRD (100,000 with --quick) on the
 * embedded store, created 64 at a time. Then the server's RSS per object, 500-item pages (the first after the
 * writes, the next ones, a continue at a revision writes have passed, one with a label selector),
 * watch fan-out with every object stored, the whole list (JSON, Table, YAML, pretty; the slowest /healthz answer
 * meanwhile: how long the event loop was held), a restart: to serving, to the first page, RSS after; last, a
 * deletecollection of a tenth of them.
 *
 *   node dist/bench/objects.js [--quick]
 */
import { performance } from 'node:perf_hooks';
import http2 from 'node:http2';
import { BenchClient, connect, line, load, pct } from './lib/client.js';
import { crontabCrd, crontabsPath, GROUP } from './lib/crontab.js';
import { startServer, type ServerProcess } from './lib/server-process.js';

const quick = process.argv.includes('--quick');
const N = quick ? 100_000 : 1_000_000;
const NS = 'default';
const WATCHERS = 100;
const EVENTS = 100;

/** A small CronTab (~560 bytes as served, managed fields included). */
const small = (i: number) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'CronTab',
  metadata: { name: `o-${i}`, namespace: NS, labels: { app: 'bench', shard: String(i % 100) } },
  spec: { cronSpec: '* * * * */5', image: 'my-awesome-cron-image', replicas: 1 + (i % 10) },
});

async function settledRss(server: ServerProcess): Promise<number> {
  await new Promise((r) => setTimeout(r, 3000));
  return server.rssMb();
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const out = await fn();
  return [performance.now() - t, out];
}

async function page(c: BenchClient, query: string): Promise<{ ms: number; items: number; cont?: string }> {
  const [ms, r] = await timed(() => c.request('GET', `${crontabsPath(NS)}?${query}`));
  if (r.status !== 200) throw new Error(`list ${query}: ${r.status} ${r.body.slice(0, 200)}`);
  const body = JSON.parse(r.body) as { items: unknown[]; metadata: { continue?: string } };
  return { ms, items: body.items.length, cont: body.metadata.continue };
}

async function pages(c: BenchClient): Promise<void> {
  const first = await page(c, 'limit=500');
  const next: number[] = [];
  for (let i = 0; i < 10; i++) next.push((await page(c, 'limit=500')).ms);
  next.sort((a, b) => a - b);
  line(`500-item page of ${N} objects`, `first after the writes ${first.ms.toFixed(1)} ms, then median ${pct(next, 0.5).toFixed(1)} ms`);
  // A continue token names the first page's revision: after writes, the cache lists as of then.
  await load(16, 1000, async (i) => {
    await c.expect('PATCH', `${crontabsPath(NS)}/o-${i * 7}`, 200, { metadata: { annotations: { touched: 'yes' } } }, { 'content-type': 'application/merge-patch+json' });
  });
  const cont = await page(c, `limit=500&continue=${encodeURIComponent(first.cont!)}`);
  line('next page, continued after 1,000 writes since', `${cont.ms.toFixed(1)} ms (${cont.items} items)`);
  const selected = await page(c, 'limit=500&labelSelector=shard%3D7');
  line('500-item page, label selector (1 object in 100)', `${selected.ms.toFixed(1)} ms`);
}

/** While `fn` runs, /healthz every 10 ms on a connection of its own; the slowest answer (the loop held longest) with fn's. */
async function healthzDuring<T>(server: ServerProcess, fn: () => Promise<T>): Promise<{ healthzMaxMs: number; out: T }> {
  const probe = new BenchClient(server.url, server.token, server.ca, 1);
  let healthzMaxMs = 0;
  let running = true;
  const pinging = (async () => {
    while (running) {
      const [ms] = await timed(() => probe.request('GET', '/healthz'));
      healthzMaxMs = Math.max(healthzMaxMs, ms);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  try {
    const out = await fn();
    return { healthzMaxMs, out };
  } finally {
    running = false;
    await pinging;
    probe.close();
  }
}

/** The whole list as JSON, then as a Table (kubectl's form), YAML and pretty JSON, each with /healthz meanwhile. */
async function wholeList(server: ServerProcess, c: BenchClient): Promise<void> {
  const forms: Array<[string, string, Record<string, string>]> = [
    ['', '', {}],
    [', as a Table', '', { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }],
    [', as YAML', '', { accept: 'application/yaml' }],
    [', pretty JSON', '?pretty=true', {}],
  ];
  for (const [form, query, headers] of forms) {
    let healthzMaxMs = 0;
    const [ms, r] = await timed(async () => {
      const during = await healthzDuring(server, () => c.requestBytes('GET', crontabsPath(NS) + query, undefined, headers));
      healthzMaxMs = during.healthzMaxMs;
      return during.out;
    });
    if (r.status !== 200) throw new Error(`whole list${form}: ${r.status}`);
    line(`the whole list (${N} objects)${form}`, `${ms.toFixed(0)} ms, ${(r.body.length / 1048576).toFixed(0)} MiB; /healthz meanwhile at most ${healthzMaxMs.toFixed(0)} ms`);
  }
}

/** WATCHERS watches of the namespace (HTTP/2, 10 connections), EVENTS merge patches of stored objects. */
async function fanOut(server: ServerProcess, c: BenchClient): Promise<void> {
  const sessions = Array.from({ length: 10 }, () => connect(server.url, server.ca));
  const rv = (JSON.parse((await c.expect('GET', `${crontabsPath(NS)}?limit=1`, 200)).body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  let received = 0;
  let allDone: () => void = () => {};
  const streams: http2.ClientHttp2Stream[] = [];
  await Promise.all(
    Array.from(
      { length: WATCHERS },
      (_, i) =>
        new Promise<void>((ready, fail) => {
          const stream = sessions[i % sessions.length].request({ ':path': `${crontabsPath(NS)}?watch=true&resourceVersion=${rv}`, authorization: `Bearer ${server.token}` });
          stream.on('response', () => ready());
          stream.on('error', fail);
          stream.on('data', (chunk: Buffer) => {
            for (const b of chunk) if (b === 0x0a && ++received === WATCHERS * EVENTS) allDone();
          });
          streams.push(stream);
        }),
    ),
  );
  const done = new Promise<void>((r) => (allDone = r));
  const cpu = server.cpuMs();
  const t = performance.now();
  // Objects spread over the whole set: most are kept as text, decoded for the patch.
  await load(16, EVENTS, async (i) => {
    await c.expect('PATCH', `${crontabsPath(NS)}/o-${Math.floor((i * N) / EVENTS) + 3}`, 200, { spec: { replicas: 5 } }, { 'content-type': 'application/merge-patch+json' });
  });
  const timer = setTimeout(allDone, 60_000);
  await done;
  clearTimeout(timer);
  const ms = performance.now() - t;
  line(`watch fan-out ${WATCHERS} watchers x ${EVENTS} events, ${N} objects stored`, `${received} delivered in ${ms.toFixed(0)} ms, server CPU ${(((server.cpuMs() - cpu) * 1e6) / received).toFixed(0)} ns/delivery`);
  for (const s of streams) s.close();
  for (const s of sessions) s.close();
}

async function main(): Promise<void> {
  let server = await startServer();
  let c = new BenchClient(server.url, server.token, server.ca, 4);
  const dataDir = server.dataDir;
  const removeData = server.cleanup;
  try {
    await c.expect('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 201, crontabCrd());
    for (let i = 0; (await c.request('GET', `${crontabsPath(NS)}?limit=1`)).status !== 200; i++) {
      if (i > 200) throw new Error('the CRD was not served in 10 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    const base = await settledRss(server);
    const cpu = server.cpuMs();
    const [ms] = await timed(() => load(64, N, (i) => c.expect('POST', crontabsPath(NS), 201, small(i)).then(() => undefined)));
    line(`${N} small objects created (64 at a time)`, `${((N / ms) * 1000).toFixed(0)}/s, server CPU ${(((server.cpuMs() - cpu) * 1000) / N).toFixed(0)} µs each`);
    const rss = await settledRss(server);
    line('server RSS per object', `${((rss * 1048576) / N).toFixed(0)} B (${rss.toFixed(0)} MB; ${(((rss - base) * 1048576) / N).toFixed(0)} B over the empty server's ${base.toFixed(0)} MB)`);
    await pages(c);
    await fanOut(server, c);
    await wholeList(server, c);

    c.close();
    await server.stop();
    const t = performance.now();
    server = await startServer(dataDir);
    c = new BenchClient(server.url, server.token, server.ca, 4);
    const serving = performance.now() - t;
    const first = await page(c, 'limit=500');
    line(`restart with ${N} objects`, `serving in ${(serving / 1000).toFixed(1)} s, first page at ${((performance.now() - t) / 1000).toFixed(1)} s`);
    line('server RSS per object after the restart', `${(((await settledRss(server)) * 1048576) / N).toFixed(0)} B (first page ${first.items} items)`);
    // Last: a tenth of them deleted in one request (as the namespace controller deletes a namespace's objects), by a
    // selector read over all of them; the whole million would take longer than the request timeout allows.
    const tenth = `labelSelector=${encodeURIComponent('shard in (0,1,2,3,4,5,6,7,8,9)')}`;
    const deleting = await healthzDuring(server, () => timed(() => c.requestBytes('DELETE', `${crontabsPath(NS)}?${tenth}`)));
    const [deleteMs, deleted] = deleting.out;
    if (deleted.status !== 200) throw new Error(`deletecollection: ${deleted.status}`);
    line(`deletecollection of ${N / 10} of the ${N} objects`, `${(deleteMs / 1000).toFixed(1)} s; /healthz meanwhile at most ${deleting.healthzMaxMs.toFixed(0)} ms`);
  } finally {
    c.close();
    await server.stop();
    removeData();
  }
}

await main();
