/**
 * ServiceAccount tokens as kube-apiserver's: the TokenRequest API (`serviceaccounts/<name>/token`,
 * `kubectl create token`), tokens authenticating as their account while it (and the object a token is
 * bound to) exists, audiences, TokenReview, and RBAC for service accounts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { startTestServer, type TestServer } from './harness.js';

const sa = (ns: string) => `/api/v1/namespaces/${ns}/serviceaccounts`;
const whoami = (s: TestServer, token: string) =>
  s.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { token, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
const payload = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));

describe('ServiceAccount tokens', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'team' } } })).status, 201);
    assert.equal((await s.request('POST', sa('team'), { body: { metadata: { name: 'builder' } } })).status, 201);
  });
  after(() => s.stop());

  it('issues a token for an account that authenticates as it, with upstream\'s claims', async () => {
    const discovered = (await s.request('GET', '/api/v1')).json.resources.find((r: any) => r.name === 'serviceaccounts/token');
    assert.deepEqual(discovered, { name: 'serviceaccounts/token', singularName: '', namespaced: true, group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] });
    const res = await s.request('POST', `${sa('team')}/builder/token`, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.json.spec, { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600, boundObjectRef: null });
    const token: string = res.json.status.token;
    const claims = payload(token);
    const account = (await s.request('GET', `${sa('team')}/builder`)).json;
    assert.equal(claims.sub, 'system:serviceaccount:team:builder');
    assert.equal(claims.iss, 'https://kubernetes.default.svc.cluster.local');
    assert.deepEqual(claims['kubernetes.io'], { namespace: 'team', serviceaccount: { name: 'builder', uid: account.metadata.uid } });
    assert.equal(claims.exp - claims.iat, 3600);
    assert.equal(Date.parse(res.json.status.expirationTimestamp) / 1000, claims.exp);
    const me = (await whoami(s, token)).json.status.userInfo;
    assert.deepEqual(me, {
      username: 'system:serviceaccount:team:builder',
      uid: account.metadata.uid,
      groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`] },
    });
    // RBAC knows service accounts as subjects.
    const denied = await s.request('GET', '/api/v1/namespaces/team/pods', { token });
    assert.equal(denied.json.message, 'pods is forbidden: User "system:serviceaccount:team:builder" cannot list resource "pods" in API group "" in the namespace "team"');
    assert.equal((await s.kubectl(['create', 'rolebinding', 'builder-view', '--clusterrole=view', '--serviceaccount=team:builder', '-n', 'team'])).code, 0);
    for (let i = 0; i < 200 && (await s.request('GET', '/api/v1/namespaces/team/pods', { token })).status !== 200; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal((await s.request('GET', '/api/v1/namespaces/team/pods', { token })).status, 200);
  });

  it('binds a token to a pod: it dies with the pod', async () => {
    const pod = await s.request('POST', '/api/v1/namespaces/team/pods', { body: { metadata: { name: 'job' }, spec: { serviceAccountName: 'builder', containers: [{ name: 'c', image: 'x' }] } } });
    assert.equal(pod.status, 201, pod.text);
    const res = await s.request('POST', `${sa('team')}/builder/token`, { body: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'job', uid: pod.json.metadata.uid }, expirationSeconds: 7200 } } });
    assert.equal(res.status, 201, res.text);
    const token = res.json.status.token;
    assert.deepEqual(payload(token)['kubernetes.io'].pod, { name: 'job', uid: pod.json.metadata.uid });
    const me = (await whoami(s, token)).json.status.userInfo;
    assert.deepEqual([me.extra['authentication.kubernetes.io/pod-name'], me.extra['authentication.kubernetes.io/pod-uid']], [['job'], [pod.json.metadata.uid]]);
    const other = await s.request('POST', `${sa('team')}/default/token`, { body: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'job' } } } });
    assert.deepEqual([other.status, other.json.message], [400, 'cannot bind token for serviceaccount "default" to pod running with different serviceaccount name.']);
    const wrongUid = await s.request('POST', `${sa('team')}/builder/token`, { body: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'job', uid: 'nope' } } } });
    assert.equal(wrongUid.status, 409);
    const kind = await s.request('POST', `${sa('team')}/builder/token`, { body: { spec: { boundObjectRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' } } } });
    assert.deepEqual([kind.status, kind.json.message], [400, 'cannot bind token to object of type apps/v1, Kind=Deployment']);
    assert.equal((await s.request('DELETE', '/api/v1/namespaces/team/pods/job')).status, 200);
    for (let i = 0; i < 200 && (await whoami(s, token)).status !== 401; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal((await whoami(s, token)).status, 401, 'the pod is gone, and the token with it');
  });

  it('fills a token Secret a user creates for an account with a legacy token, valid while the Secret holds it', async () => {
    assert.equal((await s.request('POST', sa('team'), { body: { metadata: { name: 'old-style' } } })).status, 201);
    const secrets = '/api/v1/namespaces/team/secrets';
    const created = await s.request('POST', secrets, { body: { metadata: { name: 'old-style-token', annotations: { 'kubernetes.io/service-account.name': 'old-style' } }, type: 'kubernetes.io/service-account-token' } });
    assert.equal(created.status, 201, created.text);
    let secret: any;
    for (let i = 0; i < 300; i++) {
      secret = (await s.request('GET', `${secrets}/old-style-token`)).json;
      if (secret.data?.token) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const account = (await s.request('GET', `${sa('team')}/old-style`)).json;
    assert.equal(secret.metadata.annotations['kubernetes.io/service-account.uid'], account.metadata.uid);
    assert.equal(Buffer.from(secret.data.namespace, 'base64').toString(), 'team');
    assert.equal(Buffer.from(secret.data['ca.crt'], 'base64').toString(), s.kapi.caCertPem);
    const token = Buffer.from(secret.data.token, 'base64').toString();
    assert.equal(payload(token).iss, 'kubernetes/serviceaccount');
    assert.equal((await whoami(s, token)).json.status.userInfo.username, 'system:serviceaccount:team:old-style');
    assert.equal((await s.request('DELETE', `${secrets}/old-style-token`)).status, 200);
    for (let i = 0; i < 200 && (await whoami(s, token)).status !== 401; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal((await whoami(s, token)).status, 401, 'the Secret is gone, and its token with it');
    // A token Secret of an account that does not exist is deleted.
    const orphan = await s.request('POST', secrets, { body: { metadata: { name: 'orphan', annotations: { 'kubernetes.io/service-account.name': 'nobody' } }, type: 'kubernetes.io/service-account-token' } });
    assert.equal(orphan.status, 201, orphan.text);
    for (let i = 0; i < 300 && (await s.request('GET', `${secrets}/orphan`)).status !== 404; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal((await s.request('GET', `${secrets}/orphan`)).status, 404);
  });

  it('publishes the issuer\'s discovery document and keys, with which a token checks out', async () => {
    const token = (await s.request('POST', `${sa('team')}/default/token`, { body: { spec: {} } })).json.status.token;
    const config = await s.request('GET', '/.well-known/openid-configuration', { token });
    assert.equal(config.status, 200, 'service accounts may read it (system:service-account-issuer-discovery)');
    assert.deepEqual(config.json, {
      issuer: 'https://kubernetes.default.svc.cluster.local',
      jwks_uri: 'https://kubernetes.default.svc.cluster.local/openid/v1/jwks',
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
    });
    const jwks = await s.request('GET', '/openid/v1/jwks', { token });
    assert.equal(jwks.headers['content-type'], 'application/jwk-set+json');
    const { payload: checked } = await jwtVerify(token, createLocalJWKSet(jwks.json), { issuer: config.json.issuer });
    assert.equal(checked.sub, 'system:serviceaccount:team:default');
    assert.equal((await s.request('GET', '/openid/v1/jwks', { token: null })).status, 403, 'not anonymous users');
  });

  it('mounts a projected token volume into pods, unless the pod or its account opts out', async () => {
    const pods = '/api/v1/namespaces/team/pods';
    const made = await s.request('POST', pods, {
      body: { metadata: { name: 'mounted' }, spec: { initContainers: [{ name: 'i', image: 'x' }], containers: [{ name: 'c', image: 'x' }, { name: 'own', image: 'x', volumeMounts: [{ name: 'mine', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] }], volumes: [{ name: 'mine', emptyDir: {} }] } },
    });
    assert.equal(made.status, 201, made.text);
    const volume = made.json.spec.volumes.find((v: any) => v.name.startsWith('kube-api-access-'));
    assert.match(volume.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.deepEqual(volume.projected, {
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 420,
    });
    const mount = { name: volume.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' };
    assert.deepEqual(made.json.spec.initContainers[0].volumeMounts, [mount]);
    assert.deepEqual(made.json.spec.containers[0].volumeMounts, [mount]);
    assert.equal(made.json.spec.containers[1].volumeMounts.length, 1, 'a container with its own mount there keeps it');
    const optOut = await s.request('POST', pods, { body: { metadata: { name: 'no-token' }, spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'x' }] } } });
    assert.equal(optOut.json.spec.volumes, undefined);
    assert.equal((await s.request('POST', sa('team'), { body: { metadata: { name: 'quiet' }, automountServiceAccountToken: false } })).status, 201);
    const accounts = s.kapi.registry.lookup('', 'v1', 'serviceaccounts')!.store;
    for (let i = 0; i < 200 && !accounts.cache.get(accounts.key('team', 'quiet')); i++) await new Promise((r) => setTimeout(r, 10));
    const quiet = await s.request('POST', pods, { body: { metadata: { name: 'quiet' }, spec: { serviceAccountName: 'quiet', containers: [{ name: 'c', image: 'x' }] } } });
    assert.equal(quiet.json.spec.volumes, undefined, 'the account opts out');
  });

  it('checks audiences, expiry requests and the account', async () => {
    const short = await s.request('POST', `${sa('team')}/builder/token`, { body: { spec: { expirationSeconds: 599 } } });
    assert.deepEqual([short.status, short.json.message], [422, 'TokenRequest.authentication.k8s.io "builder" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes']);
    const missing = await s.request('POST', `${sa('team')}/ghost/token`, { body: { spec: {} } });
    assert.deepEqual([missing.status, missing.json.message], [404, 'serviceaccounts "ghost" not found']);
    const vault = (await s.request('POST', `${sa('team')}/builder/token`, { body: { spec: { audiences: ['vault'] } } })).json.status.token;
    assert.equal((await whoami(s, vault)).status, 401, 'a token for another audience does not authenticate here');
    const review = await s.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: vault, audiences: ['vault', 'other'] } } });
    assert.deepEqual([review.json.status.authenticated, review.json.status.user.username, review.json.status.audiences], [true, 'system:serviceaccount:team:builder', ['vault']]);
    // A static token is good for the API server's audience only.
    const admin = await s.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: s.kapi.adminToken, audiences: ['vault'] } } });
    assert.equal(admin.json.status.authenticated, undefined);
    // A token may be bound to any Secret of the namespace.
    assert.equal((await s.request('POST', '/api/v1/namespaces/team/secrets', { body: { metadata: { name: 'plain' } } })).status, 201);
    const bound = await s.request('POST', `${sa('team')}/builder/token`, { body: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: 'plain' } } } });
    assert.equal(bound.status, 201, bound.text);
    const here = (await s.request('POST', `${sa('team')}/builder/token`, { body: { spec: {} } })).json.status.token;
    const tampered = `${here.slice(0, -4)}AAAA`;
    assert.equal((await whoami(s, tampered)).status, 401);
    // The account goes, and a new one of the same name is another account.
    assert.equal((await s.request('DELETE', `${sa('team')}/builder`)).status, 200);
    assert.equal((await s.request('POST', sa('team'), { body: { metadata: { name: 'builder' } } })).status, 201);
    for (let i = 0; i < 200 && (await whoami(s, here)).status !== 401; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal((await whoami(s, here)).status, 401);
  });
});
