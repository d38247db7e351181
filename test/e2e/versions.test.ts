/** Multi-version CRDs: conversion None, storage version changes and migration, deprecation, webhook and in-process conversion. */
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureServingCertificates } from '../../src/server/certs.js';
import { clientFromKubeconfig } from '../../src/cli/kube-client.js';
import { migrateStorage } from '../../src/cli/migrate-storage.js';
import { startTestServer, until, watchEvents, type TestServer } from './harness.js';

const GROUP = 'multi.example.com';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };

function multiCrd(plural: string, kind: string, conversion?: unknown) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, kind },
      conversion,
      versions: [
        { name: 'v1beta1', served: true, storage: false, schema },
        { name: 'v1', served: true, storage: true, schema },
        { name: 'v0', served: false, storage: false, schema },
      ],
    },
  };
}
const path = (plural: string, v: string) => `/apis/${GROUP}/${v}/namespaces/default/${plural}`;

describe('multiple versions with conversion None', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', CRDS, { body: multiCrd('things', 'Thing') })).status, 201);
  });
  after(() => s.stop());

  it('serves the same objects in every served version, stored in the storage version', async () => {
    const created = await s.request('POST', path('things', 'v1beta1'), { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'Thing', metadata: { name: 'a' }, spec: { x: 1 } } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.apiVersion, `${GROUP}/v1beta1`);
    const raw = await s.kapi.storage.get(`/registry/${GROUP}/things/default/a`);
    assert.equal(JSON.parse(raw!.value).apiVersion, `${GROUP}/v1`, 'stored in the storage version');
    assert.equal((await s.request('GET', `${path('things', 'v1')}/a`)).json.apiVersion, `${GROUP}/v1`);
    const list = (await s.request('GET', path('things', 'v1beta1'))).json;
    assert.equal(list.apiVersion, `${GROUP}/v1beta1`);
    assert.equal(list.items[0].apiVersion, `${GROUP}/v1beta1`);
    const w1 = watchEvents(s.kapi, `${path('things', 'v1beta1')}?watch=true&resourceVersion=${list.metadata.resourceVersion}`, 1);
    const w2 = watchEvents(s.kapi, `${path('things', 'v1')}?watch=true&resourceVersion=${list.metadata.resourceVersion}`, 1);
    await Promise.all([w1.status, w2.status]);
    const cur = (await s.request('GET', `${path('things', 'v1')}/a`)).json;
    const updated = await s.request('PUT', `${path('things', 'v1')}/a`, { body: { ...cur, spec: { x: 2 } } });
    assert.equal(updated.json.apiVersion, `${GROUP}/v1`);
    assert.equal((await w1.events)[0].object.apiVersion, `${GROUP}/v1beta1`);
    assert.equal((await w2.events)[0].object.apiVersion, `${GROUP}/v1`);
    for (const method of ['GET', 'POST']) assert.equal((await s.request(method, path('things', 'v0'), method === 'POST' ? { body: {} } : {})).status, 404);
    const groupDoc = (await s.request('GET', `/apis/${GROUP}`)).json;
    assert.deepEqual(groupDoc.versions.map((v: any) => v.version), ['v1', 'v1beta1']);
    assert.equal(groupDoc.preferredVersion.version, 'v1');
  });

  it('records every storage version and migrates objects to the current one', async () => {
    const crd = (await s.request('GET', `${CRDS}/things.${GROUP}`)).json;
    crd.spec.versions[0].storage = true;
    crd.spec.versions[1].storage = false;
    const res = await s.request('PUT', `${CRDS}/things.${GROUP}`, { body: crd });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.status.storedVersions, ['v1', 'v1beta1']);
    await s.request('POST', path('things', 'v1'), { body: { apiVersion: `${GROUP}/v1`, kind: 'Thing', metadata: { name: 'b' } } });
    assert.equal(JSON.parse((await s.kapi.storage.get(`/registry/${GROUP}/things/default/b`))!.value).apiVersion, `${GROUP}/v1beta1`);
    assert.equal((await s.request('GET', `${path('things', 'v1beta1')}/a`)).status, 200, 'objects written under the old storage version stay readable');
    const result = await migrateStorage(clientFromKubeconfig(s.kapi.kubeconfigPath), `things.${GROUP}`);
    assert.deepEqual(result, { storageVersion: 'v1beta1', migrated: 2, storedVersions: ['v1beta1'] });
    assert.equal(JSON.parse((await s.kapi.storage.get(`/registry/${GROUP}/things/default/a`))!.value).apiVersion, `${GROUP}/v1beta1`);
  });

  // The storage codec defaults what it decodes in the schema of the version it was stored in
  // (unstructuredDefaulter), not the current storage version's: a labels-only rewrite changes no spec.
  it('keeps generation on a labels-only rewrite after a storage version switch', async () => {
    const structural = (extra: Record<string, unknown>) => ({
      openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { x: { type: 'integer' }, ...extra } } } },
    });
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `switches.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'switches', kind: 'Switch' },
        versions: [
          { name: 'v1beta1', served: true, storage: true, schema: structural({}) },
          { name: 'v1', served: true, storage: false, schema: structural({ d: { type: 'string', default: 'dv' } }) },
        ],
      },
    };
    assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
    const created = await s.request('POST', path('switches', 'v1beta1'), { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'Switch', metadata: { name: 's' }, spec: { x: 1 } } });
    assert.equal(created.status, 201, created.text);
    const stored = (await s.request('GET', `${CRDS}/switches.${GROUP}`)).json;
    stored.spec.versions[0].storage = false;
    stored.spec.versions[1].storage = true;
    assert.equal((await s.request('PUT', `${CRDS}/switches.${GROUP}`, { body: stored })).status, 200);
    await until('v1 is the storage version', async () => {
      await s.request('POST', path('switches', 'v1'), { body: { apiVersion: `${GROUP}/v1`, kind: 'Switch', metadata: { generateName: 'probe-' }, spec: {} } });
      const probes = (await s.request('GET', path('switches', 'v1beta1'))).json.items.filter((o: any) => o.metadata.name.startsWith('probe-'));
      return probes.some((o: any) => o.spec?.d === 'dv');
    });
    const old = (await s.request('GET', `${path('switches', 'v1beta1')}/s`)).json;
    assert.deepEqual(old.spec, { x: 1 }, 'read in the version it is stored in: no v1 default');
    const put = await s.request('PUT', `${path('switches', 'v1beta1')}/s`, { body: { ...old, metadata: { ...old.metadata, labels: { a: 'b' } } } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.metadata.generation, 1);
    const now = (await s.request('GET', `${path('switches', 'v1')}/s`)).json;
    const relabel = await s.request('PUT', `${path('switches', 'v1')}/s`, { body: { ...now, metadata: { ...now.metadata, labels: { a: 'c' } } } });
    assert.equal(relabel.status, 200, relabel.text);
    assert.equal(relabel.json.metadata.generation, 1);
  });

  it('ends open watches when the CRD spec changes, and not when only its metadata does', async () => {
    // Long enough that a watch ended by the change has surely ended, and one left open has surely stayed.
    const WINDOW_MS = 1000;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    assert.equal((await s.request('POST', CRDS, { body: multiCrd('specs', 'Spec') })).status, 201);
    const list = await s.request('GET', path('specs', 'v1'));
    assert.equal(list.status, 200, list.text);
    const w = watchEvents(s.kapi, `${path('specs', 'v1')}?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`, 100, 30_000);
    let endedAt: number | undefined;
    const ended = w.events.then(
      (events) => ((endedAt = Date.now()), events),
      (err) => ((endedAt = Date.now()), Promise.reject(err)),
    );
    ended.catch(() => {});
    try {
      assert.equal(await w.status, 200);
      // A change to the CRD's metadata only: the same generation, the watch goes on.
      const labelled = await s.request('PATCH', `${CRDS}/specs.${GROUP}`, { body: { metadata: { labels: { touched: 'yes' } } }, contentType: 'application/merge-patch+json' });
      assert.equal(labelled.status, 200, labelled.text);
      assert.equal(labelled.json.metadata.generation, 1);
      const created = await s.request('POST', path('specs', 'v1'), { body: { apiVersion: `${GROUP}/v1`, kind: 'Spec', metadata: { name: 'before' } } });
      assert.equal(created.status, 201, created.text);
      await sleep(WINDOW_MS);
      assert.equal(endedAt, undefined, `the watch stayed open for ${WINDOW_MS} ms after a metadata-only change`);

      // A spec change (v1beta1 deprecated): a new generation, and the watch ends, cleanly, at once.
      const crd = labelled.json;
      crd.spec.versions.find((v: any) => v.name === 'v1beta1').deprecated = true;
      const changed = await s.request('PUT', `${CRDS}/specs.${GROUP}`, { body: crd });
      assert.equal(changed.status, 200, changed.text);
      assert.equal(changed.json.metadata.generation, 2);
      const events = await Promise.race([ended, sleep(WINDOW_MS).then(() => undefined)]);
      assert.ok(events, `the watch did not end within ${WINDOW_MS} ms of the spec change`);
      assert.deepEqual(events.map((e: any) => [e.type, e.object.metadata.name]), [['ADDED', 'before']], 'the events before the change, and no ERROR');

      // Clients watch again from their last revision, and are served under the new spec.
      const again = watchEvents(s.kapi, `${path('specs', 'v1')}?watch=true&resourceVersion=${events[0].object.metadata.resourceVersion}`, 1);
      assert.equal(await again.status, 200);
      const next = await s.request('POST', path('specs', 'v1'), { body: { apiVersion: `${GROUP}/v1`, kind: 'Spec', metadata: { name: 'after' } } });
      assert.equal(next.status, 201, next.text);
      assert.deepEqual((await again.events).map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'after']]);
    } finally {
      w.close();
    }
  });

  it('warns on every request to a deprecated version', async () => {
    const crd = multiCrd('olds', 'Old') as any;
    crd.spec.versions[0].deprecated = true;
    crd.spec.versions.push({ name: 'v1alpha1', served: true, storage: false, deprecated: true, deprecationWarning: 'custom deprecation warning', schema });
    assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
    assert.equal((await s.request('GET', path('olds', 'v1beta1'))).headers.warning, `299 - "${GROUP}/v1beta1 Old is deprecated; use ${GROUP}/v1 Old"`);
    assert.equal((await s.request('GET', path('olds', 'v1alpha1'))).headers.warning, '299 - "custom deprecation warning"');
    assert.equal((await s.request('GET', path('olds', 'v1'))).headers.warning, undefined);
  });
});

/** A conversion webhook: v1beta1 has spec.value, v1 has spec.data. `mode` makes it misbehave. */
async function startWebhook(dir: string) {
  const tls = await ensureServingCertificates(dir, { hosts: ['127.0.0.1', 'converter.default.svc'] });
  const state = { reviews: 0, objects: 0, mode: 'ok' as string };
  const server = https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const review = JSON.parse(body);
      state.reviews++;
      state.objects += review.request.objects.length;
      if (state.mode === 'hang') return;
      if (state.mode === 'trickle') {
        // A byte every 100 ms: never idle, never done (the timeout must cover the whole answer).
        res.writeHead(200, { 'Content-Type': 'application/json' });
        const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(' ')), 100);
        res.once('close', () => clearInterval(t));
        return;
      }
      if (state.mode === 'huge') {
        // More than twice the review and 3 MiB besides.
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(`{"pad":"${'x'.repeat(4 * 1024 * 1024)}"}`);
        return;
      }
      if (state.mode === 'status500') {
        res.writeHead(500).end('boom');
        return;
      }
      const to = review.request.desiredAPIVersion as string;
      const converted = review.request.objects.map((o: any) => {
        const out = structuredClone(o);
        out.apiVersion = to;
        if (to.endsWith('/v1')) {
          out.spec = { data: o.spec?.value };
        } else {
          out.spec = { value: o.spec?.data };
        }
        out.metadata.labels = { ...(o.metadata.labels ?? {}), converted: 'yes' };
        out.metadata.generation = 999; // ignored: only labels and annotations are taken
        if (state.mode === 'wrongUid') out.metadata.uid = 'not-the-same';
        return out;
      });
      const response =
        state.mode === 'failure'
          ? { uid: review.request.uid, convertedObjects: [], result: { status: 'Failure', message: 'cannot convert that' } }
          : { uid: review.request.uid, convertedObjects: state.mode === 'zero' ? [] : converted, result: { status: 'Success' } };
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { state, port, caBundle: Buffer.from(tls.caCertPem).toString('base64'), close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

describe('webhook conversion', () => {
  let s: TestServer;
  let hook: Awaited<ReturnType<typeof startWebhook>>;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-webhook-'));
    hook = await startWebhook(dir);
    s = await startTestServer({ webhookTimeoutMs: 500 });
    const conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `https://127.0.0.1:${hook.port}/convert`, caBundle: hook.caBundle } } };
    const res = await s.request('POST', CRDS, { body: multiCrd('hooks', 'Hook', conversion) });
    assert.equal(res.status, 201, res.text);
  });
  after(async () => {
    await s.stop();
    await hook.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('converts on write, read, list (one review for many objects) and watch', async () => {
    const created = await s.request('POST', path('hooks', 'v1beta1'), { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'Hook', metadata: { name: 'h1' }, spec: { value: 'one' } } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json.spec, { value: 'one' });
    const stored = JSON.parse((await s.kapi.storage.get(`/registry/${GROUP}/hooks/default/h1`))!.value);
    assert.deepEqual(stored.spec, { data: 'one' });
    assert.equal(stored.metadata.generation, 1);
    for (const n of ['h2', 'h3']) await s.request('POST', path('hooks', 'v1'), { body: { apiVersion: `${GROUP}/v1`, kind: 'Hook', metadata: { name: n }, spec: { data: n } } });
    const before = hook.state.reviews;
    const list = await s.request('GET', path('hooks', 'v1beta1'));
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.json.items.map((i: any) => i.spec.value), ['one', 'h2', 'h3']);
    assert.ok(hook.state.reviews - before <= 1, 'one review for the whole list');
    const asV1 = await s.request('GET', `${path('hooks', 'v1')}/h1`);
    assert.deepEqual(asV1.json.spec, { data: 'one' }, 'objects already in the requested version are not sent');
    const w = watchEvents(s.kapi, `${path('hooks', 'v1beta1')}?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`, 1);
    await w.status;
    await s.request('POST', path('hooks', 'v1'), { body: { apiVersion: `${GROUP}/v1`, kind: 'Hook', metadata: { name: 'h4' }, spec: { data: 'four' } } });
    const [ev] = await w.events;
    assert.deepEqual(ev.object.spec, { value: 'four' });
    assert.equal(ev.object.metadata.labels.converted, 'yes');
  });

  it('reports a misbehaving webhook with upstream texts', async () => {
    // Each case reads a fresh object: a conversion once done is remembered for that object.
    let n = 0;
    const get = async () => {
      const name = `m${n++}`;
      await s.request('POST', path('hooks', 'v1'), { body: { apiVersion: `${GROUP}/v1`, kind: 'Hook', metadata: { name }, spec: { data: name } } });
      return s.request('GET', `${path('hooks', 'v1beta1')}/${name}`);
    };
    const cases: Array<[string, RegExp]> = [
      ['wrongUid', /must have the same UID/],
      ['zero', /returned 0 objects, expected 1/],
      ['failure', /cannot convert that/],
      ['status500', /the server rejected our request/],
      ['hang', /context deadline exceeded/],
      ['trickle', /context deadline exceeded/],
      ['huge', /is larger than \d+ bytes/],
    ];
    for (const [mode, re] of cases) {
      hook.state.mode = mode;
      const res = await get();
      assert.equal(res.status, 500, `${mode}: ${res.text}`);
      assert.equal(res.json.reason, 'InternalError');
      assert.match(res.json.message, /conversion webhook for multi\.example\.com\/v1beta1, Kind=Hook failed: /);
      assert.match(res.json.message, re, mode);
    }
    hook.state.mode = 'ok';
    assert.equal((await get()).status, 200);
  });

  it('reaches a webhook through a service reference resolved by Endpoints', async () => {
    await s.request('POST', '/api/v1/namespaces/default/services', { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'converter' }, spec: { ports: [{ name: 'https', port: 443, targetPort: hook.port }] } } });
    await s.request('POST', '/api/v1/namespaces/default/endpoints', {
      body: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'converter' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: hook.port }] }] },
    });
    const crd = multiCrd('svchooks', 'SvcHook', { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { namespace: 'default', name: 'converter', path: '/convert' }, caBundle: hook.caBundle } } });
    assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
    const res = await s.request('POST', path('svchooks', 'v1beta1'), { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'SvcHook', metadata: { name: 's1' }, spec: { value: 'via-service' } } });
    assert.equal(res.status, 201, res.text);
    const stored = JSON.parse((await s.kapi.storage.get(`/registry/${GROUP}/svchooks/default/s1`))!.value);
    assert.deepEqual(stored.spec, { data: 'via-service' });
  });
});

