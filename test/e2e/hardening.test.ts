/**
 * Requests that once took the server down, hung it or let it grow without
 * bound: each gets its answer in Kubernetes form, and the server goes on
 * serving. Limits (in flight, watches, request and idle timeouts) with
 * kube-apiserver's semantics, the request log, and the data dir's modes.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { startKapi } from '../../src/kapi/index.js';
import { CRONTAB_CRD, cronTab, startTestServer, watchEvents, type TestServer } from './harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const crontabs = '/apis/stable.example.com/v1/namespaces/default/crontabs';

/** One HTTP/1.1 request written by hand on a TLS connection: the status line and headers as raw bytes (latin1). */
function rawHttp1(url: string, ca: string, request: string | Buffer, timeoutMs = 5000): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), ca, ALPNProtocols: ['http/1.1'] }, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('raw request timed out')));
  });
}

/** An HTTP/2 request on its own session; the answer's headers with the Warning values decoded as UTF-8. */
function h2(url: string, ca: string, token: string, method: string, path: string, body?: string | Buffer, extra: http2.OutgoingHttpHeaders = {}) {
  return new Promise<{ status: number; headers: http2.IncomingHttpHeaders; text: string }>((resolve, reject) => {
    const session = http2.connect(url, { ca });
    session.on('error', reject);
    const stream = session.request({ ':method': method, ':path': path, authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra });
    let headers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (headers = h));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      session.close();
      resolve({ status: Number(headers[':status']), headers, text: Buffer.concat(chunks).toString() });
    });
    stream.on('error', reject);
    stream.setTimeout(10_000, () => stream.close(http2.constants.NGHTTP2_CANCEL));
    stream.end(body);
  });
}

/** Header values as sent: Node reads them as latin1; the server sends UTF-8 bytes. */
const utf8 = (v: string | string[] | undefined) => (v === undefined ? [] : (Array.isArray(v) ? v : v.split(/, (?=299 )/)).map((s) => Buffer.from(s, 'latin1').toString('utf8')));

