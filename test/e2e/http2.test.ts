/**
 * HTTP/2, as kubectl and client-go speak it: responses served from the raw
 * stream carry the same status, headers and bodies as over HTTP/1.1, and a
 * client that resets its stream (mid-upload, or a watch it no longer wants)
 * leaves the server serving, with nothing half-written stored.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { CRONTAB_CRD, cronTab, startTestServer, type TestServer } from './harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const crontabs = '/apis/stable.example.com/v1/namespaces/default/crontabs';

interface H2Reply {
  headers: http2.IncomingHttpHeaders;
  text: string;
}

describe('HTTP/2', () => {
  let s: TestServer;
  let session: http2.ClientHttp2Session;

  const send = (method: string, path: string, body?: unknown, extra: http2.OutgoingHttpHeaders = {}): Promise<H2Reply> =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':method': method, ':path': path, authorization: `Bearer ${s.kapi.adminToken}`, 'content-type': 'application/json', ...extra });
      const chunks: Buffer[] = [];
      let headers: http2.IncomingHttpHeaders = {};
      stream.on('response', (h) => (headers = h));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolve({ headers, text: Buffer.concat(chunks).toString() }));
      stream.on('error', reject);
      stream.setTimeout(10_000, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      stream.end(body === undefined ? undefined : JSON.stringify(body));
    });

  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', CRDS, { body: CRONTAB_CRD })).status, 201);
    session = http2.connect(s.kapi.url, { ca: s.kapi.caCertPem });
  });
  after(async () => {
    session.close();
    await s.stop();
  });

  it('applies concurrent patches without a resourceVersion all (lost races are retried); a stale one in the patch is 409', async () => {
    assert.equal((await send('POST', crontabs, cronTab('busy'))).headers[':status'], 201);
    const merge = (i: number) => send('PATCH', `${crontabs}/busy`, { metadata: { annotations: { [`m${i}`]: 'x' } } }, { 'content-type': 'application/merge-patch+json' });
    const json = (i: number) => send('PATCH', `${crontabs}/busy`, [{ op: 'add', path: '/metadata/labels', value: { last: `j${i}` } }], { 'content-type': 'application/json-patch+json' });
    const results = await Promise.all(Array.from({ length: 32 }, (_, i) => (i % 2 ? merge(i) : json(i))));
    assert.deepEqual(results.map((r) => r.headers[':status']), Array(32).fill(200), results.find((r) => Number(r.headers[':status']) !== 200)?.text);
    const got = JSON.parse((await send('GET', `${crontabs}/busy`)).text);
    assert.deepEqual(Object.keys(got.metadata.annotations).sort(), Array.from({ length: 16 }, (_, k) => `m${2 * k + 1}`).sort());
    const stale = await send('PATCH', `${crontabs}/busy`, { metadata: { resourceVersion: '1', labels: { x: 'y' } } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(stale.headers[':status'], 409);
    assert.equal(JSON.parse(stale.text).reason, 'Conflict');
  });

  it('creates and reads objects with the headers kube-apiserver sends', async () => {
    const created = await send('POST', crontabs, cronTab('h2'));
    assert.equal(created.headers[':status'], 201);
    assert.equal(created.headers['content-type'], 'application/json');
    assert.equal(created.headers['cache-control'], 'no-cache, private');
    assert.match(String(created.headers['audit-id']), /^[0-9a-f-]{36}$/);
    const obj = JSON.parse(created.text);
    assert.equal(Number(created.headers['content-length']), Buffer.byteLength(created.text));

    const got = await send('GET', `${crontabs}/h2`);
    assert.equal(got.headers[':status'], 200);
    assert.deepEqual(JSON.parse(got.text), obj, 'GET returns the object the create answered with');
  });

  it('answers errors with a Status body, and warnings in Warning headers', async () => {
    const missing = await send('GET', `${crontabs}/nope`);
    assert.equal(missing.headers[':status'], 404);
    assert.deepEqual(JSON.parse(missing.text), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'crontabs.stable.example.com "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', group: 'stable.example.com', kind: 'crontabs' },
      code: 404,
    });
    const warned = await send('POST', `${crontabs}?fieldValidation=Warn`, { ...cronTab('warned'), spec: { cronSpec: '* * * * */5', unknownField: 1 } });
    assert.equal(warned.headers[':status'], 201);
    assert.match(String(warned.headers.warning), /^299 - "unknown field \\"spec.unknownField\\""$/);
  });

  it('keeps serving after a client resets a stream mid-upload, and stores nothing of it', async () => {
    const stream = session.request({ ':method': 'POST', ':path': crontabs, authorization: `Bearer ${s.kapi.adminToken}`, 'content-type': 'application/json' });
    stream.on('error', () => {});
    const half = JSON.stringify(cronTab('aborted'));
    stream.write(half.slice(0, half.length / 2));
    await new Promise((r) => setTimeout(r, 50));
    await new Promise<void>((r) => stream.close(http2.constants.NGHTTP2_CANCEL, r));

    assert.equal((await send('GET', `${crontabs}/aborted`)).headers[':status'], 404);
    assert.equal((await send('POST', crontabs, cronTab('aborted'))).headers[':status'], 201);
  });

  it('ends a watch when the client resets it: the long-running request count goes back down', async () => {
    const metric = async () => {
      const text = (await send('GET', '/metrics')).text;
      const line = text.split('\n').find((l) => l.startsWith('apiserver_longrunning_requests{') && l.includes('resource="crontabs"'));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    };
    const watch = session.request({ ':method': 'GET', ':path': `${crontabs}?watch=true`, authorization: `Bearer ${s.kapi.adminToken}` });
    watch.on('error', () => {});
    const first = new Promise<string>((r) => watch.once('data', (c: Buffer) => r(c.toString())));
    assert.equal((await new Promise<http2.IncomingHttpHeaders>((r) => watch.once('response', r)))[':status'], 200);
    assert.match(await first, /^\{"type":"ADDED","object":\{"apiVersion":"stable.example.com\/v1","kind":"CronTab"/);
    assert.equal(await metric(), 1);

    watch.close(http2.constants.NGHTTP2_CANCEL);
    const deadline = Date.now() + 5000;
    while ((await metric()) !== 0) {
      assert.ok(Date.now() < deadline, 'the watch was still counted 5 s after the client reset it');
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal((await send('GET', `${crontabs}/h2`)).headers[':status'], 200);
  });
});
