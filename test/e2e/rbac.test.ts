/**
 * Authentication and RBAC as kube-apiserver's: users from a static token file and from client
 * certificates, anonymous requests, judged by the bootstrap policy and the roles and bindings they are
 * given; with Debian's kubectl (their own kubeconfigs, `--as`, `auth can-i`) and plain HTTP.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
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

/** A kubeconfig of the server's with only a token (admin.kubeconfig also holds the admin's client certificate, which kubectl would send along). */
function kubeconfigFor(s: TestServer, token: string): string {
  const path = join(s.dir, `kubeconfig-${token.slice(0, 5)}`);
  const ca = Buffer.from(s.kapi.caCertPem).toString('base64');
  writeFileSync(path, `apiVersion: v1\nkind: Config\nclusters: [{name: k, cluster: {server: "${s.kapi.url}", certificate-authority-data: ${ca}}}]\nusers: [{name: u, user: {token: ${token}}}]\ncontexts: [{name: k, context: {cluster: k, user: u}}]\ncurrent-context: k\n`);
  return path;
}

describe('RBAC', () => {
  let s: TestServer;
  let tokens: { dir: string; path: string };
  const as = (token: string, args: string[]) => s.kubectl(['--kubeconfig', kubeconfigFor(s, token), ...args]);
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
    const nodes = await as(ALICE, ['get', 'nodes']);
    assert.notEqual(nodes.code, 0);
    assert.match(nodes.stderr, /nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope/);
    for (const path of ['/api', '/apis', '/version', '/openapi/v2']) assert.equal((await s.request('GET', path, { token: ALICE })).status, 200, path);
    const metrics = await s.request('GET', '/metrics', { token: ALICE });
    assert.deepEqual([metrics.status, metrics.json.message], [403, 'forbidden: User "alice" cannot get path "/metrics"']);
    const canI = await as(ALICE, ['auth', 'can-i', 'list', 'secrets']);
    assert.deepEqual([canI.code, canI.stdout.trim()], [1, 'no']);
    const list = await as(ALICE, ['auth', 'can-i', '--list']);
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
    // The bindings are visited in the store's order (by name), as upstream's: one made later but named earlier, for
    // alice or for a group of hers, names the decision; once it goes, the first again. The namespace's index is
    // brought up to date binding by binding.
    const sar = async () =>
      (await s.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: { spec: { user: 'alice', groups: ['readers'], resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team' } } } })).json.status.reason;
    assert.equal((await s.kubectl(['create', 'rolebinding', 'aa-readers', '--clusterrole=view', '--group=readers', '-n', 'team'])).code, 0);
    assert.equal(await sar(), 'RBAC: allowed by RoleBinding "aa-readers/team" of ClusterRole "view" to Group "readers"');
    assert.equal((await s.kubectl(['create', 'rolebinding', 'a-alice', '--clusterrole=view', '--user=alice', '-n', 'team'])).code, 0);
    assert.equal(await sar(), 'RBAC: allowed by RoleBinding "a-alice/team" of ClusterRole "view" to User "alice"');
    assert.equal((await s.kubectl(['delete', 'rolebinding', 'a-alice', 'aa-readers', '-n', 'team'])).code, 0);
    assert.equal(await sar(), 'RBAC: allowed by RoleBinding "alice-view/team" of ClusterRole "view" to User "alice"');
    // A group subject: bob is in "devs".
    assert.equal((await s.kubectl(['create', 'clusterrolebinding', 'devs-edit', '--clusterrole=edit', '--group=devs'])).code, 0);
    await eventually(async () => {
      const canI = await as(BOB, ['auth', 'can-i', 'create', 'deployments.apps', '-n', 'other']);
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
    const impersonating = await as(ALICE, ['--as', 'bob', 'get', 'pods', '-n', 'team']);
    assert.notEqual(impersonating.code, 0);
    assert.match(impersonating.stderr, /users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope/);
    const admin = await s.kubectl(['--as', 'alice', 'get', 'secrets', '-n', 'other']);
    assert.notEqual(admin.code, 0, 'the admin impersonating alice has alice\'s rights');
    assert.match(admin.stderr, /User "alice" cannot list resource "secrets"/);
  });
});

describe('RBAC decisions', () => {
  let s: TestServer;
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  before(async () => {
    s = await startTestServer();
    const role = (name: string, rules: unknown[]) => s.request('POST', `${rbac}/clusterroles`, { body: { metadata: { name }, rules } });
    const bind = (name: string, roleName: string, subjects: unknown[], namespace?: string) =>
      s.request('POST', namespace ? `${rbac}/namespaces/${namespace}/rolebindings` : `${rbac}/clusterrolebindings`, {
        body: { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName }, subjects },
      });
    const results = await Promise.all([
      role('one-config', [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['app-config'], verbs: ['get', 'watch', 'list'] }]),
      role('scalers', [{ apiGroups: ['apps'], resources: ['*/scale'], verbs: ['get', 'update'] }]),
      role('deploy-all', [{ apiGroups: ['apps', 'batch'], resources: ['*'], verbs: ['*'] }]),
      role('logs', [{ nonResourceURLs: ['/logs/*', '/healthz'], verbs: ['get'] }]),
      bind('u-one', 'one-config', [{ kind: 'User', name: 'u' }], 'default'),
      bind('g-scale', 'scalers', [{ kind: 'Group', name: 'ops' }]),
      bind('sa-deploy', 'deploy-all', [{ kind: 'ServiceAccount', name: 'ci' }], 'default'),
      bind('u-logs', 'logs', [{ kind: 'User', name: 'u' }]),
    ]);
    for (const r of results) assert.equal(r.status, 201, r.text);
  });
  after(() => s.stop());

  it('answers a matrix of users, groups, accounts, verbs, resources, subresources, names, namespaces and URLs as upstream', async () => {
    type Case = [user: string, groups: string[], attrs: Record<string, string>, allowed: boolean];
    const cases: Case[] = [
      ['u', [], { verb: 'get', resource: 'configmaps', name: 'app-config', namespace: 'default' }, true],
      ['u', [], { verb: 'get', resource: 'configmaps', name: 'other', namespace: 'default' }, false],
      ['u', [], { verb: 'list', resource: 'configmaps', namespace: 'default' }, false],
      ['u', [], { verb: 'watch', resource: 'configmaps', name: 'app-config', namespace: 'default' }, true],
      ['u', [], { verb: 'get', resource: 'configmaps', name: 'app-config', namespace: 'kube-system' }, false],
      ['u', [], { verb: 'update', resource: 'configmaps', name: 'app-config', namespace: 'default' }, false],
      ['v', ['ops'], { verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'x' }, true],
      ['v', ['ops'], { verb: 'update', group: 'apps', resource: 'statefulsets', subresource: 'scale', namespace: 'x' }, true],
      ['v', ['ops'], { verb: 'update', group: 'apps', resource: 'deployments', namespace: 'x' }, false],
      ['v', ['ops'], { verb: 'update', group: 'apps', resource: 'deployments', subresource: 'status', namespace: 'x' }, false],
      ['v', ['ops'], { verb: 'update', group: '', resource: 'replicationcontrollers', subresource: 'scale', namespace: 'x' }, false],
      ['system:serviceaccount:default:ci', ['system:serviceaccounts'], { verb: 'delete', group: 'batch', resource: 'jobs', namespace: 'default' }, true],
      ['system:serviceaccount:default:ci', ['system:serviceaccounts'], { verb: 'create', group: 'apps', resource: 'deployments', subresource: 'rollback', namespace: 'default' }, true],
      ['system:serviceaccount:default:ci', ['system:serviceaccounts'], { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'other' }, false],
      ['system:serviceaccount:other:ci', [], { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'default' }, false],
      ['system:serviceaccount:default:ci', [], { verb: 'get', group: '', resource: 'pods', namespace: 'default' }, false],
      ['u', [], { verb: 'get', path: '/logs/kube-apiserver.log' }, true],
      ['u', [], { verb: 'get', path: '/logs' }, false],
      ['u', [], { verb: 'get', path: '/healthz' }, true],
      ['u', [], { verb: 'post', path: '/healthz' }, false],
      ['anyone', ['system:authenticated'], { verb: 'get', path: '/apis/apps/v1' }, true],
      ['system:anonymous', ['system:unauthenticated'], { verb: 'get', path: '/apis' }, false],
      ['system:anonymous', ['system:unauthenticated'], { verb: 'get', path: '/readyz' }, true],
      ['admin', ['system:masters'], { verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, true],
    ];
    const answers = await Promise.all(
      cases.map(async ([user, groups, attrs]) => {
        const { path, ...resource } = attrs;
        const spec = path ? { user, groups, nonResourceAttributes: { path, verb: attrs.verb } } : { user, groups, resourceAttributes: resource };
        const res = await s.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } });
        return res.json.status.allowed;
      }),
    );
    const wrong = cases.filter((c, i) => answers[i] !== c[3]).map((c) => `${c[0]} ${JSON.stringify(c[2])}: want ${c[3]}`);
    assert.deepEqual(wrong, []);
  });

  it('does not let a rule for one name be granted as a rule for every name', async () => {
    const role = await s.request('POST', `${rbac}/clusterroles`, {
      body: {
        metadata: { name: 'one-secret-and-roles' },
        rules: [
          { apiGroups: [''], resources: ['secrets'], resourceNames: ['one'], verbs: ['get'] },
          { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['create'] },
        ],
      },
    });
    assert.equal(role.status, 201, role.text);
    const binding = await s.request('POST', `${rbac}/namespaces/default/rolebindings`, {
      body: { metadata: { name: 'carl' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'one-secret-and-roles' }, subjects: [{ kind: 'User', name: 'carl' }] },
    });
    assert.equal(binding.status, 201, binding.text);
    let out = { code: 0, stdout: '', stderr: '' };
    for (let i = 0; i < 100; i++) {
      out = await s.kubectl(['--as', 'carl', 'create', 'role', 'all-secrets', '--verb=get', '--resource=secrets', '-n', 'default']);
      if (/attempting to grant/.test(out.stderr) || out.code === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.notEqual(out.code, 0, 'carl may get one Secret, not grant getting them all');
    assert.match(out.stderr, /roles\.rbac\.authorization\.k8s\.io "all-secrets" is forbidden: user "carl" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}/);
    const named = await s.kubectl(['--as', 'carl', 'create', 'role', 'the-one', '--verb=get', '--resource=secrets', '--resource-name=one', '-n', 'default']);
    assert.equal(named.code, 0, named.stderr);
  });

  it('lets a user allowed one name get and watch it (the name of a fieldSelector), not list them all', async () => {
    const tokens = tokenFile();
    const t = await startTestServer({ tokenAuthFile: tokens.path });
    try {
      await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'app-config' }, data: { a: '1' } } });
      await t.request('POST', `${rbac}/clusterroles`, { body: { metadata: { name: 'one-config' }, rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['app-config'], verbs: ['get', 'watch', 'list'] }] } });
      await t.request('POST', `${rbac}/namespaces/default/rolebindings`, {
        body: { metadata: { name: 'alice-one' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'one-config' }, subjects: [{ kind: 'User', name: 'alice' }] },
      });
      const cms = '/api/v1/namespaces/default/configmaps';
      for (let i = 0; i < 200 && (await t.request('GET', `${cms}/app-config`, { token: ALICE })).status !== 200; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal((await t.request('GET', `${cms}/app-config`, { token: ALICE })).status, 200);
      assert.equal((await t.request('GET', cms, { token: ALICE })).status, 403);
      const one = await t.request('GET', `${cms}?fieldSelector=metadata.name%3Dapp-config`, { token: ALICE });
      assert.deepEqual([one.status, one.json.items?.map((i: any) => i.metadata.name)], [200, ['app-config']]);
      const watch = await t.request('GET', `${cms}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dapp-config`, { token: ALICE });
      assert.equal(watch.status, 200);
      assert.match(watch.text, /"type":"ADDED"[^\n]*"name":"app-config"/);
      assert.equal((await t.request('GET', `${cms}?fieldSelector=metadata.name%3Dother`, { token: ALICE })).status, 403);
    } finally {
      await t.stop();
      rmSync(tokens.dir, { recursive: true, force: true });
    }
  });
});

