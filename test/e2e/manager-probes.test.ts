/**
 * A Manager's HTTP endpoints as controller-runtime's: health probes (`/healthz`, `/readyz`, one check at
 * `/readyz/<name>`, `exclude` and `verbose`) and `/metrics`, asked over real HTTP on ephemeral ports, on a leader
 * and on a standby that waits for the Lease.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Manager, ping } from 'kapi/sdk';
import { startTestServer, type TestServer } from 'kapi/testing';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

function get(address: string, path: string, method = 'GET'): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`http://${address}${path}`, { method, timeout: 10_000, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }));
    });
    req.on('timeout', () => req.destroy(new Error(`${path}: no answer in 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

describe('kapi/sdk: the Manager\'s probes and metrics', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('serves /healthz and /readyz with their checks, and /metrics with the controllers\' figures', async () => {
    const m = new Manager(s.client('probes'), { healthProbeBindAddress: '127.0.0.1:0', metricsBindAddress: '127.0.0.1:0' });
    let dbUp = false;
    m.addHealthzCheck('ping', ping);
    m.addReadyzCheck('db', () => {
      if (!dbUp) throw new Error('db is down');
    });
    m.addReadyzCheck('cache', async () => {});
    assert.throws(() => m.addReadyzCheck('db', ping), /health check "db" exists already/);
    assert.throws(() => m.addReadyzCheck('a/b', ping), /invalid health check name "a\/b"/);
    const reconciled: string[] = [];
    m.add({ name: 'cm', for: CONFIGMAPS, reconcile: ({ name }) => void reconciled.push(name) });
    await m.start();
    try {
      const probes = m.healthProbeAddress!;
      assert.match(probes, /^127\.0\.0\.1:\d+$/);
      assert.deepEqual(await get(probes, '/healthz'), { status: 200, body: 'ok', type: 'text/plain; charset=utf-8' });
      assert.deepEqual(await get(probes, '/healthz/ping'), { status: 200, body: 'ok', type: 'text/plain; charset=utf-8' });
      // A failing check: the aggregate names it without its reason; the check's own endpoint gives the reason.
      assert.deepEqual(await get(probes, '/readyz'), { status: 500, body: '[+]cache ok\n[-]db failed: reason withheld\nhealthz check failed\n', type: 'text/plain; charset=utf-8' });
      assert.equal((await get(probes, '/readyz/db')).body, 'internal server error: db is down\n');
      assert.equal((await get(probes, '/readyz/db')).status, 500);
      assert.deepEqual(await get(probes, '/readyz?exclude=db'), { status: 200, body: 'ok', type: 'text/plain; charset=utf-8' });
      assert.equal((await get(probes, '/readyz?exclude=db&exclude=nope&verbose')).body, '[+]cache ok\n[+]db excluded: ok\nwarn: some health checks cannot be excluded: no matches for "nope"\nhealthz check passed\n');
      dbUp = true;
      assert.deepEqual(await get(probes, '/readyz/'), { status: 200, body: 'ok', type: 'text/plain; charset=utf-8' });
      assert.equal((await get(probes, '/readyz?verbose')).body, '[+]cache ok\n[+]db ok\nhealthz check passed\n');
      assert.equal((await get(probes, '/readyz/nope')).status, 404);
      assert.equal((await get(probes, '/metrics')).status, 404);
      assert.equal((await get(probes, '/healthz', 'POST')).status, 405);

      await s.client('test').resource(CONFIGMAPS).create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probed' } });
      const deadline = Date.now() + 10_000;
      while (!reconciled.includes('probed') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(reconciled.includes('probed'), 'the controller reconciled the ConfigMap');
      const metrics = await get(m.metricsAddress!, '/metrics');
      assert.equal(metrics.status, 200);
      assert.match(metrics.type, /^text\/plain/);
      assert.match(metrics.body, /^controller_runtime_reconcile_total\{controller="cm",result="success"\} [1-9]/m);
      assert.match(metrics.body, /^workqueue_adds_total\{name="cm",controller="cm"\} [1-9]/m);
    } finally {
      await m.stop();
    }
    // Stopped: nothing listens any more.
    await assert.rejects(get(m.healthProbeAddress!, '/healthz'), /ECONNREFUSED/);
    await assert.rejects(get(m.metricsAddress!, '/metrics'), /ECONNREFUSED/);
  });

  it('answers its probes while a standby waits for the Lease', async () => {
    const lease = { namespace: 'default', name: 'probes-lease', leaseDurationSeconds: 2, retryPeriodMs: 200 };
    const leader = new Manager(s.client('leader'), { leaderElection: { ...lease, identity: 'first' } });
    await leader.start();
    const standby = new Manager(s.client('standby'), { leaderElection: { ...lease, identity: 'second' }, healthProbeBindAddress: '127.0.0.1:0' });
    standby.addReadyzCheck('ping', ping);
    const starting = standby.start();
    try {
      const deadline = Date.now() + 10_000;
      while (standby.healthProbeAddress === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(standby.healthProbeAddress, 'the standby serves its probes');
      assert.equal(standby.isLeader, false);
      assert.deepEqual(await get(standby.healthProbeAddress, '/readyz'), { status: 200, body: 'ok', type: 'text/plain; charset=utf-8' });
      assert.deepEqual(await get(standby.healthProbeAddress, '/healthz?verbose'), { status: 200, body: '[+]ping ok\nhealthz check passed\n', type: 'text/plain; charset=utf-8' });
    } finally {
      await leader.stop();
      await starting;
      await standby.stop();
    }
  });

  it('refuses a bind address it cannot read, and serves nothing without one', async () => {
    const bad = new Manager(s.client('bad'), { metricsBindAddress: 'localhost' });
    await assert.rejects(bad.start(), /invalid bind address "localhost": want host:port, :port or 0 \(off\)/);
    await bad.stop();
    const none = new Manager(s.client('none'), { metricsBindAddress: '0' });
    await none.start();
    assert.equal(none.metricsAddress, undefined);
    assert.equal(none.healthProbeAddress, undefined);
    await none.stop();
  });
});
