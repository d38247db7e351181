/**
 * Many CRDs in one group on one kapi (the embedded store): 10,000 (2,000 with --quick) created 16 at a time,
 * with the time and the server's RSS after each thousand, then the time until the last one's resource is served.
 * A thousand should cost the same as the one before: anything a CRD does that looks at every other CRD shows here.
 */
import { performance } from 'node:perf_hooks';
import { BenchClient, line, load } from './lib/client.js';
import { crontabCrd, GROUP } from './lib/crontab.js';
import { startServer } from './lib/server-process.js';

const quick = process.argv.includes('--quick');
const TOTAL = quick ? 2_000 : 10_000;

const server = await startServer();
const client = new BenchClient(server.url, server.token, server.ca, 4);
try {
  const t0 = performance.now();
  let t = t0;
  for (let from = 0; from < TOTAL; from += 1000) {
    await load(16, 1000, async (i) => {
      await client.expect('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 201, crontabCrd(`kinds${from + i}`, `Kind${from + i}`));
    });
    const now = performance.now();
    line(`CRDs ${from + 1}-${from + 1000} created`, `${(now - t).toFixed(0)} ms, server RSS ${server.rssMb().toFixed(0)} MB`);
    t = now;
  }
  for (let i = 0; ; i++) {
    if ((await client.request('GET', `/apis/${GROUP}/v1/namespaces/default/kinds${TOTAL - 1}`)).status === 200) break;
    if (i > 600) throw new Error('the last CRD was not served in 30 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  line(`${TOTAL} CRDs created and served`, `${((performance.now() - t0) / 1000).toFixed(1)} s, server RSS ${server.rssMb().toFixed(0)} MB`);

  // Discovery and the OpenAPI documents with all of them: the first answer after the last change (cold: nobody had
  // asked for it), the next (warm), and the answer to a client that has it (If-None-Match: 304).
  const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
  const documents: Array<[string, string, Record<string, string>]> = [
    ['aggregated discovery /apis', '/apis', { accept: AGGREGATED }],
    [`discovery /apis/${GROUP}/v1`, `/apis/${GROUP}/v1`, {}],
    ['/openapi/v2', '/openapi/v2', {}],
    ['/openapi/v2, gzip (as Go clients ask)', '/openapi/v2', { 'accept-encoding': 'gzip' }],
    ['/openapi/v3 (index)', '/openapi/v3', {}],
    ['/openapi/v3/apis/apps/v1', '/openapi/v3/apis/apps/v1', {}],
    [`/openapi/v3/apis/${GROUP}/v1`, `/openapi/v3/apis/${GROUP}/v1`, {}],
  ];
  const times = new Map<string, string[]>();
  for (const [what, path, headers] of documents) {
    const row: string[] = [];
    times.set(what, row);
    let etag: string | undefined;
    let size = 0;
    for (const turn of ['cold', 'warm', '304']) {
      const t1 = performance.now();
      const r = await client.requestBytes('GET', path, undefined, turn === '304' && etag ? { ...headers, 'if-none-match': etag } : headers);
      const ms = performance.now() - t1;
      if (turn === '304' && !etag) {
        row.push('no ETag');
        continue;
      }
      if (r.status !== (turn === '304' ? 304 : 200)) throw new Error(`${path} (${turn}): ${r.status} ${r.body.subarray(0, 200).toString()}`);
      if (turn === 'cold') {
        etag = typeof r.headers.etag === 'string' ? r.headers.etag : undefined;
        size = r.body.length;
      }
      row.push(`${turn} ${ms.toFixed(0)}`);
    }
    row[0] = `${(size / 1048576).toFixed(1)} MiB: ${row[0]}`;
  }
  // Then one more CRD, and each document again: at once, and (after another) once kapi has made the documents in
  // use again in the background (it starts a second after the last change).
  let extra = TOTAL;
  for (const [turn, waitMs] of [
    ['after one more CRD', 0],
    ['one more, 3 s later', 3000],
  ] as const) {
    const name = `kinds${extra}`;
    await client.expect('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 201, crontabCrd(name, `Kind${extra++}`));
    for (let i = 0; (await client.request('GET', `/apis/${GROUP}/v1/namespaces/default/${name}`)).status !== 200; i++) {
      if (i > 600) throw new Error(`${name} was not served in 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    if (waitMs) await new Promise((r) => setTimeout(r, waitMs));
    for (const [what, path, headers] of documents) {
      const t1 = performance.now();
      const r = await client.requestBytes('GET', path, undefined, headers);
      if (r.status !== 200) throw new Error(`${path} (${turn}): ${r.status}`);
      times.get(what)!.push(`${turn} ${(performance.now() - t1).toFixed(0)}`);
    }
  }
  for (const [what, row] of times) line(`${what}, ${TOTAL} CRDs`, `${row.join(' / ')} ms`);
} finally {
  client.close();
  await server.stop();
  server.cleanup();
}
