/**
 * What admission costs a write: ConfigMap creates from 64 clients with no admission configured, with one
 * validating webhook (a local HTTPS server that allows everything), with one ValidatingAdmissionPolicy
 * (one CEL validation), and with one MutatingAdmissionPolicy (an apply configuration adding a label), each in
 * a namespace of its own that only its configuration selects.
 *
 *   node dist/bench/admission.js [--quick]
 */
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureServingCertificates } from '../src/server/certs.js';
import { BenchClient, fmt, line, load, withServerCpu } from './lib/client.js';
import { startServer } from './lib/server-process.js';

const quick = process.argv.includes('--quick');
const N = quick ? 2000 : 10_000;
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-bench-admission-'));
  const tls = await ensureServingCertificates(dir, { hosts: ['127.0.0.1'] });
  const webhook = https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const review = JSON.parse(body);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } }));
    });
  });
  await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
  const port = (webhook.address() as AddressInfo).port;
  const server = await startServer();
  const c = new BenchClient(server.url, server.token, server.ca, 4);
  try {
    for (const ns of ['none', 'webhook', 'policy', 'mutating']) {
      await c.expect('POST', '/api/v1/namespaces', 201, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { bench: ns } } });
    }
    await c.expect('POST', `${ADMISSION}/validatingwebhookconfigurations`, 201, {
      metadata: { name: 'bench' },
      webhooks: [
        {
          name: 'allow.bench.example.com',
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          namespaceSelector: { matchLabels: { bench: 'webhook' } },
          clientConfig: { url: `https://127.0.0.1:${port}/`, caBundle: Buffer.from(tls.caCertPem).toString('base64') },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    await c.expect('POST', `${ADMISSION}/validatingadmissionpolicies`, 201, {
      metadata: { name: 'bench' },
      spec: {
        matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] },
        validations: [{ expression: "object.metadata.name.size() < 64 && !('forbidden' in object.data)" }],
      },
    });
    await c.expect('POST', `${ADMISSION}/validatingadmissionpolicybindings`, 201, {
      metadata: { name: 'bench' },
      spec: { policyName: 'bench', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { bench: 'policy' } } } },
    });
    await c.expect('POST', `${ADMISSION}/mutatingadmissionpolicies`, 201, {
      metadata: { name: 'bench' },
      spec: {
        reinvocationPolicy: 'Never',
        matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] },
        mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"mutated": "yes"}}}' } }],
      },
    });
    await c.expect('POST', `${ADMISSION}/mutatingadmissionpolicybindings`, 201, {
      metadata: { name: 'bench' },
      spec: { policyName: 'bench', matchResources: { namespaceSelector: { matchLabels: { bench: 'mutating' } } } },
    });
    await new Promise((r) => setTimeout(r, 200));
    // Rounds in turn, each setup measured in every round: the server keeps warming up for a while, and a
    // setup measured only first (or last) would pay (or gain) for it. The last round is printed.
    const setups = ['none', 'webhook', 'policy', 'mutating'];
    const labels: Record<string, string> = { none: 'none', webhook: 'one validating webhook', policy: 'one ValidatingAdmissionPolicy', mutating: 'one MutatingAdmissionPolicy' };
    const label = (ns: string) => labels[ns];
    let last: Record<string, string> = {};
    for (let round = 0; round < 3; round++) {
      last = {};
      for (const ns of round % 2 === 0 ? setups : [...setups].reverse()) {
        const result = await withServerCpu(server, () =>
          load(64, N / 2, async (i) => {
            await c.expect('POST', `/api/v1/namespaces/${ns}/configmaps`, 201, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${round}-${i}` }, data: { a: 'b'.repeat(512) } });
          }),
        );
        last[ns] = fmt(result);
      }
    }
    for (const ns of setups) line(`ConfigMap creates, 64 clients, admission: ${label(ns)}`, last[ns]);
  } finally {
    c.close();
    await server.stop();
    server.cleanup();
    webhook.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