describe('in-process converters', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({
      converters: {
        [`inprocs.${GROUP}`]: (obj, to) => ({ ...obj, apiVersion: to, spec: to.endsWith('/v1') ? { data: obj.spec?.value } : { value: obj.spec?.data } }),
        // A converter that rewrites the managedFields entries' versions in place, as a user's may.
        [`rewrites.${GROUP}`]: (obj, to) => {
          for (const e of obj.metadata?.managedFields ?? []) {
            e.apiVersion = to;
            e.fieldsV1['f:metadata'] ??= {};
          }
          return { ...obj, apiVersion: to, spec: to.endsWith('/v1') ? { data: obj.spec?.value } : { value: obj.spec?.data } };
        },
      },
    });
    assert.equal((await s.request('POST', CRDS, { body: multiCrd('inprocs', 'InProc') })).status, 201);
  });
  after(() => s.stop());

  it('converts with a TypeScript function registered with kapi', async () => {
    const res = await s.request('POST', path('inprocs', 'v1beta1'), { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'InProc', metadata: { name: 'p' }, spec: { value: 'x' } } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.json.spec, { value: 'x' });
    assert.deepEqual((await s.request('GET', `${path('inprocs', 'v1')}/p`)).json.spec, { data: 'x' });
  });

  it('gives the converter objects it may change anywhere, managedFields included', async () => {
    assert.equal((await s.request('POST', CRDS, { body: multiCrd('rewrites', 'Rewrite') })).status, 201);
    // Served when the CRD's POST returns: the first create succeeds, no retry.
    const res = await s.request('POST', path('rewrites', 'v1beta1'), { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'Rewrite', metadata: { name: 'r' }, spec: { value: 'y' } } });
    assert.equal(res.status, 201, res.text);
    const got = await s.request('GET', `${path('rewrites', 'v1')}/r`);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.json.spec, { data: 'y' });
    // As upstream, only labels and annotations may change in a converted object's metadata.
    assert.equal(got.json.metadata.managedFields[0].apiVersion, `${GROUP}/v1beta1`);
    const again = await s.request('GET', `${path('rewrites', 'v1')}/r`);
    assert.deepEqual(again.json, got.json);
  });
});

