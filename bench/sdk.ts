/**
 * The SDK's figures (issue #29):
 * - test server: startTestServer() to its first answered request, median of 100 (quick: 20), and with 10 CRDs
 *   (median of 10); and the heap each
 *   start and stop leaves behind (with --expose-gc);
 * - reconciles/s of the example Foo controller (examples/foo-controller), creating Foos with 1 replica each
 *   against the test server in this process, until every Foo is Ready;
 * - informer memory: heap held by an informer's cache of 10,000 ConfigMaps (quick: 2,000), per 10,000.
 *
 *   node dist/bench/sdk.js [--quick]
 */
import { performance } from 'node:perf_hooks';
import { defineResource, Informer, t, version } from 'kapi/sdk';
import { startTestServer } from 'kapi/testing';
import { Foo } from '../examples/foo-controller/foo.js';
import { runFooController } from '../examples/foo-controller/main.js';
import { line } from './lib/client.js';

const quick = process.argv.includes('--quick');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const gc = (globalThis as { gc?: () => void }).gc;
/** Full collections, with turns of the event loop between them (what the server freed on the way is freed too). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function startup(): Promise<void> {
  const runs = quick ? 20 : 100;
  const warm = quick ? 5 : 20;
  const times: number[] = [];
  let heapBefore = 0;
  for (let i = 0; i < warm + runs; i++) {
    // The first cycles fill caches to their bound (compiled schemas, interned strings); the heap is read after them.
    if (i === warm) {
      await settle();
      heapBefore = process.memoryUsage().heapUsed;
    }
    const t0 = performance.now();
    const s = await startTestServer();
    await s.client().resource({ group: '', version: 'v1', resource: 'namespaces' }).get(undefined, 'default');
    times.push(performance.now() - t0);
    await s.stop();
  }
  line(`startTestServer → first request (median of ${warm + runs})`, `${median(times).toFixed(1)} ms  (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)})`);
  if (gc) {
    await settle();
    const held = (process.memoryUsage().heapUsed - heapBefore) / 1048576;
    line(`heap kept by ${runs} startTestServer()/stop() cycles (after ${warm})`, `${held.toFixed(2)} MiB`);
  }
}

/** Ten resources of their own schema each, as a project with ten kinds has. */
const TEN = Array.from({ length: 10 }, (_, i) =>
  defineResource({
    group: 'bench.example.com',
    kind: `Kind${i}`,
    versions: [version('v1', { spec: t.object({ size: t.integer({ minimum: 0, default: 1 }), name: t.optional(t.string({ maxLength: 63 })), tags: t.optional(t.array(t.string())) }) })],
  }),
);

/** startTestServer with ten CRDs to a first answer from the last one's endpoint: the median of 10 starts in one process (#43's goal: < 50 ms). */
async function startupWithCrds(): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t0 = performance.now();
    const s = await startTestServer({ resources: TEN });
    await s.client().resource(TEN[9]).list('default');
    times.push(performance.now() - t0);
    await s.stop();
  }
  line('startTestServer with 10 CRDs → first list of the last (median of 10)', `${median(times).toFixed(1)} ms  (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)})`);
}

async function reconciles(): Promise<void> {
  const n = quick ? 200 : 1000;
  const s = await startTestServer({ resources: [Foo] });
  const manager = await runFooController(s.client('foo-controller'), { ensure: () => {}, remove: () => {} });
  try {
    const foos = s.client().resource<Foo>(Foo);
    const t0 = performance.now();
    await Promise.all(Array.from({ length: n }, (_, i) => foos.create('default', { apiVersion: 'foo.example.com/v1', kind: 'Foo', metadata: { name: `f${i}` }, spec: { replicas: 1 } })));
    for (;;) {
      const list = await foos.list('default');
      if (list.items.filter((f) => f.status?.readyReplicas === 1).length === n) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (performance.now() - t0) / 1000;
    line(`example Foo controller, ${n} Foos created to Ready`, `${(n / seconds).toFixed(0)} Foos/s  (${seconds.toFixed(2)} s; each: finalizer, ConfigMap apply, status)`);
  } finally {
    await manager.stop();
    await s.stop();
  }
}

async function informerMemory(): Promise<void> {
  const n = quick ? 2000 : 10_000;
  const s = await startTestServer();
  try {
    const cms = s.client().resource({ group: '', version: 'v1', resource: 'configmaps' });
    for (let i = 0; i < n; i += 200) {
      await Promise.all(Array.from({ length: Math.min(200, n - i) }, (_, j) => cms.create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i + j}`, labels: { app: 'bench' } }, data: { key: 'v'.repeat(100) } })));
    }
    await settle();
    const before = process.memoryUsage().heapUsed;
    const informer = new Informer(cms);
    await informer.start();
    await settle();
    const after = process.memoryUsage().heapUsed;
    if (informer.list().length < n) throw new Error(`the informer holds ${informer.list().length} of ${n} ConfigMaps`);
    const perTenThousand = ((after - before) / n) * 10_000;
    line(`informer cache, ${n} ConfigMaps (~200 B of data each)`, `${(perTenThousand / 1024 / 1024).toFixed(1)} MiB per 10,000 objects${gc ? '' : ' (run with --expose-gc for a steadier figure)'}`);
    informer.stop();
  } finally {
    await s.stop();
  }
}

await startup();
await startupWithCrds();
await reconciles();
await informerMemory();
