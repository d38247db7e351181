/**
 * Lifecycle benchmark (issue 6): delete a namespace holding 10,000 custom
 * resources and wait until it is gone; delete an owner with 1,000 dependents in
 * the background and in the foreground and wait until every dependent is gone.
 * Over HTTPS against a real `kapi serve`. Prints one line per figure.
 *
 *   node dist/bench/lifecycle.js [--quick]
 */
import { performance } from 'node:perf_hooks';
import { BenchClient, line, load } from './lib/client.js';
import { thingsCrd } from './lib/things-crd.js';
import { startServer } from './lib/server-process.js';

const quick = process.argv.includes('--quick');
const OBJECTS = quick ? 2000 : 10_000;
const DEPENDENTS = quick ? 200 : 1000;
const GROUP = 'life.example.com';
const CT = (ns: string) => `/apis/${GROUP}/v1/namespaces/${ns}/things`;

async function until(c: BenchClient, path: string, gone: boolean, timeoutMs = 300_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const r = await c.request('GET', path);
    if ((r.status === 404) === gone) return;
    if (performance.now() > deadline) throw new Error(`timed out waiting on ${path}`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

async function main(): Promise<void> {
  const server = await startServer();
  const c = new BenchClient(server.url, server.token, server.ca, 4);
  try {
    await c.expect('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 201, thingsCrd(GROUP));
    await c.expect('POST', '/api/v1/namespaces', 201, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    await load(64, OBJECTS, async (i) => {
      await c.expect('POST', CT('doomed'), 201, { apiVersion: `${GROUP}/v1`, kind: 'Thing', metadata: { name: `t-${i}` }, spec: { pad: 'x'.repeat(700) } });
    });
    let t = performance.now();
    await c.expect('DELETE', '/api/v1/namespaces/doomed', 200);
    await until(c, '/api/v1/namespaces/doomed', true);
    line(`delete a namespace with ${OBJECTS} custom resources`, `${((performance.now() - t) / 1000).toFixed(2)} s until the namespace is gone`);

    for (const policy of ['Background', 'Foreground']) {
      const owner = JSON.parse((await c.expect('POST', CT('default'), 201, { apiVersion: `${GROUP}/v1`, kind: 'Thing', metadata: { name: `owner-${policy.toLowerCase()}` } })).body);
      const ref = { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, blockOwnerDeletion: true };
      await load(64, DEPENDENTS, async (i) => {
        await c.expect('POST', '/api/v1/namespaces/default/configmaps', 201, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `dep-${policy.toLowerCase()}-${i}`, ownerReferences: [ref] } });
      });
      t = performance.now();
      await c.expect('DELETE', `${CT('default')}/owner-${policy.toLowerCase()}?propagationPolicy=${policy}`, 200);
      await until(c, `${CT('default')}/owner-${policy.toLowerCase()}`, true);
      for (let i = DEPENDENTS - 1; i >= 0; i -= Math.max(1, Math.floor(DEPENDENTS / 10))) await until(c, `/api/v1/namespaces/default/configmaps/dep-${policy.toLowerCase()}-${i}`, true);
      const left = JSON.parse((await c.expect('GET', '/api/v1/namespaces/default/configmaps', 200)).body).items.filter((i: { metadata: { name: string } }) => i.metadata.name.startsWith(`dep-${policy.toLowerCase()}-`)).length;
      line(`cascading ${policy.toLowerCase()} delete of an owner with ${DEPENDENTS} dependents`, `${((performance.now() - t) / 1000).toFixed(2)} s until owner and dependents are gone (${left} left)`);
    }
  } finally {
    c.close();
    await server.stop();
    server.cleanup();
  }
}

await main();