/**
 * Versions whose schemas differ (v1beta1 spec.cronSpec and status.lastRun, v1 spec.schedule and
 * status.lastSchedule, neither preserving unknown fields) and a converter that renames between them, in
 * process or as a conversion webhook: no write through either version loses a field, in either direction,
 * through create, update, every patch type, apply, /status, /scale and dry run.
 */
function renameVersions(obj: any, to: string) {
  const moves: Array<[string, string, string]> = to.endsWith('/v1')
    ? [['spec', 'cronSpec', 'schedule'], ['status', 'lastRun', 'lastSchedule']]
    : [['spec', 'schedule', 'cronSpec'], ['status', 'lastSchedule', 'lastRun']];
  const out = { ...obj, apiVersion: to };
  for (const [part, from, into] of moves) {
    if (!obj[part] || !(from in obj[part])) continue;
    const { [from]: value, ...rest } = obj[part];
    out[part] = { ...rest, [into]: value };
  }
  return out;
}

async function startRenamingWebhook(dir: string) {
  const tls = await ensureServingCertificates(dir, { hosts: ['127.0.0.1'] });
  const server = https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const review = JSON.parse(body);
      const convertedObjects = review.request.objects.map((o: any) => renameVersions(o, review.request.desiredAPIVersion));
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid: review.request.uid, convertedObjects, result: { status: 'Success' } } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `https://127.0.0.1:${port}/convert`, caBundle: Buffer.from(tls.caCertPem).toString('base64') } } },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

