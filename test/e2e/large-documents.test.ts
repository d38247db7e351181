/**
 * Large answers (the OpenAPI documents) go out a slice at a time: whole and the same over HTTP/1.1 and HTTP/2, a
 * client that reads slowly holds its in-flight seat (as a blocked write holds upstream's handler) without holding
 * the server, and one that goes away mid-document frees it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
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
    s = await startTestServer({ tokenAuthFile: tokens, limits: { maxRequestsInFlight: 1, requestTimeoutMs: 20_000 } });
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
});
