/**
 * The event loop's delay is observable: /metrics has its histogram, and a stall (the loop held over 100 ms)
 * is logged with the requests being served while it lasted, and their users.
 */
import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import { startTestServer, until, type TestServer } from './harness.js';

/** Hold the event loop (the server shares this process's loop) for `ms`. */
function hold(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // busy
  }
}

describe('event loop delay', () => {
  let s: TestServer;
  const warnings: string[] = [];
  before(async () => {
    s = await startTestServer({ warn: (m: string) => warnings.push(m) });
  });
  after(() => s.stop());

  it('logs a stall with the request being served and its user, and counts it in the histogram', async () => {
    // A create whose body is still arriving: the request is being served while the loop is held (as bob, by the admin).
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'slow' }, data: { a: 'b' } });
    const answered = new Promise<number>((resolve, reject) => {
      const req = https.request(new URL('/api/v1/namespaces/default/configmaps', s.kapi.url), {
        method: 'POST',
        ca: s.kapi.caCertPem,
        agent: false,
        headers: { authorization: `Bearer ${s.kapi.adminToken}`, 'impersonate-user': 'bob', 'impersonate-group': 'system:masters', 'content-type': 'application/json', 'content-length': String(body.length) },
      }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        hold(300);
        setTimeout(() => req.end(body.slice(10)), 50);
      }, 100);
    });
    assert.equal(await answered, 201);
    await until('the stall is logged', () => warnings.some((w) => w.includes('the event loop was held')));
    const line = warnings.find((w) => w.includes('the event loop was held'))!;
    assert.match(line, /^kapi: the event loop was held \d+ ms, serving "POST" "\/api\/v1\/namespaces\/default\/configmaps" for "kapi-admin" as "bob" \(audit-ID [0-9a-f-]+\)/);
    const held = Number(/held (\d+) ms/.exec(line)![1]);
    assert.ok(held >= 250, line);

    const metrics = await s.request('GET', '/metrics');
    assert.equal(metrics.status, 200);
    const bucket = (le: string) => Number(new RegExp(`^kapi_event_loop_delay_seconds_bucket\\{le="${le.replace('+', '\\+')}"\\} (\\d+)$`, 'm').exec(metrics.text)?.[1]);
    assert.ok(bucket('+Inf') > bucket('0.25'), `a delay over 250 ms is counted:\n${metrics.text.split('\n').filter((l) => l.startsWith('kapi_event_loop')).join('\n')}`);
    assert.ok(bucket('0.01') > 0, 'ordinary ticks are counted too');
  });
});
