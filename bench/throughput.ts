/**
 * Request throughput with h2load as the client (see lib/h2load.ts): creates,
 * gets, status updates and merge patches of ~1 KB CronTabs, 64 concurrent
 * requests on one keep-alive HTTPS (HTTP/2) connection, on a fresh kapi of its own.
 * Each line also gives the server's CPU time per request, which does not
 * depend on the client. bench/api.ts measures the same with a Node.js client.
 *
 *   node dist/bench/throughput.js [--quick]
 */
import { BenchClient, fmt, line, withServerCpu } from './lib/client.js';
import { crontab, crontabCrd, crontabsPath } from './lib/crontab.js';
import { h2load, h2loadInstalled } from './lib/h2load.js';
import { startServer } from './lib/server-process.js';

const quick = process.argv.includes('--quick');
const N = quick ? 2000 : 10_000;

async function main(): Promise<void> {
  if (!h2loadInstalled()) {
    line('throughput with h2load', 'skipped: h2load is not installed (Debian package nghttp2-client)');
    return;
  }
  const server = await startServer();
  const c = new BenchClient(server.url, server.token, server.ca, 1);
  try {
    await c.expect('POST', '/api/v1/namespaces', 201, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    await c.expect('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 201, crontabCrd());
    const collection = server.url + crontabsPath('bench');
    // The CRD is served once its first object can be created.
    await c.expect('POST', crontabsPath('bench'), 201, crontab('first', 'bench', 0));
    const run = (what: string, load: Parameters<typeof h2load>[0]) =>
      withServerCpu(server, () => h2load(load)).then((r) => line(`${what}, h2load`, fmt(r)));

    // One body for all: the names come from generateName.
    await run(`creates (${N} of ~1 KB)`, { urls: [collection], requests: N, token: server.token, body: crontab(undefined, 'bench', 3), status: 201 });
    const names = (JSON.parse((await c.expect('GET', crontabsPath('bench'), 200)).body).items as { metadata: { name: string } }[]).map((o) => o.metadata.name);
    const urls = names.map((n) => `${collection}/${n}`);
    await run('gets', { urls, requests: N * 2, token: server.token, status: 200 });
    const merge = 'application/merge-patch+json';
    const statusUrls = urls.map((u) => `${u}/status`);
    await run('status updates (merge patch /status)', { urls: statusUrls, requests: N, token: server.token, method: 'PATCH', body: { status: { replicas: 3, phase: 'Running' } }, contentType: merge, status: 200 });
    await run('merge patches', { urls, requests: N, token: server.token, method: 'PATCH', body: { metadata: { annotations: { touched: 'yes' } } }, contentType: merge, status: 200 });
  } finally {
    c.close();
    await server.stop();
    server.cleanup();
  }
}

await main();
