/**
 * etcd storage benchmark: creates/s with 1 and with 64 concurrent writers,
 * gets/s with 1 and with 64 concurrent readers, a range of 10,000 keys, and
 * the delay from a write to its watch event. Prints one line per figure.
 *
 *   node dist/bench/etcd-storage.js [--quick] [--disk] [--endpoints=http://127.0.0.1:2379,...]
 *
 * Without --endpoints it starts a single-member etcd from .cache/bin (see
 * scripts/test-tools.sh) with its data on tmpfs, or on the disk with --disk.
 */
import { performance } from 'node:perf_hooks';
import { EtcdStorage } from '../src/storage/etcd/etcd-storage.js';
import { startEtcdCluster, type EtcdCluster } from '../test/storage/etcd-helper.js';

const quick = process.argv.includes('--quick');
const endpointsArg = process.argv.find((a) => a.startsWith('--endpoints='));
const value = JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', spec: { cronSpec: '* * * * */5', image: 'my-awesome-cron-image', pad: 'x'.repeat(800) } });

function report(name: string, figure: string): void {
  console.log(`${name.padEnd(44)} ${figure}`);
}

/** Operations per second of op run by `workers` concurrent loops for `seconds`. */
async function rate(workers: number, seconds: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let n = 0;
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < deadline) await op(n++);
    }),
  );
  return n / ((performance.now() - start) / 1000);
}

async function main(): Promise<void> {
  let cluster: EtcdCluster | undefined;
  let endpoints: string[];
  if (endpointsArg) {
    endpoints = endpointsArg.slice('--endpoints='.length).split(',');
  } else {
    cluster = await startEtcdCluster({ onDisk: process.argv.includes('--disk') });
    endpoints = cluster.endpoints;
  }
  const prefix = `/kapi-bench/${process.pid}`;
  const storage = new EtcdStorage({ endpoints, prefix });
  const where = endpointsArg ? 'etcd' : process.argv.includes('--disk') ? 'local etcd (disk)' : 'local etcd (tmpfs)';
  try {
    const secs = quick ? 1 : 3;
    report(`${where} creates/s, 1 writer`, (await rate(1, secs, (i) => storage.create(`/registry/bench/one/${i}`, value))).toFixed(0));
    report(`${where} creates/s, 64 writers`, (await rate(64, secs, (i) => storage.create(`/registry/bench/many/${i}`, value))).toFixed(0));
    report(`${where} gets/s, 1 reader`, (await rate(1, secs, (i) => storage.get(`/registry/bench/one/${i % 100}`))).toFixed(0));
    report(`${where} gets/s, 64 readers`, (await rate(64, secs, (i) => storage.get(`/registry/bench/many/${i % 100}`))).toFixed(0));

    for (let i = 0; i < 10_000; i += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, j) => storage.create(`/registry/range/${String(i + j).padStart(6, '0')}`, value)));
    }
    const runs = quick ? 3 : 10;
    const t = performance.now();
    for (let i = 0; i < runs; i++) {
      const r = await storage.range('/registry/range/');
      if (r.kvs.length !== 10_000) throw new Error(`range returned ${r.kvs.length}`);
    }
    report(`${where} range of 10,000 keys, ms`, ((performance.now() - t) / runs).toFixed(1));

    const delays: number[] = [];
    let sentAt = 0;
    let arrived = () => {};
    const watch = storage.watch('/registry/watched/', await storage.currentRevision(), {
      onEvents: () => {
        delays.push(performance.now() - sentAt);
        arrived();
      },
      onError: (e) => console.error('watch failed:', e),
    });
    for (let i = 0; i < (quick ? 50 : 200); i++) {
      const seen = new Promise<void>((resolve) => (arrived = resolve));
      sentAt = performance.now();
      await storage.create(`/registry/watched/${i}`, value);
      await seen;
    }
    watch.close();
    delays.sort((a, b) => a - b);
    report(`${where} write-to-watch-event delay p50/p99, ms`, `${delays[delays.length >> 1].toFixed(2)} / ${delays[Math.floor(delays.length * 0.99)].toFixed(2)}`);
  } finally {
    await storage.close();
    await cluster?.cleanup();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
