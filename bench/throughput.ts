/**
 * Request throughput with h2load as the client (see lib/h2load.ts): creates,
 * gets, status updates and merge patches of ~1 KB CronTabs, 64 concurrent
 * requests on one keep-alive HTTPS (HTTP/2) connection, on a fresh kapi of its own.
 * Each line also gives the server's CPU time per request, which does not
 * depend on the client. bench/api.ts measures the same with a Node.js client.
 *
 * The server is fresh: its first requests of each kind run while V8 compiles
 * their code, on the core the client needs too. A first round (printed as the
 * "cold" lines) runs each kind on objects of its own; the figures that follow
 * are the server's steady state, which is what the throughput targets mean.
 *
 *   node dist/bench/throughput.js [--quick]
 */
import { BenchClient, fmt, line, withServerCpu } from './lib/client.js';
import { crontab, crontabCrd, crontabsPath } from './lib/crontab.js';
import { encodeObject } from '../src/machinery/protobuf/objects.js';
import { h2load, h2loadInstalled, type H2loadRun } from './lib/h2load.js';
import { startServer } from './lib/server-process.js';

const quick = process.argv.includes('--quick');
const N = quick ? 2000 : 10_000;
const COLD = quick ? 1000 : 3000;
const MERGE = 'application/merge-patch+json';

async function main(): Promise<void> {
  if (!h2loadInstalled()) {
    line('throughput with h2load', 'skipped: h2load is not installed (Debian package nghttp2-client)');
    return;
  }
  const server = await startServer();
  const c = new BenchClient(server.url, server.token, server.ca, 1);
  try {
    await c.expect('POST', '/api/v1/namespaces', 201, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    await c.expect('POST', '/api/v1/namespaces', 201, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cold' } });
    await c.expect('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 201, crontabCrd());
    // The CRD is served once its first object can be created.
    await c.expect('POST', crontabsPath('bench'), 201, crontab('first', 'bench', 0));
    const run = (what: string, load: H2loadRun) => withServerCpu(server, () => h2load(load)).then((r) => line(`${what}, h2load`, fmt(r)));

    /** Creates `n` objects in `ns` (names from generateName), then gets, status updates and merge patches, `n` of each. */
    const round = async (ns: string, n: number, label: (what: string) => string) => {
      const collection = server.url + crontabsPath(ns);
      await run(label(`creates (${n} of ~1 KB)`), { urls: [collection], requests: n, token: server.token, body: crontab(undefined, ns, 3), status: 201 });
      const items = JSON.parse((await c.expect('GET', crontabsPath(ns), 200)).body).items as { metadata: { name: string } }[];
      const urls = items.map((o) => `${collection}/${o.metadata.name}`);
      await run(label('gets'), { urls, requests: n * 2, token: server.token, status: 200 });
      const status = { status: { replicas: 3, phase: 'Running' } };
      await run(label('status updates (merge patch /status)'), { urls: urls.map((u) => `${u}/status`), requests: n, token: server.token, method: 'PATCH', body: status, contentType: MERGE, status: 200 });
      const annotate = { metadata: { annotations: { touched: 'yes' } } };
      await run(label('merge patches'), { urls, requests: n, token: server.token, method: 'PATCH', body: annotate, contentType: MERGE, status: 200 });
    };
    await round('cold', COLD, (what) => `cold: first ${what.replace(/ \(.*\)$/, '')} on a fresh server`);
    await round('bench', N, (what) => what);

    // A built-in kind as Go clients send it (protobuf) and as others do (JSON): ConfigMaps of ~1 KB.
    for (const [format, mediaType] of [
      ['JSON', 'application/json'],
      ['protobuf', 'application/vnd.kubernetes.protobuf'],
    ] as const) {
      const ns = `cm-${format.toLowerCase()}`;
      await c.expect('POST', '/api/v1/namespaces', 201, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      const collection = `${server.url}/api/v1/namespaces/${ns}/configmaps`;
      const cm = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { generateName: 'cm-', labels: { app: 'bench' } }, data: { config: 'x'.repeat(900), mode: 'fast' } };
      const body = format === 'JSON' ? cm : encodeObject(cm);
      await run(`ConfigMap creates (${format}, ${N} of ~1 KB)`, { urls: [collection], requests: N, token: server.token, body, contentType: mediaType, accept: mediaType, status: 201 });
      const items = JSON.parse((await c.expect('GET', `/api/v1/namespaces/${ns}/configmaps`, 200)).body).items as { metadata: { name: string } }[];
      await run(`ConfigMap gets (${format})`, { urls: items.map((o) => `${collection}/${o.metadata.name}`), requests: N * 2, token: server.token, accept: mediaType, status: 200 });
    }
  } finally {
    c.close();
    await server.stop();
    server.cleanup();
  }
}

await main();