describe('RBAC objects\' validation', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const causes = (res: any) => res.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);

  it('refuses rules, role references and subjects upstream refuses, with its messages', async () => {
    const role = await s.request('POST', `${rbac}/namespaces/default/roles`, {
      body: { metadata: { name: 'bad' }, rules: [{ apiGroups: [''], resources: ['pods'] }, { nonResourceURLs: ['/healthz'], verbs: ['get'] }, { verbs: ['get'], resources: ['a', 'b'], resourceNames: ['x'] }] },
    });
    assert.equal(role.status, 422);
    assert.deepEqual(causes(role), [
      'rules[0].verbs: Required value: verbs must contain at least one value',
      'rules[1].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs',
      'rules[2].apiGroups: Required value: resource rules must supply at least one api group',
    ]);
    const binding = await s.request('POST', `${rbac}/clusterrolebindings`, {
      body: { metadata: { name: 'bad' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'x' }, subjects: [{ kind: 'ServiceAccount', name: 'sa' }, { kind: 'Robot', name: 'r' }] },
    });
    assert.deepEqual(causes(binding), [
      'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
      'subjects[0].namespace: Required value',
      'subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
    ]);
    const ok = await s.request('POST', `${rbac}/namespaces/default/rolebindings`, {
      body: { metadata: { name: 'rb' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'u' }] },
    });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.json.subjects[0].apiGroup, 'rbac.authorization.k8s.io', 'a User subject is defaulted into the RBAC group');
    const changed = await s.request('PUT', `${rbac}/namespaces/default/rolebindings/rb`, { body: { ...ok.json, roleRef: { ...ok.json.roleRef, name: 'edit' } } });
    assert.equal(changed.json.message, 'RoleBinding.rbac.authorization.k8s.io "rb" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef');
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