describe('bad requests never take the server down', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', CRDS, { body: CRONTAB_CRD })).status, 201);
    assert.equal((await s.request('POST', crontabs, { body: cronTab('keep') })).status, 201);
  });
  after(() => s.stop());

  const alive = async () => assert.equal((await s.request('GET', '/healthz', { token: null })).status, 200);

  it('answers unreadable request targets with 400 and unclean paths with 404, before and without authentication', async () => {
    const ca = s.kapi.caCertPem;
    for (const target of ['//%zz', '/\\%zz', 'http://[::1/', '/api/v1/%zz']) {
      const head = await rawHttp1(s.kapi.url, ca, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.match(head, /^HTTP\/1\.1 400 /, target);
      await alive();
    }
    const token = `Authorization: Bearer ${s.kapi.adminToken}\r\n`;
    for (const target of [
      '/api/v1/namespaces/default/configmaps/../configmaps',
      '/api/v1/namespaces/default/%2e%2e/configmaps',
      '/api//v1/namespaces',
      '/apis/stable.example.com/v1/namespaces/default/./crontabs',
      '/api/v1\\namespaces',
      '//host/./api/v1/namespaces',
    ]) {
      const head = await rawHttp1(s.kapi.url, ca, `GET ${target} HTTP/1.1\r\nHost: x\r\n${token}Connection: close\r\n\r\n`);
      assert.match(head, /^HTTP\/1\.1 404 /, target);
    }
    // The absolute form serves as its path does.
    assert.match(await rawHttp1(s.kapi.url, ca, `GET https://x/api/v1/namespaces/default HTTP/1.1\r\nHost: x\r\n${token}Connection: close\r\n\r\n`), /^HTTP\/1\.1 200 /);
    await alive();
  });

  it('sends warnings with any characters as UTF-8 over HTTP/1.1 and HTTP/2, dropping those upstream cannot send', async () => {
    const body = Buffer.concat([Buffer.from('{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"w"},"spec":{"\u65e5":1,"'), Buffer.from([0xff]), Buffer.from('":2,"a\u007fb":3,"x":1,"x":2}}')]);
    const res = await s.request('POST', `${crontabs}?dryRun=All&fieldValidation=Warn`, { body });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(utf8(res.headers.warning).sort(), ['299 - "duplicate field \\"x\\""', '299 - "unknown field \\"spec.a\\\\x7fb\\""', '299 - "unknown field \\"spec.x\\""', '299 - "unknown field \\"spec.\ufffd\\""', '299 - "unknown field \\"spec.\u65e5\\""'].sort());
    const viaH2 = await h2(s.kapi.url, s.kapi.caCertPem, s.kapi.adminToken, 'POST', `${crontabs}?dryRun=All&fieldValidation=Warn`, body);
    assert.equal(viaH2.status, 201, viaH2.text);
    assert.deepEqual(utf8(viaH2.headers.warning).sort(), utf8(res.headers.warning).sort());
    const h2ok = await h2(s.kapi.url, s.kapi.caCertPem, s.kapi.adminToken, 'POST', `${crontabs}?dryRun=All`, '{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"w"},"spec":{"\u65e5":1}}');
    assert.equal(h2ok.status, 201, h2ok.text);
    assert.deepEqual(utf8(h2ok.headers.warning), ['299 - "unknown field \\"spec.\u65e5\\""']);
    // In a merge patch and a /status patch, with the one-byte-too-many key too.
    const patched = await s.request('PATCH', `${crontabs}/keep?dryRun=All`, { body: Buffer.from('{"spec":{"\u65e5":1}}'), contentType: 'application/merge-patch+json' });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(utf8(patched.headers.warning), ['299 - "unknown field \\"spec.\u65e5\\""']);
    await alive();
  });

  it('caps warnings as upstream does: deduplicated, 4,096 characters in all, 256 each once over', async () => {
    const spec: Record<string, number> = {};
    for (let i = 0; i < 60_000; i++) spec[`unknown${i}`] = i;
    const res = await s.request('POST', `${crontabs}?dryRun=All`, { body: { ...cronTab('many'), spec } });
    assert.equal(res.status, 201);
    const warnings = utf8(res.headers.warning);
    const chars = warnings.reduce((n, w) => n + w.length, 0);
    assert.ok(warnings.length > 100 && chars < 6000, `${warnings.length} warnings, ${chars} characters`);
    const long = { ...cronTab('long'), spec: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`${'k'.repeat(300)}${i}`, 1])) };
    const cut = utf8((await s.request('POST', `${crontabs}?dryRun=All`, { body: long })).headers.warning);
    assert.ok(cut.length >= 15 && cut.every((w) => w.length <= 256 + 12), `${cut.length} warnings: ${cut[0]}`);
  });

  it('serves a CRD version whose deprecation warning is not Latin-1, over HTTP/1.1 and HTTP/2', async () => {
    const crd = structuredClone(CRONTAB_CRD) as any;
    crd.metadata.name = 'olds.stable.example.com';
    crd.spec.names = { plural: 'olds', singular: 'old', kind: 'Old' };
    crd.spec.versions[0].deprecated = true;
    crd.spec.versions[0].deprecationWarning = '\u975e\u63a8\u5968\u3067\u3059';
    assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
    const list = await s.request('GET', '/apis/stable.example.com/v1/namespaces/default/olds');
    assert.equal(list.status, 200);
    assert.deepEqual(utf8(list.headers.warning), ['299 - "\u975e\u63a8\u5968\u3067\u3059"']);
    const viaH2 = await h2(s.kapi.url, s.kapi.caCertPem, s.kapi.adminToken, 'GET', '/apis/stable.example.com/v1/namespaces/default/olds');
    assert.equal(viaH2.status, 200);
    assert.deepEqual(utf8(viaH2.headers.warning), ['299 - "\u975e\u63a8\u5968\u3067\u3059"']);
  });

  it('bounds what a JSON patch may copy (3 MiB), and answers broken patches 422 as upstream', async () => {
    // ~4 KB of patch that copies a list into itself: each copy doubles it (2^108 without the bound).
    const bomb = [{ op: 'add', path: '/spec/list', value: ['x'.repeat(100)] }, ...Array.from({ length: 108 }, () => ({ op: 'copy', from: '/spec/list', path: '/spec/list/-' }))];
    for (const dryRun of ['?dryRun=All', '']) {
      const r = await s.request('PATCH', `${crontabs}/keep${dryRun}`, { body: bomb, contentType: 'application/json-patch+json' });
      assert.equal(r.status, 422, r.text);
    }
    const grow = [{ op: 'add', path: '/spec/a', value: 'x'.repeat(100_000) }, ...Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '/spec/a', path: `/spec/c${i}` }))];
    const res = await s.request('PATCH', `${crontabs}/keep?dryRun=All`, { body: grow, contentType: 'application/json-patch+json' });
    assert.equal(res.status, 422, res.text);
    assert.deepEqual(res.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server rejected our request due to an error in our request', reason: 'Invalid', details: {}, code: 422 });
    for (const patch of [[{ op: 'add', path: '/spec/replicas/x', value: 1 }], [{ op: 'remove', path: '/spec/missing' }], [{ op: 'bogus', path: '/spec' }], [{ op: 'test', path: '/spec/image', value: 'other' }]]) {
      const r = await s.request('PATCH', `${crontabs}/keep`, { body: patch, contentType: 'application/json-patch+json' });
      assert.equal(r.status, 422, `${JSON.stringify(patch)}: ${r.text}`);
    }
    // json-patch v4: replace of a missing member adds it; the first path segment is not read.
    const added = await s.request('PATCH', `${crontabs}/keep?dryRun=All`, { body: [{ op: 'replace', path: '/spec/replicas', value: 3 }, { op: 'add', path: 'x/spec/image', value: 'y' }], contentType: 'application/json-patch+json' });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.json.spec.replicas, 3);
    assert.equal(added.json.spec.image, 'y');
    const proto = await s.request('PATCH', `${crontabs}/keep?dryRun=All`, { body: [{ op: 'add', path: '/spec/__proto__', value: { polluted: true } }], contentType: 'application/json-patch+json' });
    assert.ok(proto.status < 500, proto.text);
    assert.equal(({} as { polluted?: boolean }).polluted, undefined);
    for (const bad of ['[1]', '{}', '"x"']) {
      const r = await s.request('PATCH', `${crontabs}/keep`, { body: bad, contentType: 'application/json-patch+json' });
      assert.equal(r.status, 400, r.text);
    }
    const kept = await s.request('GET', `${crontabs}/keep`);
    assert.deepEqual(kept.json.spec, cronTab('keep').spec);
  });

  it('keeps one watcher\'s field selector from ending the others (a value beyond 2^53 in the object; a field no label reads)', async () => {
    const pods = '/api/v1/namespaces/default/pods';
    const created = await s.request('POST', pods, { body: '{"metadata":{"name":"huge"},"spec":{"activeDeadlineSeconds":4611686018427387904,"containers":[{"name":"c","image":"x"}]}}' });
    assert.equal(created.status, 201, created.text);
    const rv = created.json.metadata.resourceVersion;
    const bystander = watchEvents(s.kapi, `${pods}?watch=1&resourceVersion=${rv}`, 1, 5000);
    const selected = watchEvents(s.kapi, `${pods}?watch=1&fieldSelector=spec.nodeName%3D&resourceVersion=${rv}`, 1, 5000);
    const odd = await s.request('GET', `${pods}?watch=1&fieldSelector=spec%3Dx&resourceVersion=${rv}`);
    assert.deepEqual([odd.status, odd.json.message], [400, 'field label not supported: spec'], 'a Pod is selected only by its kind\'s field labels');
    const listed = await s.request('GET', `${pods}?fieldSelector=spec.activeDeadlineSeconds%3D4611686018427387904`);
    assert.deepEqual([listed.status, listed.json.message], [400, 'field label not supported: spec.activeDeadlineSeconds']);
    assert.equal(await bystander.status, 200);
    assert.equal(await selected.status, 200);
    assert.equal((await s.request('PATCH', `${pods}/huge`, { body: { metadata: { labels: { a: 'b' } } }, contentType: 'application/merge-patch+json' })).status, 200);
    for (const watch of [bystander, selected]) {
      const [event] = await watch.events;
      assert.equal(event.type, 'MODIFIED', 'the watchers go on');
    }
  });

  it('refuses integer query parameters Go cannot parse, with strconv texts', async () => {
    const cases: Array<[string, string, string]> = [
      ['GET', `${crontabs}?limit=abc`, 'strconv.ParseInt: parsing "abc": invalid syntax'],
      ['GET', `${crontabs}?timeoutSeconds=abc`, 'strconv.ParseInt: parsing "abc": invalid syntax'],
      ['GET', `${crontabs}?watch=1&timeoutSeconds=99999999999999999999`, 'strconv.ParseInt: parsing "99999999999999999999": value out of range'],
      ['DELETE', `${crontabs}/keep?gracePeriodSeconds=abc`, 'strconv.ParseInt: parsing "abc": invalid syntax'],
      ['GET', `${crontabs}?timeout=abc`, 'invalid timeout specified in the request URL - time: invalid duration "abc"'],
    ];
    for (const [method, path, message] of cases) {
      const res = await s.request(method, path);
      assert.equal(res.status, 400, `${path}: ${res.text}`);
      assert.equal(res.json.message, message);
      assert.equal(res.json.reason, 'BadRequest');
    }
    // A watch that asks for a timeout longer than any timer still runs (setTimeout would have fired at once).
    const long = watchEvents(s.kapi, `${crontabs}?watch=1&timeoutSeconds=9999999999&resourceVersion=0`, 2, 5000);
    assert.equal(await long.status, 200);
    assert.equal((await s.request('POST', crontabs, { body: cronTab('late') })).status, 201);
    assert.deepEqual((await long.events).map((e) => e.type), ['ADDED', 'ADDED'], 'the stored object, then the new one');
    const many = Array.from({ length: 5000 }, (_, i) => `p${i}=v`).join('&');
    assert.equal((await s.request('GET', `${crontabs}?${many}`)).status, 200, 'a list with 5,000 query parameters is served');
    assert.equal((await s.request('GET', `${crontabs}/keep`)).status, 200);
  });

  it('keeps metrics labels to known values: made-up subresources and verbs add no series', async () => {
    const metrics = async () => (await s.request('GET', '/metrics')).text;
    for (let i = 0; i < 50; i++) await s.request('GET', `${crontabs}/keep/made-up-${i}`);
    await s.request('OPTIONS', `${crontabs}/keep`);
    const text = await metrics();
    assert.ok(!text.includes('made-up'), 'no series for unknown subresources');
    assert.match(text, /apiserver_request_total\{[^}]*resource="crontabs"[^}]*\}/);
  });

  it('refuses an object larger than etcd takes (1.5 MiB) with 413, storing nothing', async () => {
    const res = await s.request('POST', crontabs, { body: cronTab('huge', 'default', { image: 'x'.repeat(1_600_000) }) });
    assert.equal(res.status, 413, res.text.slice(0, 300));
    assert.equal(res.json.reason, 'RequestEntityTooLarge');
    assert.equal(res.json.message, 'etcdserver: request is too large');
    assert.equal((await s.request('GET', `${crontabs}/huge`)).status, 404);
  });

  it('parses a large YAML body on its thread with the same answers as in place', async () => {
    const lines = Array.from({ length: 6000 }, (_, i) => `    k${i}: value-${i}`).join('\n');
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big-yaml\n  namespace: default\ndata:\n${lines.replace(/^ {4}/gm, '  ')}\n`;
    assert.ok(yaml.length > 64 * 1024);
    const res = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: yaml, contentType: 'application/yaml' });
    assert.equal(res.status, 201, res.text.slice(0, 300));
    assert.equal(Object.keys(res.json.data).length, 6000);
    assert.equal(res.json.data.k5999, 'value-5999');
    // A YAML flow list of half a million items needs more heap than the parser thread has: 413, not a grown process.
    const flow = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flow\nitems: [${Array(500_000).fill('1').join(',')}]\n`;
    const refused = await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: flow, contentType: 'application/yaml', timeoutMs: 30_000 });
    assert.equal(refused.status, 413, refused.text.slice(0, 300));
    assert.match(refused.json.message, /^Request entity too large: the YAML document needs more than 256 MiB to parse; send it as JSON$/);
    const asJson = await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"flow"},"items":[${Array(500_000).fill('1').join(',')}]}`, contentType: 'application/yaml' });
    assert.equal(asJson.status, 201, 'the same as JSON is read as JSON');
    const broken = `a: [1, 2\n# ${'x'.repeat(70_000)}\n`;
    const bad = await s.request('PATCH', `${crontabs}/keep?fieldManager=t`, { body: broken, contentType: 'application/apply-patch+yaml' });
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.json.message, /^error encoding patch: yaml: line \d+: /);
  });
});

