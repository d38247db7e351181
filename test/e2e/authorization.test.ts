/**
 * The authorization slot of the filter chain: the authorizer sees each
 * request's attributes as apiserver's RequestInfo gives them, and a request it
 * does not allow gets 403 with upstream's message (responsewriters.Forbidden).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Attributes } from '../../src/api/authorization.js';
import { CRONTAB_CRD, cronTab, startTestServer, type TestServer } from './harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const crontabs = '/apis/stable.example.com/v1/namespaces/default/crontabs';

describe('authorization', () => {
  let s: TestServer;
  let dir: string;
  const seen: Attributes[] = [];
  const others: Attributes[] = [];
  const impersonations: Attributes[] = [];
  const ALICE = 'alice-token';
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-authz-'));
    writeFileSync(join(dir, 'tokens.csv'), `${ALICE},alice,1001,"dev"\n`);
    s = await startTestServer({
      tokenAuthFile: join(dir, 'tokens.csv'),
      authorizer: {
        authorize(a) {
          if (a.verb === 'impersonate') {
            impersonations.push(a);
            return a.name === 'root' ? { decision: 'no-opinion' } : { decision: 'allow' };
          }
          if (a.user?.name !== 'alice') {
            if (a.user?.name !== 'kapi-admin') others.push(a);
            return { decision: 'allow' };
          }
          seen.push(a);
          if (a.resource === 'crontabs' && a.subresource === '' && (a.verb === 'get' || a.verb === 'watch')) return { decision: 'allow' };
          return a.resource === 'secrets' ? { decision: 'deny', reason: 'secrets are off limits' } : { decision: 'no-opinion' };
        },
      },
    });
    assert.equal((await s.request('POST', CRDS, { body: CRONTAB_CRD })).status, 201);
    assert.equal((await s.request('POST', crontabs, { body: cronTab('one') })).status, 201);
  });
  after(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers what the authorizer does not allow with 403 and upstream\'s message', async () => {
    const cases: Array<[string, string, string, Record<string, string>]> = [
      ['GET', '/api/v1/namespaces/kube-system/secrets', 'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "kube-system": secrets are off limits', { kind: 'secrets' }],
      ['GET', `${CRDS}/crontabs.stable.example.com`, 'customresourcedefinitions.apiextensions.k8s.io "crontabs.stable.example.com" is forbidden: User "alice" cannot get resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope', { name: 'crontabs.stable.example.com', group: 'apiextensions.k8s.io', kind: 'customresourcedefinitions' }],
      ['PUT', `${crontabs}/one/status`, 'crontabs.stable.example.com "one" is forbidden: User "alice" cannot update resource "crontabs/status" in API group "stable.example.com" in the namespace "default"', { name: 'one', group: 'stable.example.com', kind: 'crontabs' }],
      ['GET', crontabs, 'crontabs.stable.example.com is forbidden: User "alice" cannot list resource "crontabs" in API group "stable.example.com" in the namespace "default"', { group: 'stable.example.com', kind: 'crontabs' }],
      ['GET', '/metrics', 'forbidden: User "alice" cannot get path "/metrics"', {}],
      ['GET', '/apis', 'forbidden: User "alice" cannot get path "/apis"', {}],
    ];
    for (const [method, path, message, details] of cases) {
      const res = await s.request(method, path, { token: ALICE, body: method === 'PUT' ? cronTab('one') : undefined });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
      assert.deepEqual(res.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Forbidden', details, code: 403 });
    }
    assert.equal((await s.request('GET', `${crontabs}/one`, { token: ALICE })).status, 200);
    assert.equal((await s.request('GET', crontabs)).status, 200, 'others are allowed');
    // Health is authorized as any path (upstream's system:public-info-viewer lets everyone read it).
    const health = await s.request('GET', '/healthz', { token: ALICE });
    assert.deepEqual([health.status, health.json.message], [403, 'forbidden: User "alice" cannot get path "/healthz"']);
  });

  it('gives the authorizer the attributes of the request', async () => {
    seen.length = 0;
    await s.request('GET', `${crontabs}?watch=1&timeoutSeconds=1`, { token: ALICE });
    await s.request('DELETE', crontabs, { token: ALICE });
    await s.request('PATCH', `${crontabs}/one`, { token: ALICE, body: {}, contentType: 'application/merge-patch+json' });
    await s.request('POST', '/openapi/v2', { token: ALICE, body: {} });
    const pick = (a: Attributes) => [a.verb, a.resourceRequest, a.apiGroup, a.apiVersion, a.resource, a.subresource, a.namespace, a.name, a.path];
    assert.deepEqual(seen.map(pick), [
      ['watch', true, 'stable.example.com', 'v1', 'crontabs', '', 'default', '', '/apis/stable.example.com/v1/namespaces/default/crontabs'],
      ['deletecollection', true, 'stable.example.com', 'v1', 'crontabs', '', 'default', '', '/apis/stable.example.com/v1/namespaces/default/crontabs'],
      ['patch', true, 'stable.example.com', 'v1', 'crontabs', '', 'default', 'one', '/apis/stable.example.com/v1/namespaces/default/crontabs/one'],
      ['post', false, '', '', '', '', '', '', '/openapi/v2'],
    ]);
    assert.ok(seen.every((a) => a.user?.name === 'alice' && a.user.groups.includes('system:authenticated')));
  });

  it('impersonates with the impersonate verb on each header, as upstream', async () => {
    const get = (headers: Record<string, string | string[]>, token = ALICE) =>
      new Promise<{ status: number; json: any }>((resolve, reject) => {
        const req = https.get(new URL(`${crontabs}/one`, s.kapi.url), { ca: s.kapi.caCertPem, headers: { authorization: `Bearer ${token}`, ...headers } }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(body) }));
        });
        req.on('error', reject);
      });
    others.length = 0;
    impersonations.length = 0;
    const asBob = await get({ 'Impersonate-User': 'bob', 'Impersonate-Group': ['devs', 'ops, qa'], 'Impersonate-Extra-Reason%2Fwhy': 'testing' });
    assert.equal(asBob.status, 200, JSON.stringify(asBob.json));
    assert.deepEqual(impersonations.map((a) => [a.user?.name, a.verb, a.apiGroup, a.resource, a.subresource, a.name]), [
      ['alice', 'impersonate', '', 'users', '', 'bob'],
      ['alice', 'impersonate', '', 'groups', '', 'devs'],
      ['alice', 'impersonate', '', 'groups', '', 'ops, qa'],
      ['alice', 'impersonate', 'authentication.k8s.io', 'userextras', 'reason/why', 'testing'],
    ]);
    assert.equal(others.length, 1);
    assert.deepEqual(JSON.parse(JSON.stringify(others[0].user)), { name: 'bob', uid: '', groups: ['devs', 'ops, qa', 'system:authenticated'], extra: { 'reason/why': ['testing'] } });
    assert.equal(others[0].verb, 'get');

    const protoKey = await get({ 'Impersonate-User': 'bob', 'Impersonate-Extra-__proto__': 'x', 'Impersonate-Extra-constructor': 'y' });
    assert.equal(protoKey.status, 200, JSON.stringify(protoKey.json));
    assert.equal(JSON.stringify(others.at(-1)!.user!.extra), '{"__proto__":["x"],"constructor":["y"]}', 'extra keys are plain members');

    const denied = await get({ 'Impersonate-User': 'root' });
    assert.equal(denied.status, 403);
    assert.equal(denied.json.message, 'users "root" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope');
    assert.deepEqual(denied.json.details, { name: 'root', kind: 'users' });

    const noUser = await get({ 'Impersonate-Group': 'devs' });
    assert.equal(noUser.status, 400);
    assert.equal(noUser.json.message, 'requested [{Group  devs    }] without impersonating a user');

    others.length = 0;
    const kubectl = await s.kubectl(['--as', 'system:serviceaccount:default:builder', 'get', 'configmaps', '-n', 'default', '-o', 'name']);
    assert.equal(kubectl.code, 0, kubectl.stderr);
    const sa = others.find((a) => a.resource === 'configmaps');
    assert.deepEqual(sa?.user?.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
    assert.equal(sa?.user?.name, 'system:serviceaccount:default:builder');
  });
});