for (const via of ['an in-process converter', 'a conversion webhook']) {
  describe(`versions with different schemas, renamed by ${via}`, () => {
    let s: TestServer;
    let dir: string;
    let hook: Awaited<ReturnType<typeof startRenamingWebhook>> | undefined;
    const structural = (specField: string, statusField: string) => ({
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: { type: 'object', properties: { [specField]: { type: 'string' }, replicas: { type: 'integer' } } },
          status: { type: 'object', properties: { [statusField]: { type: 'string' }, replicas: { type: 'integer' } } },
        },
      },
    });
    const subresources = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } };
    const stored = async (name: string) => JSON.parse((await s.kapi.storage.get(`/registry/${GROUP}/renames/default/${name}`))!.value);
    const beta = path('renames', 'v1beta1');
    const v1 = path('renames', 'v1');
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'kapi-rename-'));
      hook = via.includes('webhook') ? await startRenamingWebhook(dir) : undefined;
      s = await startTestServer(hook ? {} : { converters: { [`renames.${GROUP}`]: renameVersions } });
      const crd = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `renames.${GROUP}` },
        spec: {
          group: GROUP,
          scope: 'Namespaced',
          names: { plural: 'renames', kind: 'Rename' },
          conversion: hook?.conversion,
          versions: [
            { name: 'v1beta1', served: true, storage: false, schema: structural('cronSpec', 'lastRun'), subresources, selectableFields: [{ jsonPath: '.spec.cronSpec' }] },
            { name: 'v1', served: true, storage: true, schema: structural('schedule', 'lastSchedule'), subresources, selectableFields: [{ jsonPath: '.spec.schedule' }] },
          ],
        },
      };
      const res = await s.request('POST', CRDS, { body: crd });
      assert.equal(res.status, 201, res.text);
    });
    after(async () => {
      await s.stop();
      await hook?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('keeps the renamed field on create and update through the other version, strictly validated, without warnings', async () => {
      const created = await s.request('POST', `${beta}?fieldValidation=Strict`, { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'Rename', metadata: { name: 'a' }, spec: { cronSpec: '*/5' } } });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.headers.warning, undefined);
      assert.deepEqual(created.json.spec, { cronSpec: '*/5' });
      assert.deepEqual((await stored('a')).spec, { schedule: '*/5' });
      const dry = await s.request('POST', `${beta}?dryRun=All`, { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'Rename', metadata: { name: 'dry' }, spec: { cronSpec: 'dry' } } });
      assert.equal(dry.status, 201, dry.text);
      assert.deepEqual(dry.json.spec, { cronSpec: 'dry' }, 'dry run answers what a create would store');
      const viaV1 = await s.request('POST', v1, { body: { apiVersion: `${GROUP}/v1`, kind: 'Rename', metadata: { name: 'b' }, spec: { schedule: '@daily' } } });
      assert.equal(viaV1.status, 201, viaV1.text);
      assert.deepEqual((await s.request('GET', `${beta}/b`)).json.spec, { cronSpec: '@daily' });
      const cur = (await s.request('GET', `${beta}/a`)).json;
      const put = await s.request('PUT', `${beta}/a`, { body: { ...cur, spec: { cronSpec: '*/10', replicas: 2 } } });
      assert.equal(put.status, 200, put.text);
      assert.deepEqual((await stored('a')).spec, { schedule: '*/10', replicas: 2 });
    });

    it('keeps the stored spec through label, merge, JSON and apply patches in the other version', async () => {
      const label = await s.request('PATCH', `${beta}/b`, { body: { metadata: { labels: { x: 'y' } } }, contentType: 'application/merge-patch+json' });
      assert.equal(label.status, 200, label.text);
      assert.deepEqual((await stored('b')).spec, { schedule: '@daily' }, 'a label patch through v1beta1 keeps the spec written through v1');
      const json = await s.request('PATCH', `${beta}/b`, { body: [{ op: 'replace', path: '/spec/cronSpec', value: '@hourly' }], contentType: 'application/json-patch+json' });
      assert.equal(json.status, 200, json.text);
      assert.deepEqual((await stored('b')).spec, { schedule: '@hourly' });
      const applied = await s.request('PATCH', `${beta}/c?fieldManager=test&fieldValidation=Strict`, { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'Rename', metadata: { name: 'c' }, spec: { cronSpec: 'applied' } }, contentType: 'application/apply-patch+yaml' });
      assert.equal(applied.status, 201, applied.text);
      assert.deepEqual((await stored('c')).spec, { schedule: 'applied' });
      const v1Label = await s.request('PATCH', `${v1}/c`, { body: { metadata: { labels: { z: 'w' } } }, contentType: 'application/merge-patch+json' });
      assert.equal(v1Label.status, 200, v1Label.text);
      assert.deepEqual((await stored('c')).spec, { schedule: 'applied' });
      assert.deepEqual((await s.request('GET', `${beta}/c`)).json.spec, { cronSpec: 'applied' });
    });

    it('keeps spec and status through /status and /scale in the other version, dry run included', async () => {
      assert.equal((await s.request('POST', beta, { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'Rename', metadata: { name: 'd' }, spec: { cronSpec: 'keep', replicas: 1 } } })).status, 201);
      const cur = (await s.request('GET', `${beta}/d`)).json;
      const status = await s.request('PUT', `${beta}/d/status`, { body: { ...cur, status: { lastRun: 'now', replicas: 1 } } });
      assert.equal(status.status, 200, status.text);
      assert.deepEqual((await stored('d')).status, { lastSchedule: 'now', replicas: 1 });
      assert.deepEqual((await stored('d')).spec, { schedule: 'keep', replicas: 1 });
      const dryStatus = await s.request('PATCH', `${beta}/d/status?dryRun=All`, { body: { status: { lastRun: 'dry' } }, contentType: 'application/merge-patch+json' });
      assert.equal(dryStatus.status, 200, dryStatus.text);
      assert.deepEqual(dryStatus.json.status, { lastRun: 'dry', replicas: 1 });
      const patched = await s.request('PATCH', `${beta}/d/status`, { body: { status: { lastRun: 'later' } }, contentType: 'application/merge-patch+json' });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual((await stored('d')).status, { lastSchedule: 'later', replicas: 1 });
      const scale = await s.request('GET', `${beta}/d/scale`);
      assert.equal(scale.status, 200, scale.text);
      assert.equal(scale.json.spec.replicas, 1);
      const scaled = await s.request('PUT', `${beta}/d/scale`, { body: { ...scale.json, spec: { replicas: 3 } } });
      assert.equal(scaled.status, 200, scaled.text);
      assert.deepEqual((await stored('d')).spec, { schedule: 'keep', replicas: 3 });
      const dryScale = await s.request('PATCH', `${beta}/d/scale?dryRun=All`, { body: { spec: { replicas: 7 } }, contentType: 'application/merge-patch+json' });
      assert.equal(dryScale.status, 200, dryScale.text);
      assert.equal(dryScale.json.spec.replicas, 7);
      assert.deepEqual((await stored('d')).spec, { schedule: 'keep', replicas: 3 });
      assert.deepEqual((await stored('d')).status, { lastSchedule: 'later', replicas: 1 });
    });

    it('validates and warns in the version the client wrote, then stores in the storage version', async () => {
      const bad = await s.request('POST', beta, { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'Rename', metadata: { name: 'bad' }, spec: { cronSpec: 5 } } });
      assert.equal(bad.status, 422, bad.text);
      assert.equal(bad.json.message, `Rename.${GROUP} "bad" is invalid: spec.cronSpec: Invalid value: "integer": spec.cronSpec in body must be of type string: "integer"`);
      const badUpdate = await s.request('PATCH', `${beta}/a`, { body: { spec: { cronSpec: true } }, contentType: 'application/merge-patch+json' });
      assert.equal(badUpdate.status, 422, badUpdate.text);
      assert.match(badUpdate.json.message, /spec\.cronSpec: Invalid value: "boolean"/);
      const unknown = await s.request('POST', beta, { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'Rename', metadata: { name: 'unknown' }, spec: { cronSpec: 'x', schedule: 'y' } } });
      assert.equal(unknown.status, 201, unknown.text);
      assert.equal(unknown.headers.warning, '299 - "unknown field \\"spec.schedule\\""', 'the v1 field is unknown in v1beta1');
      assert.deepEqual((await stored('unknown')).spec, { schedule: 'x' }, 'pruned in v1beta1, then converted');
    });

    it('selects on the selectable fields of the requested version, in lists, pages, watches and deletecollection', async () => {
      for (const [name, cronSpec] of [['sel-1', 'pick'], ['sel-2', 'other'], ['sel-3', 'pick'], ['sel-4', 'pick']]) {
        const res = await s.request('POST', beta, { body: { apiVersion: `${GROUP}/v1beta1`, kind: 'Rename', metadata: { name }, spec: { cronSpec } } });
        assert.equal(res.status, 201, res.text);
      }
      const names = (res: { json: any }) => res.json.items.map((i: any) => i.metadata.name);
      assert.deepEqual(names(await s.request('GET', `${beta}?fieldSelector=spec.cronSpec%3Dpick`)), ['sel-1', 'sel-3', 'sel-4']);
      assert.deepEqual(names(await s.request('GET', `${v1}?fieldSelector=spec.schedule%3Dpick`)), ['sel-1', 'sel-3', 'sel-4']);
      const wrongVersion = await s.request('GET', `${beta}?fieldSelector=spec.schedule%3Dpick`);
      assert.equal(wrongVersion.status, 400);
      assert.equal(wrongVersion.json.message, 'field label not supported: spec.schedule');
      // Pages of one: each page holds one selected object, and the last has no continue token.
      const seen: string[] = [];
      let cont = '';
      for (let i = 0; i < 5; i++) {
        const page = await s.request('GET', `${beta}?fieldSelector=spec.cronSpec%3Dpick&limit=1${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
        assert.equal(page.status, 200, page.text);
        seen.push(...names(page));
        cont = page.json.metadata.continue ?? '';
        if (!cont) break;
      }
      assert.deepEqual(seen, ['sel-1', 'sel-3', 'sel-4']);

      const w = watchEvents(s.kapi, `${beta}?watch=true&fieldSelector=spec.cronSpec%3Dpick`, 5, 5000);
      assert.equal(await w.status, 200);
      await s.request('PATCH', `${beta}/sel-2`, { body: { spec: { cronSpec: 'pick' } }, contentType: 'application/merge-patch+json' });
      await s.request('PATCH', `${beta}/sel-1`, { body: { spec: { cronSpec: 'dropped' } }, contentType: 'application/merge-patch+json' });
      const events = await w.events;
      assert.deepEqual(
        events.map((e) => [e.type, e.object.metadata.name, e.object.spec.cronSpec]),
        // Out of the selector: the object as the watcher knew it.
        [['ADDED', 'sel-1', 'pick'], ['ADDED', 'sel-3', 'pick'], ['ADDED', 'sel-4', 'pick'], ['ADDED', 'sel-2', 'pick'], ['DELETED', 'sel-1', 'pick']],
      );

      const deleted = await s.request('DELETE', `${beta}?fieldSelector=spec.cronSpec%3Dpick`);
      assert.equal(deleted.status, 200, deleted.text);
      assert.deepEqual(names(deleted), ['sel-2', 'sel-3', 'sel-4']);
      assert.equal((await s.request('GET', `${beta}/sel-1`)).status, 200, 'an object not selected stays');
    });
  });
}
