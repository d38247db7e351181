/**
 * ValidatingAdmissionPolicy: CEL validations bound to what they guard, with params from a ConfigMap, the
 * Deny and Warn actions, messageExpression and reasons, as kube-apiserver answers them (kubectl included).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const deployment = (name: string, replicas: number, labels: Record<string, string> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
});

describe('ValidatingAdmissionPolicy', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    const rules = { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }] };
    const made = await Promise.all([
      s.request('POST', `${ADMISSION}/validatingadmissionpolicies`, {
        body: { metadata: { name: 'max-replicas' }, spec: { matchConstraints: rules, validations: [{ expression: 'object.spec.replicas <= 5' }] } },
      }),
      s.request('POST', `${ADMISSION}/validatingadmissionpolicybindings`, {
        body: { metadata: { name: 'max-replicas-binding' }, spec: { policyName: 'max-replicas', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } } } },
      }),
      s.request('POST', `${ADMISSION}/validatingadmissionpolicies`, {
        body: {
          metadata: { name: 'owner-label' },
          spec: {
            paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
            matchConstraints: rules,
            variables: [{ name: 'wanted', expression: 'params.data.label' }],
            validations: [{ expression: 'variables.wanted in object.metadata.labels', messageExpression: "'missing label ' + variables.wanted", reason: 'Forbidden' }],
          },
        },
      }),
      s.request('POST', `${ADMISSION}/validatingadmissionpolicybindings`, {
        body: { metadata: { name: 'owner-label-warn' }, spec: { policyName: 'owner-label', validationActions: ['Warn'], paramRef: { name: 'policy-params', namespace: 'default', parameterNotFoundAction: 'Deny' } } },
      }),
      s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'prod', labels: { env: 'prod' } } } }),
      s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'policy-params' }, data: { label: 'owner' } } }),
    ]);
    for (const r of made) assert.ok(r.status < 300, r.text);
    const bindings = s.kapi.registry.lookup('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicybindings')!.store.cache;
    for (let i = 0; i < 200 && bindings.size < 2; i++) await new Promise((r) => setTimeout(r, 10));
  });
  after(() => s.stop());

  it('denies what a Deny binding\'s validation refuses, as kubectl shows it, in the namespaces it selects', async () => {
    const res = await s.request('POST', '/apis/apps/v1/namespaces/prod/deployments', { body: deployment('big', 10, { owner: 'me' }) });
    assert.equal(res.status, 422);
    assert.equal(res.json.reason, 'Invalid');
    assert.equal(res.json.message, `deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5`);
    const kubectl = await s.kubectl(['apply', '-n', 'prod', '-f', '-'], { input: JSON.stringify(deployment('web', 8, { owner: 'me' })) });
    assert.notEqual(kubectl.code, 0);
    assert.match(kubectl.stderr, /ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object\.spec\.replicas <= 5/);
    assert.equal((await s.request('POST', '/apis/apps/v1/namespaces/prod/deployments', { body: deployment('small', 3, { owner: 'me' }) })).status, 201);
    assert.equal((await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('big', 10, { owner: 'me' }) })).status, 201, 'default is not prod');
  });

  it('warns with a Warn binding, its message from a messageExpression over params and variables', async () => {
    const res = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('unowned', 1, { team: 'a' }) });
    assert.equal(res.status, 201, res.text);
    assert.match(String(res.headers.warning), /Validation failed for ValidatingAdmissionPolicy 'owner-label' with binding 'owner-label-warn': missing label owner/);
    const owned = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('owned', 1, { owner: 'me' }) });
    assert.equal(owned.headers.warning, undefined);
  });

  it('refuses a policy whose expressions do not compile', async () => {
    const bad = await s.request('POST', `${ADMISSION}/validatingadmissionpolicies`, {
      body: { metadata: { name: 'broken' }, spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] }, validations: [{ expression: 'object.spec.(' }] } },
    });
    assert.equal(bad.status, 422);
    assert.match(bad.json.details.causes[0].message, /^Invalid value: "object\.spec\.\(": compilation failed: ERROR: <input>:1:/);
    assert.equal(bad.json.details.causes[0].field, 'spec.validations[0].expression');
  });

  it('judges a write to another version of a resource in the version the policy names (matchPolicy Equivalent)', async () => {
    const rules = { resourceRules: [{ apiGroups: ['autoscaling'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['horizontalpodautoscalers'] }] };
    const made = await Promise.all([
      s.request('POST', `${ADMISSION}/validatingadmissionpolicies`, {
        body: { metadata: { name: 'cpu-target' }, spec: { matchConstraints: rules, validations: [{ expression: 'request.requestKind.version == "v2" && object.spec.targetCPUUtilizationPercentage <= 80', message: 'cpu target too high' }] } },
      }),
      s.request('POST', `${ADMISSION}/validatingadmissionpolicybindings`, { body: { metadata: { name: 'cpu-target' }, spec: { policyName: 'cpu-target', validationActions: ['Deny'] } } }),
    ]);
    for (const r of made) assert.ok(r.status < 300, r.text);
    const hpa = (name: string, averageUtilization: number) => ({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization } } }] },
    });
    let res: Awaited<ReturnType<TestServer['request']>> | undefined;
    for (let i = 0; i < 200; i++) {
      res = await s.request('POST', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers?dryRun=All', { body: hpa('hot', 90) });
      if (res.status !== 201) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(res!.status, 422, res!.text);
    assert.match(res!.json.message, /ValidatingAdmissionPolicy 'cpu-target' with binding 'cpu-target' denied request: cpu target too high/);
    assert.equal((await s.request('POST', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', { body: hpa('cool', 60) })).status, 201, 'seen as v1, with the v2 write\'s kind');
  });

  it('follows parameterNotFoundAction when the params are missing', async () => {
    assert.equal((await s.request('DELETE', '/api/v1/namespaces/default/configmaps/policy-params')).status, 200);
    const binding = (await s.request('GET', `${ADMISSION}/validatingadmissionpolicybindings/owner-label-warn`)).json;
    const denyNow = await s.request('PUT', `${ADMISSION}/validatingadmissionpolicybindings/owner-label-warn`, { body: { ...binding, spec: { ...binding.spec, validationActions: ['Deny'] } } });
    assert.equal(denyNow.status, 200, denyNow.text);
    const cache = s.kapi.registry.lookup('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicybindings')!.store.cache;
    for (let i = 0; i < 200 && cache.get('/registry/admissionregistration.k8s.io/validatingadmissionpolicybindings/owner-label-warn')?.object.spec.validationActions[0] !== 'Deny'; i++) await new Promise((r) => setTimeout(r, 10));
    const res = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('no-params', 1, { owner: 'me' }) });
    assert.equal(res.status, 422);
    assert.match(res.json.message, /ValidatingAdmissionPolicy 'owner-label' with binding 'owner-label-warn' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction/);
  });
});

describe('ValidatingAdmissionPolicy and the audit log', () => {
  it('records an Audit binding\'s failures and the policy\'s auditAnnotations in the request\'s audit event', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kapi-vap-audit-'));
    const log = join(dir, 'audit.log');
    writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
    const s = await startTestServer({ auditPolicyFile: join(dir, 'policy.yaml'), auditLogPath: log });
    try {
      const rules = { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] };
      assert.equal(
        (await s.request('POST', `${ADMISSION}/validatingadmissionpolicies`, {
          body: { metadata: { name: 'audited' }, spec: { matchConstraints: rules, validations: [{ expression: 'object.spec.replicas <= 5', message: 'too many replicas' }], auditAnnotations: [{ key: 'replicas', valueExpression: 'string(object.spec.replicas)' }] } },
        })).status,
        201,
      );
      assert.equal((await s.request('POST', `${ADMISSION}/validatingadmissionpolicybindings`, { body: { metadata: { name: 'audited-binding' }, spec: { policyName: 'audited', validationActions: ['Audit'] } } })).status, 201);
      const cache = s.kapi.registry.lookup('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicybindings')!.store.cache;
      for (let i = 0; i < 200 && cache.size === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const res = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('audited', 7) });
      assert.equal(res.status, 201, 'Audit does not refuse');
      await s.kapi.stop();
      const event = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.auditID === res.headers['audit-id'] && e.stage === 'ResponseComplete');
      assert.equal(event.annotations['audited/replicas'], '7');
      assert.deepEqual(JSON.parse(event.annotations['validation.policy.admission.k8s.io/validation_failure']), [
        { message: 'too many replicas', policy: 'audited', binding: 'audited-binding', expressionIndex: 0, validationActions: ['Audit'] },
      ]);
    } finally {
      await s.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the authorizer variable of admission expressions', () => {
  const ALICE = 'alice-token-authz-0123456789';
  let dir: string;
  let tokens: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-cel-authz-'));
    tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, `${ALICE},alice,uid-alice\n`);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const approvalPolicy = {
    metadata: { name: 'approval' },
    spec: {
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
      validations: [
        {
          expression: "!('approved' in object.metadata.labels) || authorizer.requestResource.check('approve').allowed()",
          messageExpression: "'only approvers may approve: ' + authorizer.requestResource.check('approve').reason()",
        },
        { expression: "authorizer.serviceAccount('default', 'builder').group('').resource('configmaps').namespace('default').check('create').allowed() || !('built' in object.metadata.labels)", message: 'the builder may not build here' },
      ],
    },
  };

  it('asks RBAC what the request\'s user (or a ServiceAccount) may do, and answers as it decides', async () => {
    const s = await startTestServer({ tokenAuthFile: tokens });
    try {
      const ok = (r: { status: number; text: string }) => assert.ok(r.status < 300, r.text);
      ok(await s.request('POST', `${ADMISSION}/validatingadmissionpolicies`, { body: approvalPolicy }));
      ok(await s.request('POST', `${ADMISSION}/validatingadmissionpolicybindings`, { body: { metadata: { name: 'approval' }, spec: { policyName: 'approval', validationActions: ['Deny'] } } }));
      ok(await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { body: { metadata: { name: 'writer' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }] } }));
      ok(await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
        body: { metadata: { name: 'writer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'writer' }, subjects: [{ kind: 'User', name: 'alice' }] },
      }));
      const cm = (name: string, labels: Record<string, string>) => ({ body: { metadata: { name, labels } }, token: ALICE });
      let denied: Awaited<ReturnType<TestServer['request']>> | undefined;
      for (let i = 0; i < 200; i++) {
        denied = await s.request('POST', '/api/v1/namespaces/default/configmaps', cm(`try-${i}`, { approved: 'yes' }));
        if (denied.status !== 201) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(denied!.status, 422, denied!.text);
      assert.match(denied!.json.message, /ValidatingAdmissionPolicy 'approval' with binding 'approval' denied request: only approvers may approve:$/);
      assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', cm('plain', { team: 'a' }))).status, 201);
      // Given the verb, the same user may.
      ok(await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { body: { metadata: { name: 'approver' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['approve'] }] } }));
      ok(await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
        body: { metadata: { name: 'approver' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'approver' }, subjects: [{ kind: 'User', name: 'alice' }] },
      }));
      let approved: Awaited<ReturnType<TestServer['request']>> | undefined;
      for (let i = 0; i < 200; i++) {
        approved = await s.request('POST', '/api/v1/namespaces/default/configmaps', cm(`approved-${i}`, { approved: 'yes' }));
        if (approved.status === 201) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(approved!.status, 201, approved!.text);
      // A ServiceAccount's permissions, asked by name.
      const built = await s.request('POST', '/api/v1/namespaces/default/configmaps', cm('built', { built: 'yes' }));
      assert.equal(built.status, 422);
      assert.match(built.json.message, /the builder may not build here/);
    } finally {
      await s.stop();
    }
  });

  it('waits for an authorizer that answers later, and checks paths too', async () => {
    let asked = 0;
    const s = await startTestServer({
      authorizer: {
        authorize: async (a) => {
          if (!a.resourceRequest && a.path === '/approve') {
            asked++;
            await new Promise((r) => setTimeout(r, 5));
            return { decision: a.user?.groups.includes('system:masters') ? 'no-opinion' : 'allow', reason: 'decided later' };
          }
          return { decision: 'allow' };
        },
      },
    });
    try {
      const policy = {
        metadata: { name: 'path' },
        spec: {
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['secrets'] }] },
          validations: [{ expression: "authorizer.path('/approve').check('get').allowed()", messageExpression: "authorizer.path('/approve').check('get').reason()" }],
        },
      };
      assert.equal((await s.request('POST', `${ADMISSION}/validatingadmissionpolicies`, { body: policy })).status, 201);
      assert.equal((await s.request('POST', `${ADMISSION}/validatingadmissionpolicybindings`, { body: { metadata: { name: 'path' }, spec: { policyName: 'path', validationActions: ['Deny'] } } })).status, 201);
      let res: Awaited<ReturnType<TestServer['request']>> | undefined;
      for (let i = 0; i < 200; i++) {
        res = await s.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: `s-${i}` } } });
        if (res.status !== 201) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(res!.status, 422, res!.text);
      assert.match(res!.json.message, /denied request: decided later$/);
      assert.ok(asked >= 1);
    } finally {
      await s.stop();
    }
  });
});

describe('ValidatingAdmissionPolicy type checking', () => {
  it('writes what does not check against the matched kinds\' schemas into status.typeChecking, as upstream', async () => {
    const s = await startTestServer();
    try {
      const policy = {
        metadata: { name: 'typos' },
        spec: {
          matchConstraints: {
            resourceRules: [
              { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments', 'deployments/scale'] },
              { apiGroups: ['*'], apiVersions: ['*'], operations: ['CREATE'], resources: ['pods'] },
            ],
          },
          validations: [
            { expression: 'object.spec.replicass > 1' },
            { expression: 'object.spec.replicas == "3"', messageExpression: "'replicas: ' + string(object.spec.replicas)" },
            { expression: 'object.metadata.name.startsWith("x")' },
          ],
        },
      };
      assert.equal((await s.request('POST', `${ADMISSION}/validatingadmissionpolicies`, { body: policy })).status, 201);
      let status: any;
      for (let i = 0; i < 200; i++) {
        status = (await s.request('GET', `${ADMISSION}/validatingadmissionpolicies/typos`)).json.status;
        if (status?.observedGeneration === 1) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(status?.observedGeneration, 1, JSON.stringify(status));
      assert.deepEqual(status.typeChecking.expressionWarnings, [
        { fieldRef: 'spec.validations[0].expression', warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^\n" },
        {
          fieldRef: 'spec.validations[1].expression',
          warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_==_' applied to '(int, string)'\n | object.spec.replicas == \"3\"\n | .....................^\n",
        },
      ]);
      // Fixed, the warnings go away with the next generation.
      const current = (await s.request('GET', `${ADMISSION}/validatingadmissionpolicies/typos`)).json;
      current.spec.validations = [{ expression: 'object.spec.replicas > 1' }];
      assert.equal((await s.request('PUT', `${ADMISSION}/validatingadmissionpolicies/typos`, { body: current })).status, 200);
      for (let i = 0; i < 200; i++) {
        status = (await s.request('GET', `${ADMISSION}/validatingadmissionpolicies/typos`)).json.status;
        if (status?.observedGeneration === 2) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.deepEqual(status, { observedGeneration: 2, typeChecking: {} });
    } finally {
      await s.stop();
    }
  });
});
