/**
 * RBAC as kube-apiserver's --authorization-mode=RBAC: users from a static token file, judged by the
 * bootstrap policy and the roles and bindings they are given; with Debian's kubectl (`--token`,
 * `--as`, `auth can-i`) and plain HTTP.
 */
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-0123456789';

function tokenFile(): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-rbac-'));
  const path = join(dir, 'tokens.csv');
  writeFileSync(path, `${ALICE},alice,uid-alice\n${BOB},bob,uid-bob,"devs"\n`);
  return { dir, path };
}

/** Retries `check` until it passes: the authorizer reads the watch caches, which follow writes closely but not at once. */
async function eventually(check: () => Promise<void>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

describe('RBAC', () => {
  let s: TestServer;
  let tokens: { dir: string; path: string };
  before(async () => {
    tokens = tokenFile();
    s = await startTestServer({ tokenAuthFile: tokens.path });
    for (const ns of ['team', 'other']) assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status, 201);
  });
  after(async () => {
    await s.stop();
    rmSync(tokens.dir, { recursive: true, force: true });
  });

  it('refuses a user without bindings everywhere, with upstream\'s message, but lets it discover the API', async () => {
    const secrets = await s.request('GET', '/api/v1/namespaces/kube-system/secrets', { token: ALICE });
    assert.equal(secrets.status, 403);
    assert.equal(secrets.json.message, 'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "kube-system"');
    assert.deepEqual(secrets.json.details, { kind: 'secrets' });
    const crd = await s.request('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x', { token: ALICE });
    assert.equal(crd.json.message, 'customresourcedefinitions.apiextensions.k8s.io "x" is forbidden: User "alice" cannot delete resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope');
    const nodes = await s.kubectl(['--token', ALICE, 'get', 'nodes']);
    assert.notEqual(nodes.code, 0);
    assert.match(nodes.stderr, /nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope/);
    for (const path of ['/api', '/apis', '/version', '/openapi/v2']) assert.equal((await s.request('GET', path, { token: ALICE })).status, 200, path);
    const metrics = await s.request('GET', '/metrics', { token: ALICE });
    assert.deepEqual([metrics.status, metrics.json.message], [403, 'forbidden: User "alice" cannot get path "/metrics"']);
    const canI = await s.kubectl(['--token', ALICE, 'auth', 'can-i', 'list', 'secrets']);
    assert.deepEqual([canI.code, canI.stdout.trim()], [1, 'no']);
    const list = await s.kubectl(['--token', ALICE, 'auth', 'can-i', '--list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/);
    assert.doesNotMatch(list.stdout, /secrets/);
  });

  it('lends the rules of a role to the subjects of its bindings, in their namespace only', async () => {
    const binding = await s.kubectl(['create', 'rolebinding', 'alice-view', '--clusterrole=view', '--user=alice', '-n', 'team']);
    assert.equal(binding.code, 0, binding.stderr);
    await eventually(async () => assert.equal((await s.request('GET', '/api/v1/namespaces/team/pods', { token: ALICE })).status, 200));
    assert.equal((await s.request('GET', '/api/v1/namespaces/other/pods', { token: ALICE })).status, 403);
    assert.equal((await s.request('GET', '/api/v1/namespaces/team/secrets', { token: ALICE })).status, 403, 'view does not read secrets');
    const write = await s.request('POST', '/api/v1/namespaces/team/configmaps', { token: ALICE, body: { metadata: { name: 'c' } } });
    assert.equal(write.json.message, 'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team"');
    const review = await s.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { spec: { user: 'alice', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team' } } },
    });
    assert.deepEqual(review.json.status, { allowed: true, reason: 'RBAC: allowed by RoleBinding "alice-view/team" of ClusterRole "view" to User "alice"' });
    // A group subject: bob is in "devs".
    assert.equal((await s.kubectl(['create', 'clusterrolebinding', 'devs-edit', '--clusterrole=edit', '--group=devs'])).code, 0);
    await eventually(async () => {
      const canI = await s.kubectl(['--token', BOB, 'auth', 'can-i', 'create', 'deployments.apps', '-n', 'other']);
      assert.deepEqual([canI.code, canI.stdout.trim()], [0, 'yes']);
    });
  });

  it('names a missing role as the reason of a denial', async () => {
    const ghost = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/other/rolebindings', {
      body: { metadata: { name: 'ghost' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'ghost' }, subjects: [{ kind: 'User', name: 'alice' }] },
    });
    assert.equal(ghost.status, 201, ghost.text);
    await eventually(async () => {
      const res = await s.request('GET', '/api/v1/namespaces/other/services', { token: ALICE });
      assert.equal(res.json.message, 'services is forbidden: User "alice" cannot list resource "services" in API group "" in the namespace "other": RBAC: role.rbac.authorization.k8s.io "ghost" not found');
    });
  });

  it('aggregates labelled ClusterRoles into admin, edit and view', async () => {
    const role = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      body: { metadata: { name: 'widgets-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list'] }] },
    });
    assert.equal(role.status, 201, role.text);
    await eventually(async () => {
      const view = (await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view')).json;
      assert.ok(view.rules.some((r: any) => r.resources?.includes('widgets')), JSON.stringify(view.rules.slice(-2)));
      const admin = (await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/admin')).json;
      assert.ok(admin.rules.some((r: any) => r.resources?.includes('widgets')), 'admin aggregates edit, which aggregates view');
    });
    await eventually(async () => assert.equal((await s.request('GET', '/apis/example.com/v1/namespaces/team/widgets', { token: ALICE })).status, 404, 'allowed (no such resource)'));
  });

  it('refuses to grant what the writer does not hold, unless it may escalate or bind', async () => {
    assert.equal((await s.kubectl(['create', 'rolebinding', 'alice-admin', '--clusterrole=admin', '--user=alice', '-n', 'team'])).code, 0);
    await eventually(async () => assert.equal((await s.request('GET', '/api/v1/namespaces/team/secrets', { token: ALICE })).status, 200));
    const rbacPath = '/apis/rbac.authorization.k8s.io/v1/namespaces/team';
    const held = await s.request('POST', `${rbacPath}/roles`, { token: ALICE, body: { metadata: { name: 'secret-reader' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] } });
    assert.equal(held.status, 201, held.text);
    const tooMuch = await s.request('POST', `${rbacPath}/roles`, {
      token: ALICE,
      body: { metadata: { name: 'too-much' }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['list', 'get'] }, { apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
    });
    assert.equal(tooMuch.status, 403);
    assert.equal(
      tooMuch.json.message,
      'roles.rbac.authorization.k8s.io "too-much" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["list" "get"]}',
    );
    const bindAdmin = await s.request('POST', `${rbacPath}/rolebindings`, {
      token: ALICE,
      body: { metadata: { name: 'bob-admin' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' }, subjects: [{ kind: 'User', name: 'bob' }] },
    });
    assert.equal(bindAdmin.status, 201, `alice holds admin here, so she may lend it: ${bindAdmin.text}`);
    const bindCluster = await s.request('POST', `${rbacPath}/rolebindings`, {
      token: ALICE,
      body: { metadata: { name: 'bob-root' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', name: 'bob' }] },
    });
    assert.equal(bindCluster.status, 403);
    assert.match(bindCluster.json.message, /^rolebindings\.rbac\.authorization\.k8s\.io "bob-root" is forbidden: user "alice" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n/);
    // The `bind` verb on a role lets a user lend it without holding it.
    const binder = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      body: { metadata: { name: 'bind-cluster-admin' }, rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['cluster-admin'] }] },
    });
    assert.equal(binder.status, 201, binder.text);
    assert.equal((await s.kubectl(['create', 'rolebinding', 'alice-binder', '--clusterrole=bind-cluster-admin', '--user=alice', '-n', 'team'])).code, 0);
    await eventually(async () => {
      const again = await s.request('POST', `${rbacPath}/rolebindings`, {
        token: ALICE,
        body: { metadata: { name: 'bob-root' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', name: 'bob' }] },
      });
      assert.equal(again.status, 201, again.text);
    });
  });

  it('authorizes impersonation with the impersonate verb', async () => {
    const as = await s.kubectl(['--token', ALICE, '--as', 'bob', 'get', 'pods', '-n', 'team']);
    assert.notEqual(as.code, 0);
    assert.match(as.stderr, /users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope/);
    const admin = await s.kubectl(['--as', 'alice', 'get', 'secrets', '-n', 'other']);
    assert.notEqual(admin.code, 0, 'the admin impersonating alice has alice\'s rights');
    assert.match(admin.stderr, /User "alice" cannot list resource "secrets"/);
  });
});

describe('RBAC bootstrap policy and modes', () => {
  it('puts back what a start needs, but leaves roles marked autoupdate=false as their owner made them', async () => {
    const s = await startTestServer();
    const dataDir = join(s.dir, 'data');
    try {
      const basic = (await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:basic-user')).json;
      assert.ok(basic.rules.length > 0);
      assert.equal((await s.request('PUT', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:basic-user', { body: { ...basic, rules: [] } })).status, 200);
      const discovery = (await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:discovery')).json;
      discovery.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'] = 'false';
      assert.equal((await s.request('PUT', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:discovery', { body: { ...discovery, rules: [] } })).status, 200);
      await s.kapi.stop();
      const again = await startTestServer({ dataDir });
      try {
        assert.deepEqual((await again.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:basic-user')).json.rules, basic.rules);
        assert.deepEqual((await again.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:discovery')).json.rules, []);
      } finally {
        await again.stop();
      }
    } finally {
      await s.stop();
    }
  });

  it('allows every authenticated request with --authorization-mode=AlwaysAllow', async () => {
    const tokens = tokenFile();
    const s = await startTestServer({ tokenAuthFile: tokens.path, authorizationMode: 'AlwaysAllow' });
    try {
      assert.equal((await s.request('GET', '/api/v1/namespaces/kube-system/secrets', { token: ALICE })).status, 200);
      const role = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { token: ALICE, body: { metadata: { name: 'all' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] } });
      assert.equal(role.status, 201, role.text);
    } finally {
      await s.stop();
      rmSync(tokens.dir, { recursive: true, force: true });
    }
  });
});
