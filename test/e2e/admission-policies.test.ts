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
    const res = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('unowned', 1) });
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
