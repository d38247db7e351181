/**
 * Resources with no store: the reviews of authentication.k8s.io and
 * authorization.k8s.io, registered as virtual endpoints, in discovery, asked
 * by kubectl (`auth can-i`, `auth can-i --list`), client-node and plain HTTP,
 * and answered by the server's authenticator and authorizer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import type { Attributes, Decision } from '../../src/api/authorization.js';
import { startTestServer, type TestServer } from './harness.js';

const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';

describe('reviews (virtual endpoints)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({
      authorizer: {
        // bob may not read Secrets; everything else is allowed.
        authorize: (a: Attributes): Decision =>
          a.user?.name === 'bob' && a.resource === 'secrets' && a.verb === 'get' ? { decision: 'deny', reason: 'bob never reads secrets' } : { decision: 'allow' },
      },
    });
  });
  after(() => s.stop());

  it('appear in discovery as create-only resources', async () => {
    const authz = await s.request('GET', '/apis/authorization.k8s.io/v1');
    assert.equal(authz.status, 200);
    const byName = new Map(authz.json.resources.map((r: any) => [r.name, r]));
    assert.deepEqual(byName.get('selfsubjectaccessreviews'), { name: 'selfsubjectaccessreviews', singularName: 'selfsubjectaccessreview', namespaced: false, kind: 'SelfSubjectAccessReview', verbs: ['create'] });
    assert.equal((byName.get('localsubjectaccessreviews') as any).namespaced, true);
    assert.ok(byName.has('subjectaccessreviews') && byName.has('selfsubjectrulesreviews'));
    const authn = await s.request('GET', '/apis/authentication.k8s.io/v1');
    assert.deepEqual(authn.json.resources.map((r: any) => r.name).sort(), ['selfsubjectreviews', 'tokenreviews']);
    const groups = await s.request('GET', '/apis');
    assert.ok(groups.json.groups.some((g: any) => g.name === 'authorization.k8s.io'));
  });

  it('answers kubectl auth can-i from the authorizer, impersonated users included', async () => {
    const yes = await s.kubectl(['auth', 'can-i', 'create', 'configmaps']);
    assert.equal(yes.stdout.trim(), 'yes', yes.stderr);
    assert.equal(yes.code, 0);
    const no = await s.kubectl(['--as', 'bob', 'auth', 'can-i', 'get', 'secrets', '-n', 'default']);
    assert.equal(no.stdout.trim(), 'no - bob never reads secrets', no.stderr);
    assert.equal(no.code, 1);
    const list = await s.kubectl(['auth', 'can-i', '--list', '-n', 'default']);
    assert.equal(list.code, 0, list.stderr);
    // The custom authorizer cannot list its rules: none, and kubectl is told they are incomplete.
    assert.doesNotMatch(list.stdout, /\*\.\*/);
  });

  it('answers SelfSubjectAccessReview and checks its spec as upstream', async () => {
    const body = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'default' } } };
    const allowed = await s.request('POST', SSAR, { body });
    assert.equal(allowed.status, 201, allowed.text);
    assert.deepEqual(allowed.json.status, { allowed: true });
    assert.deepEqual(allowed.json.metadata, { creationTimestamp: null });
    assert.deepEqual(allowed.json.spec, body.spec);
    const empty = await s.request('POST', SSAR, { body: { ...body, spec: {} } });
    assert.equal(empty.status, 422);
    assert.equal(empty.json.message, 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified');
    const sar = await s.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: { kind: 'SubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', spec: { nonResourceAttributes: { path: '/healthz', verb: 'get' } } } });
    assert.equal(sar.status, 422);
    assert.match(sar.json.message, /spec\.user: Invalid value: "": at least one of user or group must be specified$/);
    const bob = await s.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: { spec: { user: 'bob', resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'x' } } } });
    assert.equal(bob.status, 201, bob.text);
    assert.deepEqual(bob.json.status, { allowed: false, denied: true, reason: 'bob never reads secrets' });
    // A local review needs no namespace to exist, and its namespace must be the one it asks about.
    const local = await s.request('POST', '/apis/authorization.k8s.io/v1/namespaces/nowhere/localsubjectaccessreviews', { body: { spec: { user: 'bob', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'nowhere' } } } });
    assert.equal(local.status, 201, local.text);
    assert.equal(local.json.metadata.namespace, 'nowhere');
    assert.equal(local.json.status.allowed, true);
    const mismatch = await s.request('POST', '/apis/authorization.k8s.io/v1/namespaces/nowhere/localsubjectaccessreviews', { body: { spec: { user: 'bob', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'other' } } } });
    assert.equal(mismatch.status, 422);
    assert.match(mismatch.json.message, /spec\.resourceAttributes\.namespace: Invalid value: "other": must match metadata\.namespace/);
  });

  it('serves create only, at the collection, in its scope', async () => {
    const get = await s.request('GET', SSAR);
    assert.equal(get.status, 405);
    assert.equal(get.json.reason, 'MethodNotAllowed');
    const named = await s.request('GET', `${SSAR}/x`);
    assert.equal(named.status, 404, 'no route for a named review');
    const namespaced = await s.request('POST', '/apis/authorization.k8s.io/v1/namespaces/default/selfsubjectaccessreviews', { body: {} });
    assert.equal(namespaced.status, 404);
  });

  it('answers who a token or the caller is (TokenReview, SelfSubjectReview)', async () => {
    const ok = await s.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: s.kapi.adminToken } } });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.json.status.authenticated, true);
    assert.equal(ok.json.status.user.username, 'kapi-admin');
    assert.ok(ok.json.status.user.groups.includes('system:masters'));
    const bad = await s.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { spec: { token: 'not-a-token' } } });
    assert.equal(bad.status, 201);
    assert.deepEqual(bad.json.status, { user: {} });
    const none = await s.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { spec: {} } });
    assert.equal(none.status, 400);
    assert.equal(none.json.message, 'token is required for TokenReview in authentication');
    const me = await s.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    assert.equal(me.status, 201, me.text);
    assert.equal(me.json.status.userInfo.username, 'kapi-admin');
    assert.deepEqual(me.json.status.userInfo.groups, ['system:masters', 'system:authenticated']);
    assert.match(me.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('is reachable from client-node with typed models', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(s.kapi.kubeconfigPath);
    const authz = kc.makeApiClient(k8s.AuthorizationV1Api);
    const review = await authz.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { verb: 'delete', resource: 'configmaps', namespace: 'default' } } } });
    assert.equal(review.status?.allowed, true);
    const rules = await authz.createSelfSubjectRulesReview({ body: { spec: { namespace: 'default' } } });
    assert.equal(rules.status?.incomplete, true);
    assert.deepEqual(rules.status?.resourceRules, []);
  });
});

describe('reviews with the default authorizer (AlwaysAllow)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('lists AlwaysAllow\'s rules for kubectl auth can-i --list', async () => {
    const list = await s.kubectl(['auth', 'can-i', '--list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
    assert.match(list.stdout, /^\s+\[\*\]\s+\[\]\s+\[\*\]$/m);
  });
});
