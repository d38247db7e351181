/**
 * MutatingAdmissionPolicy: CEL mutations (apply configurations and JSON patches) bound to what they change,
 * with params, failure policies and reinvocation, as kube-apiserver applies them (kubectl included).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
// minReadySeconds: a field nothing defaults (replicas is defaulted as the request is decoded, before admission).
const deployment = (name: string, minReadySeconds?: number, labels: Record<string, string> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels },
  spec: {
    ...(minReadySeconds !== undefined ? { minReadySeconds } : {}),
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});
const rules = (group: string, resource: string) => ({ resourceRules: [{ apiGroups: [group], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: [resource] }] });

async function waitForBindings(s: TestServer, n: number): Promise<void> {
  const bindings = s.kapi.registry.lookup('admissionregistration.k8s.io', 'v1', 'mutatingadmissionpolicybindings')!.store.cache;
  for (let i = 0; i < 200 && bindings.size < n; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(bindings.size, n);
}

async function create(s: TestServer, path: string, body: unknown): Promise<void> {
  const r = await s.request('POST', path, { body });
  assert.ok(r.status < 300, r.text);
}

/** A namespaced CRD `gadgets.<group>` with one version, v1, of this spec schema. */
function gadgetCrd(group: string, spec: Record<string, unknown>) {
  return {
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'gadgets', kind: 'Gadget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  };
}

describe('MutatingAdmissionPolicy', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    const policy = (name: string, spec: Record<string, unknown>) => create(s, `${ADMISSION}/mutatingadmissionpolicies`, { metadata: { name }, spec: { reinvocationPolicy: 'Never', ...spec } });
    const binding = (name: string, spec: Record<string, unknown>) => create(s, `${ADMISSION}/mutatingadmissionpolicybindings`, { metadata: { name }, spec: { policyName: name, ...spec } });
    await create(s, '/api/v1/namespaces/default/configmaps', { metadata: { name: 'defaults' }, data: { minReadySeconds: '2', team: 'blue' } });
    await create(s, '/api/v1/namespaces', { metadata: { name: 'strict' } });
    await policy('deployment-defaults', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: rules('apps', 'deployments'),
      matchConditions: [{ name: 'not-opted-out', expression: "!has(object.metadata.labels) || !('skip' in object.metadata.labels)" }],
      variables: [{ name: 'team', expression: 'params.data.team' }],
      mutations: [
        {
          patchType: 'ApplyConfiguration',
          applyConfiguration: {
            expression: `Object{
              metadata: Object.metadata{labels: {"team": variables.team}},
              spec: Object.spec{minReadySeconds: has(object.spec.minReadySeconds) ? object.spec.minReadySeconds : int(params.data.minReadySeconds)}
            }`,
          },
        },
        // A second mutation sees what the first did.
        { patchType: 'JSONPatch', jsonPatch: { expression: '[JSONPatch{op: "add", path: "/metadata/annotations", value: {"team-was": object.metadata.labels["team"]}}]' } },
      ],
    });
    await binding('deployment-defaults', { paramRef: { name: 'defaults', namespace: 'default', parameterNotFoundAction: 'Deny' } });
    await policy('escaped-keys', {
      matchConstraints: rules('', 'configmaps'),
      mutations: [
        {
          patchType: 'JSONPatch',
          jsonPatch: {
            expression: `has(object.data) && "fill" in object.data ? [
              JSONPatch{op: "test", path: "/data/fill", value: "yes"},
              JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("example.com/size"), value: string(size(object.data))}
            ] : []`,
          },
        },
      ],
    });
    await binding('escaped-keys', {});
    await policy('atomic-args', {
      failurePolicy: 'Fail',
      matchConstraints: { ...rules('apps', 'deployments'), namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'strict' } } },
      mutations: [
        {
          patchType: 'ApplyConfiguration',
          applyConfiguration: {
            expression: `Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{
              containers: [Object.spec.template.spec.containers{name: "c", args: ["--debug"]}]}}}}`,
          },
        },
      ],
    });
    await binding('atomic-args', {});
    await waitForBindings(s, 3);
  });
  after(() => s.stop());

  it('applies an apply configuration and then a JSON patch, with params and variables, as kubectl sees the result', async () => {
    const made = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('web') });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.json.spec.minReadySeconds, 2, 'from the params');
    assert.deepEqual(made.json.metadata.labels, { team: 'blue' });
    assert.deepEqual(made.json.metadata.annotations, { 'team-was': 'blue' });
    // The merge keeps what the object has: its own minReadySeconds, its other labels.
    const kept = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('kept', 7, { tier: 'web' }) });
    assert.equal(kept.json.spec.minReadySeconds, 7);
    assert.deepEqual(kept.json.metadata.labels, { team: 'blue', tier: 'web' });
    const skipped = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('skipped', 1, { skip: 'y' }) });
    assert.deepEqual(skipped.json.metadata.labels, { skip: 'y' }, 'matchConditions decide');
    const kubectl = await s.kubectl(['apply', '-f', '-'], { input: JSON.stringify(deployment('applied')) });
    assert.equal(kubectl.code, 0, kubectl.stderr);
    const got = await s.kubectl(['get', 'deployment', 'applied', '-o', 'jsonpath={.spec.minReadySeconds} {.metadata.labels.team}']);
    assert.equal(got.stdout, '2 blue');
  });

  it('applies JSON patches with escaped keys, and a failed test leaves the object as it was', async () => {
    const filled = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'filled', annotations: { a: 'b' } }, data: { fill: 'yes' } } });
    assert.equal(filled.status, 201, filled.text);
    assert.deepEqual(filled.json.metadata.annotations, { a: 'b', 'example.com/size': '1' });
    const untouched = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'untouched', annotations: { a: 'b' } }, data: { fill: 'no' } } });
    assert.equal(untouched.status, 201);
    assert.deepEqual(untouched.json.metadata.annotations, { a: 'b' });
  });

  it('refuses an apply configuration that sets an atomic list, in upstream\'s words, unless failurePolicy is Ignore', async () => {
    const res = await s.request('POST', '/apis/apps/v1/namespaces/strict/deployments', { body: deployment('strict', 1) });
    assert.equal(res.status, 403, res.text);
    assert.equal(res.json.reason, 'Invalid');
    const message =
      "policy 'atomic-args' with binding 'atomic-args' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.template.spec.containers[0].args";
    assert.equal(res.json.message, message);
    assert.deepEqual(res.json.details, { name: 'strict', group: 'apps', kind: 'deployments', causes: [{ message }] });
    const kubectl = await s.kubectl(['create', '-n', 'strict', '-f', '-'], { input: JSON.stringify(deployment('strict2', 1)) });
    assert.notEqual(kubectl.code, 0);
    assert.match(kubectl.stderr, /policy 'atomic-args' with binding 'atomic-args' denied request: error applying patch/);
    const p = await s.request('GET', `${ADMISSION}/mutatingadmissionpolicies/atomic-args`);
    p.json.spec.failurePolicy = 'Ignore';
    assert.equal((await s.request('PUT', `${ADMISSION}/mutatingadmissionpolicies/atomic-args`, { body: p.json })).status, 200);
    for (let i = 0; i < 100; i++) {
      const r = await s.request('POST', '/apis/apps/v1/namespaces/strict/deployments?dryRun=All', { body: deployment(`strict-${i}`, 1) });
      if (r.status === 201) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.fail('an Ignore policy still refuses');
  });

  it('refuses a binding whose params are missing, and constructed types that are not their field path', async () => {
    await create(s, `${ADMISSION}/mutatingadmissionpolicies`, {
      metadata: { name: 'misnamed' },
      spec: {
        reinvocationPolicy: 'Never',
        matchConstraints: rules('', 'secrets'),
        mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.spec{labels: {"a": "b"}}}' } }],
      },
    });
    await create(s, `${ADMISSION}/mutatingadmissionpolicybindings`, { metadata: { name: 'misnamed' }, spec: { policyName: 'misnamed' } });
    await waitForBindings(s, 4);
    const res = await s.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 's' } } });
    assert.equal(res.status, 403);
    assert.equal(
      res.json.message,
      `policy 'misnamed' with binding 'misnamed' denied request: type mismatch: unexpected type name "Object.spec", expected "Object.metadata", which matches field name path from root Object type`,
    );
    const cm = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/defaults');
    assert.equal(cm.status, 200);
    const missing = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('orphan') });
    assert.equal(missing.status, 403);
    assert.equal(missing.json.reason, 'Forbidden');
    assert.equal(missing.json.message, "policy 'deployment-defaults' with binding 'deployment-defaults' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction");
  });

  it('validates policies as upstream: mutations required, one patch type each, expressions that compile', async () => {
    const bad = await s.request('POST', `${ADMISSION}/mutatingadmissionpolicies`, {
      body: {
        metadata: { name: 'bad' },
        spec: {
          reinvocationPolicy: 'Sometimes',
          matchConstraints: rules('', 'pods'),
          mutations: [
            { patchType: 'JSONPatch', applyConfiguration: { expression: 'Object{}' } },
            { patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{spec: (' } },
            { patchType: 'Merge' },
          ],
        },
      },
    });
    assert.equal(bad.status, 422);
    const causes = bad.json.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message.split('\n')[0]}`);
    assert.deepEqual(causes.filter((c: string) => !c.includes('compilation failed')), [
      'spec.reinvocationPolicy: Unsupported value: "Sometimes": supported values: "IfNeeded", "Never"',
      'spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch',
      'spec.mutations[0].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch',
      'spec.mutations[2].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"',
    ]);
    assert.match(causes[3], /^spec\.mutations\[1\]\.applyConfiguration\.expression: Invalid value: "Object\{spec: \(": compilation failed: ERROR: <input>:1:/);
    const none = await s.request('POST', `${ADMISSION}/mutatingadmissionpolicies`, { body: { metadata: { name: 'none' }, spec: { reinvocationPolicy: 'Never', matchConstraints: rules('', 'pods') } } });
    assert.equal(none.status, 422);
    assert.match(none.json.message, /spec\.mutations: Required value: mutations must contain at least one item/);
  });
});

describe('MutatingAdmissionPolicy on custom resources', () => {
  it('merges an apply configuration by the CRD\'s schema: an associative list item by its key', async () => {
    const s = await startTestServer();
    try {
      const GROUP = 'map.example.com';
      await create(
        s,
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        gadgetCrd(GROUP, {
          type: 'object',
          properties: {
            ports: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['name'],
              items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' }, protocol: { type: 'string' } } },
            },
          },
        }),
      );
      await create(s, `${ADMISSION}/mutatingadmissionpolicies`, {
        metadata: { name: 'tcp' },
        spec: {
          reinvocationPolicy: 'Never',
          matchConstraints: rules(GROUP, 'gadgets'),
          mutations: [
            {
              patchType: 'ApplyConfiguration',
              applyConfiguration: { expression: 'Object{spec: Object.spec{ports: [Object.spec.ports{name: "http", protocol: "TCP"}]}}' },
            },
          ],
        },
      });
      await create(s, `${ADMISSION}/mutatingadmissionpolicybindings`, { metadata: { name: 'tcp' }, spec: { policyName: 'tcp' } });
      await waitForBindings(s, 1);
      let made;
      for (let i = 0; i < 200; i++) {
        made = await s.request('POST', `/apis/${GROUP}/v1/namespaces/default/gadgets`, {
          body: { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'g' }, spec: { ports: [{ name: 'metrics', port: 9090 }, { name: 'http', port: 80 }] } },
        });
        if (made.status !== 404) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(made!.status, 201, made!.text);
      assert.deepEqual(made!.json.spec.ports, [{ name: 'metrics', port: 9090 }, { name: 'http', port: 80, protocol: 'TCP' }]);
    } finally {
      await s.stop();
    }
  });
});

describe('MutatingAdmissionPolicy and the decoded custom resource', () => {
  it('sees a custom resource pruned and defaulted, as decoded, and each mutation defaulted again', async () => {
    const s = await startTestServer();
    try {
      const GROUP = 'order.example.com';
      const gadgets = `/apis/${GROUP}/v1/namespaces/default/gadgets`;
      await create(s, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', gadgetCrd(GROUP, { type: 'object', properties: { size: { type: 'integer', default: 5 }, color: { type: 'string' } } }));
      const policy = (name: string, matchConditions: unknown[], mutation: Record<string, unknown>) =>
        create(s, `${ADMISSION}/mutatingadmissionpolicies`, { metadata: { name }, spec: { reinvocationPolicy: 'Never', matchConstraints: rules(GROUP, 'gadgets'), matchConditions, mutations: [mutation] } });
      // The first takes spec.size away from objects labelled drop; the second copies spec.size into a label.
      await policy('a-drop-size', [{ name: 'drop', expression: "has(object.metadata.labels) && 'drop' in object.metadata.labels" }], {
        patchType: 'JSONPatch',
        jsonPatch: { expression: '[JSONPatch{op: "remove", path: "/spec/size"}]' },
      });
      await policy('b-copy-size', [], {
        patchType: 'ApplyConfiguration',
        applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"size": string(object.spec.size), "extra": ("extra" in object.spec) ? "seen" : "pruned"}}}' },
      });
      for (const name of ['a-drop-size', 'b-copy-size']) await create(s, `${ADMISSION}/mutatingadmissionpolicybindings`, { metadata: { name }, spec: { policyName: name } });
      await waitForBindings(s, 2);
      let made;
      for (let i = 0; i < 200; i++) {
        made = await s.request('POST', gadgets, { body: { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'plain' }, spec: { color: 'red', extra: 'x' } } });
        if (made.status !== 404) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      // The policy saw the default (5) and not the unknown field, which decoding pruned (with a warning).
      assert.equal(made!.status, 201, made!.text);
      assert.deepEqual(made!.json.metadata.labels, { size: '5', extra: 'pruned' });
      assert.deepEqual(made!.json.spec, { color: 'red', size: 5 });
      assert.match(String(made!.headers.warning), /unknown field \\"spec\.extra\\"/);
      // A mutation that drops a defaulted field: the field is defaulted again before the next policy sees it.
      const dropped = await s.request('POST', gadgets, { body: { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'dropped', labels: { drop: 'yes' } }, spec: { size: 7 } } });
      assert.equal(dropped.status, 201, dropped.text);
      assert.deepEqual(dropped.json.metadata.labels, { drop: 'yes', size: '5', extra: 'pruned' });
      assert.equal(dropped.json.spec.size, 5);
      // An update is decoded likewise: the policy sees the default the PUT body left out.
      const put = await s.request('PUT', `${gadgets}/plain`, { body: { ...made!.json, metadata: { ...made!.json.metadata, labels: {} }, spec: { color: 'blue' } } });
      assert.equal(put.status, 200, put.text);
      assert.deepEqual(put.json.metadata.labels, { size: '5', extra: 'pruned' });
      // Strict decoding refuses the unknown field before any policy runs.
      const strict = await s.request('POST', `${gadgets}?fieldValidation=Strict`, { body: { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'strict' }, spec: { extra: 'x' } } });
      assert.equal(strict.status, 400, strict.text);
      assert.match(strict.json.message, /strict decoding error: unknown field "spec.extra"/);
    } finally {
      await s.stop();
    }
  });
});

describe('MutatingAdmissionPolicy reinvocation', () => {
  it('applies an IfNeeded policy again when a webhook changed the object after it, and a Never one not', async () => {
    const s = await startTestServer({
      admissionHooks: [
        {
          name: 'annotate.example.com',
          type: 'Mutating',
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          review: () => ({ allowed: true, patch: [{ op: 'add', path: '/metadata/annotations', value: { hook: 'yes' } }] }),
        },
      ],
    });
    try {
      for (const [name, reinvocationPolicy] of [['again', 'IfNeeded'], ['once', 'Never']]) {
        await create(s, `${ADMISSION}/mutatingadmissionpolicies`, {
          metadata: { name },
          spec: {
            reinvocationPolicy,
            matchConstraints: rules('', 'configmaps'),
            mutations: [
              {
                patchType: 'ApplyConfiguration',
                applyConfiguration: {
                  expression: `Object{metadata: Object.metadata{labels: {"${name}": has(object.metadata.annotations) && "hook" in object.metadata.annotations ? "saw-hook" : "no-hook"}}}`,
                },
              },
            ],
          },
        });
        await create(s, `${ADMISSION}/mutatingadmissionpolicybindings`, { metadata: { name }, spec: { policyName: name } });
      }
      await waitForBindings(s, 2);
      const made = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'cm' } } });
      assert.equal(made.status, 201, made.text);
      assert.deepEqual(made.json.metadata.labels, { again: 'saw-hook', once: 'no-hook' });
      assert.deepEqual(made.json.metadata.annotations, { hook: 'yes' });
    } finally {
      await s.stop();
    }
  });
});

describe("MutatingAdmissionPolicy: reinvocation, comments, optional fields, forged patches", () => {
  it('reinvokes an IfNeeded policy that a later policy changed the object after, reads comments and optional fields, and refuses a map posing as a JSONPatch', async () => {
    const s = await startTestServer();
    try {
      const policy = (name: string, reinvocationPolicy: string, mutations: unknown[]) =>
        create(s, `${ADMISSION}/mutatingadmissionpolicies`, { metadata: { name }, spec: { reinvocationPolicy, matchConstraints: rules('', 'configmaps'), mutations } });
      // Bindings are visited in name order: a-copy runs before b-set changes what it copies.
      await policy('a-copy', 'IfNeeded', [
        {
          patchType: 'ApplyConfiguration',
          applyConfiguration: {
            expression: `Object{
              // copy b to a, once there is a b
              metadata: Object.metadata{
                ?labels: has(object.metadata.labels) && "b" in object.metadata.labels ? optional.of({"a": object.metadata.labels["b"]}) : optional.none()
              }
            }`,
          },
        },
      ]);
      await policy('b-set', 'Never', [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"b": "x"}}}' } }]);
      await policy('z-forged', 'Never', [
        { patchType: 'JSONPatch', jsonPatch: { expression: 'has(object.data) ? [{"op": "add", "path": "/data/forged", "value": "yes"}] : []' } },
      ]);
      for (const name of ['a-copy', 'b-set', 'z-forged']) await create(s, `${ADMISSION}/mutatingadmissionpolicybindings`, { metadata: { name }, spec: { policyName: name } });
      await waitForBindings(s, 3);
      const made = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'cm' } } });
      assert.equal(made.status, 201, made.text);
      assert.deepEqual(made.json.metadata.labels, { a: 'x', b: 'x' });
      const forged = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'forged' }, data: { k: 'v' } } });
      assert.equal(forged.status, 403);
      assert.equal(forged.json.message, "policy 'z-forged' with binding 'z-forged' denied request: type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch");
      // A construction nested past reason, or never closed, is refused quickly when the policy is written.
      let nested = '1';
      for (let k = 0; k < 40; k++) nested = `O{a: ${nested}, 1}`;
      const started = Date.now();
      const bad = await s.request('POST', `${ADMISSION}/mutatingadmissionpolicies`, {
        body: { metadata: { name: 'nested' }, spec: { reinvocationPolicy: 'Never', matchConstraints: rules('', 'configmaps'), mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: nested } }] } },
      });
      assert.equal(bad.status, 422);
      assert.ok(Date.now() - started < 2000);
    } finally {
      await s.stop();
    }
  });
});
