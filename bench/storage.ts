/**
 * Storage benchmark: durable creates/s on the embedded sqlite store with 1 and
 * with 64 concurrent writers, a range of 10,000 keys, and watch fan-out of the
 * watch cache to 1,000 watchers, and in-memory creates with 1,000 and 10,000 watch caches on other prefixes (a
 * write's cost as resources are added). Prints one line per figure.
 *
 *   node dist/bench/storage.js [--quick]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { WatchCache } from '../src/cache/watch-cache.js';
import { openStorage, type Storage } from '../src/storage/index.js';

const quick = process.argv.includes('--quick');
const value = JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', spec: { cronSpec: '* * * * */5', image: 'my-awesome-cron-image', pad: 'x'.repeat(800) } });

function report(name: string, figure: string): void {
  console.log(`${name.padEnd(44)} ${figure}`);
}

async function creates(storage: Storage, writers: number, seconds: number, tag: string): Promise<number> {
  let n = 0;
  const deadline = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      while (performance.now() < deadline) await storage.create(`/registry/bench/${tag}/w${w}-${n++}`, value);
    }),
  );
  return n / ((performance.now() - start) / 1000);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-bench-'));
  const storage = openStorage({ kind: 'sqlite', path: join(dir, 'state.db') });
  try {
    const secs = quick ? 1 : 3;
    report('sqlite durable creates/s, 1 writer', (await creates(storage, 1, secs, 'one')).toFixed(0));
    report('sqlite durable creates/s, 64 writers', (await creates(storage, 64, secs, 'many')).toFixed(0));

    for (let i = 0; i < 10_000; i += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, j) => storage.create(`/registry/range/${String(i + j).padStart(6, '0')}`, value)));
    }
    let t = performance.now();
    const runs = quick ? 5 : 20;
    for (let i = 0; i < runs; i++) {
      const r = await storage.range('/registry/range/');
      if (r.kvs.length !== 10_000) throw new Error(`range returned ${r.kvs.length}`);
    }
    report('range of 10,000 keys (latest), ms', ((performance.now() - t) / runs).toFixed(2));
    const rev = await storage.currentRevision();
    await storage.create('/registry/range/zzz', value);
    t = performance.now();
    const old = await storage.range('/registry/range/', { revision: rev });
    report('range of 10,000 keys (past revision), ms', (performance.now() - t).toFixed(2));
    if (old.kvs.length !== 10_000) throw new Error('past range size');

    const cache = new WatchCache(storage, '/registry/fanout/', (kv) => JSON.parse(kv.value));
    await cache.start();
    const watchers = 1000;
    const events = quick ? 200 : 1000;
    const latencies: number[] = [];
    const sentAt = new Map<string, number>();
    let delivered = 0;
    for (let i = 0; i < watchers; i++) {
      cache.watch({ afterRevision: cache.currentRevision }, {
        onEvent: (_type, e) => {
          let bytes = e.memo?.get('json') as Buffer | undefined;
          if (!bytes) (e.memo ??= new Map()).set('json', (bytes = Buffer.from(JSON.stringify({ type: 'ADDED', object: e.object }) + '\n')));
          delivered++;
          latencies.push(performance.now() - sentAt.get(e.key)!);
          return bytes.length > 0;
        },
        onClose: () => {},
      });
    }
    t = performance.now();
    await Promise.all(
      Array.from({ length: events }, (_, i) => {
        const key = `/registry/fanout/${i}`;
        sentAt.set(key, performance.now());
        return storage.create(key, value);
      }),
    );
    const total = performance.now() - t;
    latencies.sort((a, b) => a - b);
    report(`watch fan-out ${watchers} watchers x ${events} events`, `${delivered} deliveries in ${total.toFixed(0)} ms`);
    report('watch fan-out delivery p50/p99 ms', `${latencies[Math.floor(latencies.length * 0.5)].toFixed(1)} / ${latencies[Math.floor(latencies.length * 0.99)].toFixed(1)}`);
    cache.stop();

    // A write's cost with many resources served: each has a watch cache on its own prefix, which the write does not touch.
    for (const count of quick ? [0, 1000, 5000] : [0, 1000, 10_000]) {
      const memory = openStorage({ kind: 'memory' });
      const caches = Array.from({ length: count }, (_, i) => new WatchCache(memory, `/registry/resource-${i}/`, (kv) => JSON.parse(kv.value)));
      await Promise.all(caches.map((c) => c.start()));
      report(`memory creates/s, ${count} other watch caches`, (await creates(memory, 64, secs, 'elsewhere')).toFixed(0));
      for (const c of caches) c.stop();
      await memory.close();
    }
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
