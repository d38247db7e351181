/**
 * Large answers (the OpenAPI documents, pretty JSON) go out a slice at a time: whole and the same over HTTP/1.1 and
 * HTTP/2, a client that reads slowly holds its in-flight seat (as a blocked write holds upstream's handler) without
 * holding the server, until it goes away or the request timeout breaks the answer off.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeObject } from '../../src/machinery/protobuf/objects.js';
import { parseYaml } from '../../src/machinery/yaml.js';
import { encodeYaml } from '../../src/machinery/yaml-emit.js';
import { startTestServer, type TestServer } from './harness.js';

const USER = 'reader-token-1';

describe('large documents', () => {
  let s: TestServer;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-large-'));
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, `${USER},reader,1001,"readers"\n`);
    // One read in flight for anyone outside system:masters: a seat held shows as a 429.
    s = await startTestServer({ tokenAuthFile: tokens, limits: { maxRequestsInFlight: 1, requestTimeoutMs: 3000 } });
  });
  after(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  function http1(path: string, token?: string): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const req = https.get(new URL(path, s.kapi.url), { ca: s.kapi.caCertPem, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`status ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.setTimeout(20_000, () => req.destroy(new Error('timed out')));
    });
  }

  it('writes a document of more than one slice whole, the same over HTTP/1.1 and HTTP/2', async () => {
    const one = await http1('/openapi/v2', USER);
    assert.ok(one.length > 1024 * 1024, `the document is more than one slice of 1 MiB (${one.length} bytes)`);
    const session = http2.connect(s.kapi.url, { ca: s.kapi.caCertPem });
    try {
      const two = await new Promise<Buffer>((resolve, reject) => {
        const stream = session.request({ ':path': '/openapi/v2', authorization: `Bearer ${USER}` });
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => resolve(Buffer.concat(chunks)));
        stream.on('error', reject);
        stream.setTimeout(20_000, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      });
      assert.ok(one.equals(two));
      JSON.parse(two.toString());
    } finally {
      session.close();
    }
  });

  it('serves others while a client reads slowly, and frees the seat of one that goes away mid-document', async () => {
    const session = http2.connect(s.kapi.url, { ca: s.kapi.caCertPem });
    try {
      // HTTP/2 flow control: the server sends 64 KiB and then waits for this client, which reads nothing.
      const stream = session.request({ ':path': '/openapi/v2', authorization: `Bearer ${USER}` });
      const status = await new Promise<number>((resolve, reject) => {
        stream.on('response', (h) => resolve(Number(h[':status'])));
        stream.on('error', reject);
      });
      assert.equal(status, 200);
      stream.pause();
      // The server goes on (the admin is never limited)...
      assert.equal((await s.request('GET', '/api/v1/namespaces')).status, 200);
      // ...while the slow reader holds its seat.
      assert.equal((await s.request('GET', '/api', { token: USER })).status, 429);
      stream.close(http2.constants.NGHTTP2_CANCEL);
      let freed = 0;
      for (let i = 0; i < 100 && freed !== 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        freed = (await s.request('GET', '/api', { token: USER })).status;
      }
      assert.equal(freed, 200, 'the seat is free once the client has gone');
    } finally {
      session.close();
    }
  });

  it('breaks off an answer its client does not read at the request timeout, and frees its seat', async () => {
    const session = http2.connect(s.kapi.url, { ca: s.kapi.caCertPem });
    try {
      const started = Date.now();
      const stream = session.request({ ':path': '/openapi/v2', authorization: `Bearer ${USER}` });
      stream.on('response', () => stream.pause());
      const rstCode = await new Promise<number>((resolve) => {
        stream.on('error', () => {});
        stream.on('close', () => resolve(stream.rstCode ?? -1));
      });
      assert.equal(rstCode, http2.constants.NGHTTP2_INTERNAL_ERROR, 'reset as upstream resets an aborted handler\'s stream');
      assert.ok(Date.now() - started >= 2500, 'not before the timeout');
      assert.equal((await s.request('GET', '/api', { token: USER })).status, 200);
    } finally {
      session.close();
    }
  });

  it('writes a large text answer (pretty JSON) in slices without cutting a character in two', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'blobs.big.example.com' },
      spec: {
        group: 'big.example.com',
        scope: 'Namespaced',
        names: { plural: 'blobs', singular: 'blob', kind: 'Blob' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status, 201);
    const blobs = '/apis/big.example.com/v1/namespaces/default/blobs';
    for (let i = 0; i < 200 && (await s.request('GET', blobs)).status !== 200; i++) await new Promise((r) => setTimeout(r, 25));
    // Characters outside the BMP are two UTF-16 units: a slice ending between them would write U+FFFD twice. The
    // first slice (2^20 units) ends among such characters, in two answers whose lengths differ by one unit: in one
    // of them, between the two units of one.
    const text = 'a'.repeat(900_000) + '\u{1F600}'.repeat(100_000);
    for (const name of ['emoji', 'emoji2']) {
      const created = await s.request('POST', blobs, { body: { apiVersion: 'big.example.com/v1', kind: 'Blob', metadata: { name }, text } });
      assert.equal(created.status, 201, created.text.slice(0, 200));
      const got = JSON.parse((await s.request('GET', `${blobs}/${name}?pretty=true`)).text);
      assert.ok(got.text === text, 'the text as stored');
    }
  });

  const maps = '/api/v1/namespaces/default/configmaps';
  let created: Promise<void> | undefined;
  /** 1,100 ConfigMaps labelled many=yes (made once, for the tests of long lists). */
  const manyConfigMaps = () =>
    (created ??= (async () => {
      for (let i = 0; i < 1100; i += 50) {
        const batch = Array.from({ length: 50 }, (_, j) => s.request('POST', maps, { body: { metadata: { name: `m-${i + j}`, labels: { many: 'yes' } }, data: { n: String(i + j) } } }));
        for (const r of await Promise.all(batch)) assert.equal(r.status, 201);
      }
    })());

  it('answers a protobuf list of more than a thousand objects, made a thousand items per turn, whole', async () => {
    await manyConfigMaps();
    const json = (await s.request('GET', `${maps}?labelSelector=many`)).json;
    const proto = await new Promise<Buffer>((resolve, reject) => {
      const req = https.get(new URL(`${maps}?labelSelector=many`, s.kapi.url), { ca: s.kapi.caCertPem, headers: { authorization: `Bearer ${s.kapi.adminToken}`, accept: 'application/vnd.kubernetes.protobuf' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
      });
      req.on('error', reject);
    });
    const list = decodeObject(proto, { apiVersion: 'v1', kind: 'ConfigMapList' }) as { items: Array<{ metadata: { name: string }; data: { n: string } }> };
    assert.equal(list.items.length, 1100);
    assert.deepEqual(
      list.items.map((m) => `${m.metadata.name}=${m.data.n}`),
      json.items.map((m: { metadata: { name: string }; data: { n: string } }) => `${m.metadata.name}=${m.data.n}`),
    );
  });

  it('answers a protobuf PartialObjectMetadataList (a metadata informer\'s list) of more than a thousand objects in steps, whole', async () => {
    await manyConfigMaps();
    const list = `${maps}?labelSelector=many`;
    const accept = 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
    const json = (await s.request('GET', list, { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' })).json;
    const proto = await s.request('GET', list, { accept });
    assert.equal(proto.status, 200);
    assert.equal(proto.headers['content-type'], 'application/vnd.kubernetes.protobuf');
    const decoded = decodeObject(proto.body, { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList' }) as { kind: string; items: Array<{ metadata: { name: string; uid: string; labels: unknown } }> };
    assert.equal(decoded.kind, 'PartialObjectMetadataList');
    assert.equal(decoded.items.length, 1100);
    const names = (items: Array<{ metadata: { name: string; uid: string; labels: unknown } }>) => items.map((m) => `${m.metadata.name} ${m.metadata.uid} ${JSON.stringify(m.metadata.labels)}`);
    assert.deepEqual(names(decoded.items), names(json.items));
  });

  it('streams a Table, YAML or pretty list of more than a thousand objects in batches: the same text as made whole', async () => {
    await manyConfigMaps();
    const list = `${maps}?labelSelector=many`;
    const compact = await s.request('GET', list);
    assert.equal(compact.json.items.length, 1100);
    // Each answer is read at its own resourceVersion (the controllers write meanwhile): the expected text takes it.
    const at = (metadata: unknown) => ({ ...compact.json, metadata });

    const pretty = await s.request('GET', `${list}&pretty=true`);
    assert.equal(pretty.status, 200);
    assert.equal(pretty.headers['content-length'], undefined, 'sent as it is made');
    assert.equal(pretty.text, `${JSON.stringify(at(pretty.json.metadata), null, 2)}\n`);

    const yaml = await s.request('GET', list, { accept: 'application/yaml' });
    assert.equal(yaml.status, 200);
    assert.equal(yaml.headers['content-type'], 'application/yaml');
    const yamlValue = parseYaml(yaml.text) as { metadata: unknown };
    assert.ok(yaml.body.equals(encodeYaml(at(yamlValue.metadata))), 'the YAML of the whole list');

    // A Table over HTTP/2: its column definitions once, a row per object in the list's order.
    const session = http2.connect(s.kapi.url, { ca: s.kapi.caCertPem });
    try {
      const table = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = session.request({ ':path': list, authorization: `Bearer ${s.kapi.adminToken}`, accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
        let status = 0;
        let text = '';
        req.setEncoding('utf8');
        req.on('response', (h) => (status = Number(h[':status'])));
        req.on('data', (c: string) => (text += c));
        req.on('end', () => resolve({ status, text }));
        req.on('error', reject);
      });
      assert.equal(table.status, 200);
      const t = JSON.parse(table.text);
      const one = (await s.request('GET', `${maps}/m-0`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })).json;
      assert.deepEqual(t.columnDefinitions, one.columnDefinitions);
      assert.equal(t.kind, 'Table');
      assert.deepEqual(
        t.rows.map((r: { cells: unknown[]; object: { kind: string; metadata: { name: string } } }) => `${r.cells[0]} ${r.object.kind} ${r.object.metadata.name}`),
        compact.json.items.map((m: { metadata: { name: string } }) => `${m.metadata.name} PartialObjectMetadata ${m.metadata.name}`),
      );
      assert.equal(table.text, JSON.stringify({ ...t, rows: t.rows }), 'compact JSON, as made whole');
    } finally {
      session.close();
    }
  });
});

describe('a long deletecollection', () => {
  it('stops deleting once its request timed out (504), as upstream stops with the request context', async () => {
    const s = await startTestServer({ limits: { requestTimeoutMs: 100 } });
    try {
      const maps = '/api/v1/namespaces/default/configmaps';
      for (let i = 0; i < 1500; i += 50) {
        const batch = Array.from({ length: 50 }, (_, j) => s.request('POST', maps, { body: { metadata: { name: `d-${i + j}`, labels: { doomed: 'yes' } } } }));
        for (const r of await Promise.all(batch)) assert.equal(r.status, 201);
      }
      const count = async () => (await s.request('GET', `${maps}?labelSelector=doomed`)).json.items.length;
      const answer = await s.request('DELETE', `${maps}?labelSelector=doomed`);
      assert.equal(answer.status, 504, answer.text);
      assert.equal(answer.json.reason, 'Timeout');
      // 1,500 deletions take far longer than 100 ms: those left after the timeout stay.
      const left = await count();
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(left > 0, 'some objects are left');
      assert.equal(await count(), left, 'no deletion goes on after the answer');
    } finally {
      await s.stop();
    }
  });
});
