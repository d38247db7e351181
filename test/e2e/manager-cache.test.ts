/**
 * A Manager's resource clients read from its informers, as controller-runtime's default client reads from its
 * cache: no request reaches the API server for a cached get or list (its request counter says so), results are
 * copies, misses are the server's 404, selectors filter; writes and uncached reads go to the server.
 */
import assert from 'node:assert/strict';
import { get } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { Manager, StatusError } from 'kapi/sdk';
import { startTestServer, type TestServer } from 'kapi/testing';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

describe('kapi/sdk: reads from the Manager\'s cache', () => {
  let s: TestServer;
  let m: Manager;
  before(async () => {
    s = await startTestServer();
    m = new Manager(s.client('cache-reader'));
    await m.start();
  });
  after(async () => {
    await m.stop();
    await s.stop();
  });

  /** The API server's count of requests of `verbs` on `resource`, from its /metrics. */
  const requestCount = async (verbs: string, resource: string) => {
    const text = await new Promise<string>((resolve, reject) => {
      const req = get(`${s.url}/metrics`, { ca: s.caCertPem, headers: { authorization: `Bearer ${s.adminToken}` }, timeout: 10_000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(body));
      });
      req.on('timeout', () => req.destroy(new Error('/metrics: no answer in 10 s')));
      req.on('error', reject);
    });
    const counted = new RegExp(`^apiserver_request_total\\{verb="(${verbs})",.*resource="${resource}"`);
    let n = 0;
    for (const line of text.split('\n')) if (counted.test(line)) n += Number(line.split(' ').pop());
    return n;
  };
  /** The API server's count of GET requests (get and list) of ConfigMaps. */
  const serverReads = () => requestCount('GET|LIST', 'configmaps');

  it('answers get and list from memory, as copies, with the server\'s 404', async () => {
    const admin = s.client().resource(CONFIGMAPS);
    for (const [name, app] of [['a', 'x'], ['b', 'y'], ['c', 'x']]) {
      await admin.create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app } }, data: { k: name } });
    }
    const cms = m.resource(CONFIGMAPS);
    // The first read starts the informer and waits for its list; then the cache catches up with the writes.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if ((await cms.list('default', { labelSelector: 'app' })).items.length === 3) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const before = await serverReads();
    for (let i = 0; i < 20; i++) assert.equal((await cms.get('default', 'a')).data?.k, 'a');
    const listed = await cms.list('default', { labelSelector: 'app=x' });
    assert.deepEqual(listed.items.map((o) => o.metadata.name).sort(), ['a', 'c']);
    assert.equal(listed.kind, 'ConfigMapList');
    assert.match(String(listed.metadata?.resourceVersion), /^\d+$/);
    assert.deepEqual((await cms.list(undefined, { fieldSelector: 'metadata.name=b,metadata.namespace==default' })).items.map((o) => o.metadata.name), ['b']);
    assert.deepEqual((await cms.list('default', { labelSelector: 'app', fieldSelector: 'metadata.name!=a' })).items.map((o) => o.metadata.name).sort(), ['b', 'c']);
    await assert.rejects(cms.get('default', 'nope'), (err: unknown) => {
      assert.ok(err instanceof StatusError);
      assert.equal(err.code, 404);
      assert.equal(err.message, 'configmaps "nope" not found');
      return true;
    });
    // A copy: changing what a read returned changes nothing the next read sees.
    const copy = await cms.get('default', 'b');
    copy.data!.k = 'changed';
    assert.equal((await cms.get('default', 'b')).data?.k, 'b');
    assert.equal(await serverReads(), before, 'no get or list reached the API server');

    // What the cache cannot answer goes to the server: a page, another field, and the API reader.
    const page = await cms.list('default', { limit: '1' });
    assert.equal(page.items.length, 1);
    assert.ok(page.metadata?.continue, 'a page from the server');
    // A field the kind is not selected by: the server's 400, never an empty list from the cache.
    await assert.rejects(cms.list('default', { fieldSelector: 'metadata.resourceVersion=1' }), /"metadata.resourceVersion" is not a known field selector/);
    assert.equal((await m.apiReader(CONFIGMAPS).get('default', 'c')).data?.k, 'c');
    assert.equal(await serverReads(), before + 3);
  });

  it('never answers from a cache that could not list, nor for namespaces it does not hold', async () => {
    // A resource the server does not serve: the informer's list fails, and so does the read (no false 404).
    const missing = m.resource({ group: 'nope.example.com', version: 'v1', resource: 'things' });
    await assert.rejects(missing.get('default', 'x'), (err: unknown) => {
      assert.ok(err instanceof StatusError);
      assert.equal(err.code, 503);
      assert.match(err.message, /^the cache of things\.nope\.example\.com has not synced: .*\(it needs list and watch\)$/);
      return true;
    });
    // A manager of one namespace reads others from the server.
    const scoped = new Manager(s.client('scoped-reader'), { namespace: 'kube-system' });
    await scoped.start();
    try {
      const cms = scoped.resource(CONFIGMAPS);
      await cms.list('kube-system'); // the informer's list
      const before = await serverReads();
      assert.equal((await cms.get('default', 'a')).data?.k, 'a');
      assert.equal(await serverReads(), before + 1);
      await cms.list('kube-system');
      assert.equal(await serverReads(), before + 1, 'its own namespace from the cache');
    } finally {
      await scoped.stop();
    }
  });

  it('reads from the server once the manager has stopped, and starts no informer then', async () => {
    const requests = (verb: string) => requestCount(verb, 'limitranges');
    const stopped = new Manager(s.client('stopped-reader'));
    await stopped.start();
    await stopped.stop();
    const limits = stopped.resource({ group: '', version: 'v1', resource: 'limitranges' });
    const [gets, lists] = [await requests('GET'), await requests('LIST')];
    await assert.rejects(limits.get('default', 'none'), (err: StatusError) => err.code === 404);
    assert.equal((await limits.list('default')).items.length, 0);
    // The server answered both (a started informer would have listed once, then answered from memory).
    assert.equal(await requests('GET'), gets + 1, 'the get went to the server');
    assert.equal(await requests('LIST'), lists + 1, 'the list went to the server');
  });

  it('writes to the API server, and a write shows in later reads once its event is in', async () => {
    const cms = m.resource(CONFIGMAPS);
    const made = await cms.create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w' }, data: { v: '1' } });
    assert.equal(made.metadata.name, 'w');
    await cms.patch('default', 'w', { data: { v: '2' } }, { contentType: 'application/merge-patch+json' });
    const deadline = Date.now() + 10_000;
    let v: string | undefined;
    while (Date.now() < deadline && v !== '2') {
      v = (await cms.get('default', 'w').catch(() => undefined))?.data?.v;
      if (v !== '2') await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(v, '2');
  });
});
