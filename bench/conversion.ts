/**
 * Conversion benchmark (issue 9): list 3,000 objects stored in v1beta1 and read
 * as v1, with conversion None, an in-process converter (`kapi serve
 * --converters`), and a local HTTPS conversion webhook. Prints the first (cold)
 * list and the median of warm lists, whose conversions kapi remembers.
 *
 *   node dist/bench/conversion.js [--quick]
 */
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ensureServingCertificates } from '../src/server/certs.js';
import { BenchClient, line, load, pct } from './lib/client.js';
import { rename } from './lib/rename-converters.js';
import { startServer } from './lib/server-process.js';
import type { KObject } from '../src/api/object.js';

const quick = process.argv.includes('--quick');
const COUNT = quick ? 1000 : 3000;
const GROUP = 'bench.example.com';

async function startWebhook(dir: string): Promise<{ url: string; caBundle: string; close(): void }> {
  const tls = await ensureServingCertificates(dir, { hosts: ['127.0.0.1'] });
  const server = https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString());
      const convertedObjects = review.request.objects.map((o: KObject) => rename(o, review.request.desiredAPIVersion));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid: review.request.uid, convertedObjects, result: { status: 'Success' } } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(server.address() as { port: number }).port}/convert`,
    caBundle: Buffer.from(tls.caCertPem).toString('base64'),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const crd = (plural: string, kind: string, conversion?: unknown) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural, kind },
    conversion,
    versions: ['v1beta1', 'v1'].map((name) => ({ name, served: true, storage: name === 'v1beta1', schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } })),
  },
});

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-bench-conv-'));
  const hook = await startWebhook(dir);
  const converters = join(dirname(fileURLToPath(import.meta.url)), 'lib', 'rename-converters.js');
  const server = await startServer(undefined, ['--converters', converters]);
  const c = new BenchClient(server.url, server.token, server.ca, 4);
  try {
    const cases: Array<[string, string, string, unknown]> = [
      ['conversion None', 'nones', 'None', undefined],
      ['in-process converter', 'inprocs', 'InProc', undefined],
      ['local webhook', 'hooks', 'Hook', { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: hook.url, caBundle: hook.caBundle } } }],
    ];
    for (const [name, plural, kind, conversion] of cases) {
      await c.expect('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 201, crd(plural, kind, conversion));
      await load(64, COUNT, async (i) => {
        const body = { apiVersion: `${GROUP}/v1beta1`, kind, metadata: { name: `o-${i}`, namespace: 'default' }, spec: { value: 'x'.repeat(600), n: i } };
        await c.expect('POST', `/apis/${GROUP}/v1beta1/namespaces/default/${plural}`, 201, body);
      });
      const times: number[] = [];
      for (let i = 0; i < (quick ? 3 : 10); i++) {
        const t = performance.now();
        const r = await c.expect('GET', `/apis/${GROUP}/v1/namespaces/default/${plural}`, 200);
        times.push(performance.now() - t);
        if (i === 0 && JSON.parse(r.body).items.length !== COUNT) throw new Error('short list');
      }
      const cold = times[0];
      const warm = times.slice(1).sort((a, b) => a - b);
      line(`list ${COUNT} v1beta1 objects as v1, ${name}`, `cold ${cold.toFixed(0)} ms, warm ${pct(warm, 0.5).toFixed(0)} ms median`);
    }
  } finally {
    c.close();
    await server.stop();
    server.cleanup();
    hook.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