describe('client certificates and anonymous requests', () => {
  let dir: string;
  let s: TestServer;
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  /** A CA, and a client certificate it signs for CN `cn` and the organizations `orgs`. */
  const issue = (ca: string, cn: string, orgs: string[]) => {
    const subject = `${orgs.map((o) => `/O=${o}`).join('')}/CN=${cn}`;
    openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${cn}.key`, '-out', `${cn}.csr`, '-subj', subject]);
    writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
    openssl(['x509', '-req', '-in', `${cn}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '2', '-extfile', 'client.ext', '-out', `${cn}.crt`]);
    return { cert: readFileSync(join(dir, `${cn}.crt`), 'utf8'), key: readFileSync(join(dir, `${cn}.key`), 'utf8') };
  };
  const makeCA = (name: string) =>
    openssl(['req', '-x509', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-subj', `/CN=${name}`, '-days', '2']);
  /** POSTs a SelfSubjectReview over HTTP/1.1 with a client certificate (and no token). */
  const whoami = (client: { cert: string; key: string }) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = https.request(`${s.kapi.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, { method: 'POST', ca: s.kapi.caCertPem, cert: client.cert, key: client.key, headers: { 'Content-Type': 'application/json' } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
    });
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-x509-'));
    makeCA('users-ca');
    makeCA('rogue-ca');
    s = await startTestServer({ clientCAFile: join(dir, 'users-ca.crt'), anonymousAuth: false });
  });
  after(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('authenticates a certificate of a --client-ca-file CA as its Common Name, in its Organizations', async () => {
    const carol = issue('users-ca', 'carol', ['devs', 'qa']);
    const review = await whoami(carol);
    assert.equal(review.status, 201);
    assert.deepEqual(review.body.status.userInfo, { username: 'carol', groups: ['devs', 'qa', 'system:authenticated'] });
    // kubectl (Go, HTTP/2) with the certificate in its kubeconfig.
    const kubeconfig = join(dir, 'carol.kubeconfig');
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: k, cluster: {server: "${s.kapi.url}", certificate-authority-data: ${b64(s.kapi.caCertPem)}}}]\nusers: [{name: u, user: {client-certificate-data: ${b64(carol.cert)}, client-key-data: ${b64(carol.key)}}}]\ncontexts: [{name: k, context: {cluster: k, user: u}}]\ncurrent-context: k\n`,
    );
    const created = await s.kubectl(['--kubeconfig', kubeconfig, 'create', '-o', 'jsonpath={.status.userInfo.username}', '-f', '-'], { input: 'apiVersion: authentication.k8s.io/v1\nkind: SelfSubjectReview\n' });
    assert.deepEqual([created.code, created.stdout], [0, 'carol'], created.stderr);
    const denied = await s.kubectl(['--kubeconfig', kubeconfig, 'get', 'secrets']);
    assert.match(denied.stderr, /secrets is forbidden: User "carol" cannot list resource "secrets"/);
  });

  it('refuses a certificate no client CA signed, and requests without credentials when anonymous requests are off', async () => {
    const mallory = issue('rogue-ca', 'mallory', ['system:masters']);
    const review = await whoami(mallory);
    assert.deepEqual([review.status, review.body.reason], [401, 'Unauthorized']);
    assert.equal((await s.request('GET', '/healthz', { token: null })).status, 401);
    // The admin's own client certificate, from admin.kubeconfig, is system:masters.
    const config = readFileSync(s.kapi.kubeconfigPath, 'utf8');
    const field = (key: string) => Buffer.from(new RegExp(`${key}: (\\S+)`).exec(config)![1], 'base64').toString('utf8');
    const admin = await whoami({ cert: field('client-certificate-data'), key: field('client-key-data') });
    assert.deepEqual(admin.body.status.userInfo, { username: 'kapi-admin', groups: ['system:masters', 'system:authenticated'] });
  });

  it('serves health and version to anonymous users by default, and nothing else', async () => {
    const open = await startTestServer();
    try {
      for (const path of ['/healthz', '/livez', '/readyz', '/version']) assert.equal((await open.request('GET', path, { token: null })).status, 200, path);
      const api = await open.request('GET', '/api', { token: null });
      assert.deepEqual([api.status, api.json.message], [403, 'forbidden: User "system:anonymous" cannot get path "/api"']);
    } finally {
      await open.stop();
    }
  });
});
