/**
 * Impersonation headers read as upstream's WithImpersonation reads them (http.Header.Get: the first value of
 * Impersonate-User and Impersonate-Uid, where an empty one asks for nothing), with kapi's real RBAC: a request
 * whose headers ask for nothing is served as its own user, over HTTP/1.1 and HTTP/2 alike.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

type Reply = { status: number; json: any };

describe('impersonation headers: empty, repeated and mixed', () => {
  let s: TestServer;
  const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

  /** HTTP/1.1, one header line per value as given (an array is a repeated header). */
  const h1 = (path: string, headers: Record<string, string | string[]>, token?: string) =>
    new Promise<Reply>((resolve, reject) => {
      const req = https.get(new URL(path, s.kapi.url), { ca: s.kapi.caCertPem, agent: false, headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(body) }));
      });
      req.on('error', reject);
    });

  /** HTTP/2, the same headers as header fields. */
  const h2 = (path: string, headers: Record<string, string | string[]>) =>
    new Promise<Reply>((resolve, reject) => {
      const session = http2.connect(s.kapi.url, { ca: s.kapi.caCertPem });
      session.on('error', reject);
      const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
      const stream = session.request({ ':path': path, ...lower });
      let status = 0;
      let body = '';
      stream.on('response', (h) => (status = Number(h[':status'])));
      stream.on('data', (c) => (body += c));
      stream.on('end', () => {
        session.close();
        resolve({ status, json: JSON.parse(body) });
      });
      stream.on('error', reject);
    });

  before(async () => {
    s = await startTestServer();
    // A common setup: every authenticated user may read (view); anonymous users may not.
    const binding = await s.kubectl(['create', 'clusterrolebinding', 'all-view', '--clusterrole=view', '--group=system:authenticated']);
    assert.equal(binding.code, 0, binding.stderr);
  });
  after(() => s.stop());

  const anonymousDenied = (r: Reply, how: string) => {
    assert.equal(r.status, 403, `${how}: ${JSON.stringify(r.json)}`);
    assert.equal(r.json.message, 'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default"', how);
  };

  it('an empty Impersonate-User or Impersonate-Uid asks for nothing: the anonymous caller stays anonymous', async () => {
    const cases: Array<Record<string, string>> = [{ 'Impersonate-User': '' }, { 'Impersonate-Uid': '' }, { 'Impersonate-User': '', 'Impersonate-Uid': '' }];
    for (const headers of cases) {
      anonymousDenied(await h1(CONFIGMAPS, headers), `HTTP/1.1 ${JSON.stringify(headers)}`);
      anonymousDenied(await h2(CONFIGMAPS, headers), `HTTP/2 ${JSON.stringify(headers)}`);
    }
  });

  it('only the first Impersonate-User value counts: an empty first one asks for nothing', async () => {
    // Go's Header.Get: the first value. A second value that names a user does not make it an impersonation.
    anonymousDenied(await h1(CONFIGMAPS, { 'Impersonate-User': ['', 'kapi-admin'] }), 'HTTP/1.1 repeated');
    anonymousDenied(await h2(CONFIGMAPS, { 'Impersonate-User': ['', 'kapi-admin'] }), 'HTTP/2 repeated');
  });

  it('an empty user with groups or extras is a request without a user (400), an empty group is a group', async () => {
    const groups = await h1(CONFIGMAPS, { 'Impersonate-User': '', 'Impersonate-Group': 'system:masters' });
    assert.equal(groups.status, 400);
    assert.equal(groups.json.message, 'requested [{Group  system:masters    }] without impersonating a user');
    // The admin impersonating alice with an empty group: the group is asked for (and so decides the groups).
    const whoami = await new Promise<Reply>((resolve, reject) => {
      const req = https.request(new URL('/apis/authentication.k8s.io/v1/selfsubjectreviews', s.kapi.url), {
        method: 'POST',
        ca: s.kapi.caCertPem,
        agent: false,
        headers: { authorization: `Bearer ${s.kapi.adminToken}`, 'content-type': 'application/json', 'Impersonate-User': 'alice', 'Impersonate-Group': '' },
      }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(body) }));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
    });
    assert.equal(whoami.status, 201, JSON.stringify(whoami.json));
    assert.deepEqual(whoami.json.status.userInfo, { username: 'alice', groups: ['', 'system:authenticated'] });
  });

  it('impersonates in a request made in the process (headers without raw lines), as over the network', async () => {
    const answer = await new Promise<{ status: number; json: any }>((resolve) => {
      let status = 0;
      const chunks: Buffer[] = [];
      s.kapi.loopback(
        {
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          headers: { authorization: `Bearer ${s.kapi.adminToken}`, 'content-type': 'application/json', 'Impersonate-User': 'bob', 'Impersonate-Group': 'devs' },
          body: Buffer.from(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' })),
        },
        { head: (code) => (status = code), data: (c) => chunks.push(c), end: () => resolve({ status, json: JSON.parse(Buffer.concat(chunks).toString()) }) },
        false,
      );
    });
    assert.equal(answer.status, 201, JSON.stringify(answer.json));
    assert.deepEqual(answer.json.status.userInfo, { username: 'bob', groups: ['devs', 'system:authenticated'] });
  });

  it('an authenticated caller with an empty Impersonate-User stays itself', async () => {
    const r = await h1(CONFIGMAPS, { 'Impersonate-User': '' }, s.kapi.adminToken);
    assert.equal(r.status, 200, JSON.stringify(r.json));
  });
});