describe('limits as kube-apiserver sets them', () => {
  let s: TestServer;
  let dir: string;
  const logLines: string[] = [];
  const USER = 'user-token-1';
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-limits-'));
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, `${USER},alice,1001,"dev"\n`);
    s = await startTestServer({
      tokenAuthFile: tokens,
      limits: { maxMutatingRequestsInFlight: 1, maxRequestsInFlight: 50, maxWatches: 2, requestTimeoutMs: 1500, idleTimeoutMs: 400, handshakeTimeoutMs: 300 },
      requestLog: (line) => logLines.push(line),
      console: true,
    });
    assert.equal((await s.request('POST', CRDS, { body: CRONTAB_CRD })).status, 201);
    // alice may do anything through a binding, but is no member of system:masters: the limits hold for her.
    const binding = { metadata: { name: 'dev-admin' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'Group', name: 'dev' }] };
    assert.equal((await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: binding })).status, 201);
    for (let i = 0; i < 200 && (await s.request('GET', CRDS, { token: USER })).status !== 200; i++) await new Promise((r) => setTimeout(r, 10));
  });
  after(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A POST whose body never completes: it holds its in-flight seat until the server's timeout or the close. */
  function stalledUpload(token: string): { status: Promise<number>; text: Promise<string>; close(): void } {
    const url = new URL(crontabs, s.kapi.url);
    let close = () => {};
    let text: (t: string) => void = () => {};
    const body = new Promise<string>((r) => (text = r));
    const status = new Promise<number>((resolve, reject) => {
      const req = https.request(url, { method: 'POST', ca: s.kapi.caCertPem, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': '1000' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => text(Buffer.concat(chunks).toString()));
        resolve(res.statusCode ?? 0);
      });
      req.on('error', (e) => reject(e));
      req.write('{"apiVersion":');
      close = () => req.destroy();
    });
    status.catch(() => {});
    return { status, text: body, close };
  }

  it('answers 429 with Retry-After beyond the mutating limit; system:masters is never limited', async () => {
    // A stalled upload holds the one seat until the request timeout (1.5 s). On a busy machine it may time out (or,
    // started while its predecessor still had the seat, be refused itself) before a write is tried: then another
    // takes its place, until a write is refused while the upload still holds the seat.
    let held = stalledUpload(USER);
    let heldDone = false;
    void held.status.then(() => (heldDone = true), () => (heldDone = true));
    const tryWrite = async () => {
      const res = await s.request('POST', `${crontabs}?dryRun=All`, { body: cronTab('second'), token: USER });
      // The upload's own refusal may come after the write's: let it arrive before taking the upload as the holder.
      if (res.status === 429) await new Promise((r) => setTimeout(r, 300));
      return res;
    };
    let refused = await tryWrite();
    for (let i = 0; i < 50 && !(refused.status === 429 && !heldDone); i++) {
      if (heldDone) {
        held.close();
        await new Promise((r) => setTimeout(r, 200));
        held = stalledUpload(USER);
        heldDone = false;
        void held.status.then(() => (heldDone = true), () => (heldDone = true));
      }
      await new Promise((r) => setTimeout(r, 100));
      refused = await tryWrite();
    }
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.text, 'Too many requests, please try again later.\n');
    assert.equal((await s.request('GET', crontabs, { token: USER })).status, 200, 'reads have their own limit');
    assert.equal((await s.request('POST', crontabs, { body: cronTab('admin') })).status, 201, 'the admin (system:masters) is exempt');
    // The stalled upload times out with upstream's 504 body.
    assert.equal(await held.status, 504);
    assert.equal(await held.text, '{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}\n');
    held.close();
    assert.equal((await s.request('POST', crontabs, { body: cronTab('third'), token: USER })).status, 201, 'the seat is free again');
  });

  it('counts the console\'s sign-ins within the same mutating limit', async () => {
    const signIn = () =>
      new Promise<number>((resolve, reject) => {
        const req = https.request(new URL('/console/session', s.kapi.url), { method: 'POST', ca: s.kapi.caCertPem, headers: { 'Content-Type': 'application/json' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end(JSON.stringify({ token: USER }));
      });
    // A stalled upload holds the one mutating seat (for up to the 1.5 s timeout; another takes its place if it went).
    let refused = 0;
    for (let i = 0; i < 10 && refused !== 429; i++) {
      const held = stalledUpload(USER);
      await new Promise((r) => setTimeout(r, 100));
      refused = await signIn();
      held.close();
      await held.status.catch(() => 0);
    }
    assert.equal(refused, 429, 'a sign-in waits for a seat as any write does');
    // The closed upload's seat is given back once the server sees the close.
    let signedIn = 0;
    for (let i = 0; i < 50 && signedIn !== 200; i++) {
      signedIn = await signIn();
      if (signedIn !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(signedIn, 200, 'and gets one once it is free');
  });

  it('limits open watches; a closed watch frees its place', async () => {
    const open = () => {
      const session = http2.connect(s.kapi.url, { ca: s.kapi.caCertPem });
      const stream = session.request({ ':path': `${crontabs}?watch=1`, authorization: `Bearer ${USER}` });
      const status = new Promise<number>((r) => stream.on('response', (h) => r(Number(h[':status']))));
      stream.on('error', () => {});
      return { status, close: () => session.destroy() };
    };
    const a = open();
    const b = open();
    assert.deepEqual([await a.status, await b.status], [200, 200]);
    const c = open();
    assert.equal(await c.status, 429);
    c.close();
    a.close();
    await new Promise((r) => setTimeout(r, 100));
    const d = open();
    assert.equal(await d.status, 200);
    b.close();
    d.close();
  });

  it('closes connections that stay idle, HTTP/1.1 and HTTP/2, unauthenticated ones included', async () => {
    const { hostname, port } = new URL(s.kapi.url);
    const started = Date.now();
    const closedAfter = await new Promise<number>((resolve, reject) => {
      const socket = tls.connect({ host: hostname, port: Number(port), ca: s.kapi.caCertPem, ALPNProtocols: ['http/1.1'] });
      socket.on('close', () => resolve(Date.now() - started));
      socket.on('error', () => {});
      setTimeout(() => reject(new Error('an idle HTTP/1.1 connection stayed open')), 5000).unref();
    });
    assert.ok(closedAfter >= 300, `closed after ${closedAfter} ms`);
    const session = http2.connect(s.kapi.url, { ca: s.kapi.caCertPem });
    session.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      session.on('close', () => resolve());
      setTimeout(() => reject(new Error('an idle HTTP/2 session stayed open')), 5000).unref();
    });
    // A TCP connection that never starts its TLS handshake is closed after the handshake timeout.
    const tcpStarted = Date.now();
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(Number(port), hostname);
      socket.on('close', () => resolve());
      socket.on('error', () => {});
      setTimeout(() => reject(new Error('a connection without a TLS handshake stayed open')), 5000).unref();
    });
    assert.ok(Date.now() - tcpStarted >= 250, 'not before the handshake timeout');
  });

  it('logs one line per request, values quoted and escaped', async () => {
    logLines.length = 0;
    await s.request('GET', `${crontabs}?limit=1`);
    const ua = 'bad\nagent "quoted"';
    await new Promise<void>((resolve, reject) => {
      https.get(new URL(`${crontabs}/nope`, s.kapi.url), { ca: s.kapi.caCertPem, headers: { Authorization: `Bearer ${USER}`, 'User-Agent': ua.replace('\n', ' ') } }, (res) => res.resume().on('end', resolve)).on('error', reject);
    });
    const list = logLines.find((l) => l.includes('verb="LIST"'));
    assert.ok(list, logLines.join(''));
    assert.match(list!, /^I\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ httplog\.go:\d+\] "HTTP" verb="LIST" URI="\/apis\/stable\.example\.com\/v1\/namespaces\/default\/crontabs\?limit=1" latency="[0-9.]+ms" userAgent="[^"]*" contentType="" audit-ID="[0-9a-f-]{36}" srcIP="127\.0\.0\.1:\d+" user="kapi-admin" resp=200\n$/);
    const get = logLines.find((l) => l.includes('/nope'));
    assert.match(get!, /user="alice" resp=404\n$/);
    assert.ok(get!.includes('userAgent="bad agent \\"quoted\\""'), get);
    assert.ok(logLines.every((l) => l.indexOf('\n') === l.length - 1), 'one line each');
  });
});

describe('the data dir is private', () => {
  it('is made 0700 with files 0600; an existing wider one is warned about', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kapi-modes-'));
    try {
      const fresh = join(dir, 'fresh');
      const warnings: string[] = [];
      let kapi = await startKapi({ dataDir: fresh, port: 0, warn: (m) => warnings.push(m) });
      await kapi.stop();
      assert.equal(statSync(fresh).mode & 0o777, 0o700);
      for (const f of ['state.db', 'state.db.lock', 'admin.token', 'admin.kubeconfig', 'pki/ca.key']) assert.equal(statSync(join(fresh, f)).mode & 0o777, 0o600, f);
      assert.equal(warnings.length, 0, warnings.join());
      const wide = join(dir, 'wide');
      mkdirSync(wide, { mode: 0o755 });
      chmodSync(wide, 0o755);
      writeFileSync(join(wide, 'admin.token'), 'sometoken\n', { mode: 0o644 });
      kapi = await startKapi({ dataDir: wide, port: 0, warn: (m) => warnings.push(m) });
      await kapi.stop();
      assert.equal(warnings.length, 1);
      assert.match(warnings[0], /other users may read the data dir: .*wide \(0755\), .*admin\.token \(0644\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
