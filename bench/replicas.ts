/**
 * Replicas benchmark (issue 7): a local etcd (Debian's etcd-server, started on
 * loopback with its data on disk), then creates/s and gets/s with 64 clients
 * through one `kapi serve --etcd-servers` and through two, and the delay for a
 * write through replica A to reach a watcher on replica B. Prints one line per
 * figure, beside which `bench/api.ts` gives the embedded store's.
 *
 *   node dist/bench/replicas.js [--quick]
 */
import { performance } from 'node:perf_hooks';
import { startEtcdCluster } from '../test/storage/etcd-helper.js';
import { BenchClient, connect, fmt, line, load, pct } from './lib/client.js';
import { thingsCrd } from './lib/things-crd.js';
import { startServer, type ServerProcess } from './lib/server-process.js';

const quick = process.argv.includes('--quick');
const OPS = quick ? 1000 : 4000;
const GROUP = 'replicas.example.com';
const CT = `/apis/${GROUP}/v1/namespaces/default/things`;

async function main(): Promise<void> {
  const etcd = await startEtcdCluster({ size: 1, onDisk: true });
  const args = ['--etcd-servers', etcd.endpoints.join(','), '--etcd-prefix', '/kapi-bench'];
  const servers: Array<ServerProcess & { cleanup(): void }> = [];
  try {
    servers.push(await startServer(undefined, args), await startServer(undefined, args));
    const [a, b] = servers.map((s) => new BenchClient(s.url, s.token, s.ca, 4));
    await a.expect('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 201, thingsCrd(GROUP));
    const deadline = performance.now() + 10_000;
    while ((await b.request('GET', CT)).status !== 200) {
      if (performance.now() > deadline) throw new Error('replica B never served the CRD');
      await new Promise((r) => setTimeout(r, 20));
    }
    const body = (name: string) => ({ apiVersion: `${GROUP}/v1`, kind: 'Thing', metadata: { name }, spec: { pad: 'x'.repeat(700) } });
    line('etcd: creates, 64 clients, one replica', fmt(await load(64, OPS, async (i) => void (await a.expect('POST', CT, 201, body(`one-${i}`))))));
    line('etcd: creates, 64 clients, two replicas', fmt(await load(64, OPS, async (i) => void (await (i % 2 ? a : b).expect('POST', CT, 201, body(`two-${i}`))))));
    line('etcd: gets, 64 clients, one replica', fmt(await load(64, OPS * 2, async (i) => void (await a.expect('GET', `${CT}/one-${i % OPS}`, 200)))));
    line('etcd: gets, 64 clients, two replicas', fmt(await load(64, OPS * 2, async (i) => void (await (i % 2 ? a : b).expect('GET', `${CT}/one-${i % OPS}`, 200)))));

    // A watcher on B, writes through A, one at a time: the delay from the write's answer to the event on B.
    const session = connect(servers[1].url, servers[1].ca);
    const rv = JSON.parse((await b.expect('GET', `${CT}?limit=1`, 200)).body).metadata.resourceVersion;
    const stream = session.request({ ':path': `${CT}?watch=true&resourceVersion=${rv}`, authorization: `Bearer ${servers[1].token}` });
    const seen = new Map<string, () => void>();
    let buf = '';
    stream.on('data', (chunk: Buffer) => {
      buf += chunk.toString();
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const name = JSON.parse(buf.slice(0, nl)).object.metadata.name as string;
        buf = buf.slice(nl + 1);
        seen.get(name)?.();
      }
    });
    const delays: number[] = [];
    for (let i = 0; i < (quick ? 50 : 200); i++) {
      const name = `w-${i}`;
      const arrived = new Promise<void>((r) => seen.set(name, r));
      await a.expect('POST', CT, 201, body(name));
      const t = performance.now();
      await arrived;
      delays.push(performance.now() - t);
    }
    delays.sort((x, y) => x - y);
    line('etcd: write through A, seen by a watcher on B', `p50 ${pct(delays, 0.5).toFixed(1)} ms, p99 ${pct(delays, 0.99).toFixed(1)} ms after A answered`);
    stream.close();
    session.close();
    a.close();
    b.close();
  } finally {
    for (const s of servers) {
      await s.stop();
      s.cleanup();
    }
    await etcd.cleanup();
  }
}

await main();
