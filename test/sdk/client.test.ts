/**
 * The SDK client's request as its callers see it over any transport: an error answer is a StatusError whatever its
 * body (a Status, `null`, text), a success's body can be left unread (discardBody), and no answer leaves the request
 * unsettled.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '../../src/sdk/client.js';
import type { LoopbackRequest, LoopbackSink } from '../../src/api/serving.js';

/** A transport that answers every request with `status` and `body`, in two chunks. */
function answering(status: number, body: string): (req: LoopbackRequest, sink: LoopbackSink) => () => void {
  return (_req, sink) => {
    setImmediate(() => {
      sink.head(status, { 'content-type': 'application/json' });
      sink.data(Buffer.from(body.slice(0, 3)));
      sink.data(Buffer.from(body.slice(3)));
      sink.end();
    });
    return () => {};
  };
}

describe('sdk client requests', () => {
  it('rejects an error answer whose body is no Status (null, a number, text) with a StatusError of its code', async () => {
    for (const body of ['null', '42', 'not json']) {
      const client = new Client(answering(500, body), 'token', 'test');
      await assert.rejects(client.request('GET', '/api/v1/namespaces'), (err: { code?: number }) => err.code === 500, body);
    }
    const status = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', message: 'namespaces "x" not found', code: 404 });
    await assert.rejects(new Client(answering(404, status), 'token', 'test').request('GET', '/api/v1/namespaces/x'), { reason: 'NotFound', message: 'namespaces "x" not found' });
  });

  it('leaves a success\'s body unread with discardBody, but still reads an error\'s', async () => {
    const ok = await new Client(answering(200, '{"kind":"List","items":[1,2,3]}'), 'token', 'test').request('DELETE', '/api/v1/namespaces/a/configmaps', { discardBody: true });
    assert.deepEqual(ok, { status: 200, body: {} });
    const conflict = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', message: 'try again', code: 409 });
    await assert.rejects(new Client(answering(409, conflict), 'token', 'test').request('DELETE', '/x', { discardBody: true }), { reason: 'Conflict', message: 'try again' });
  });
});
