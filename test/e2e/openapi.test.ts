/** Published schemas: /openapi/v2 (JSON, protobuf, ETag) and /openapi/v3 follow CRDs, and kubectl explain uses them. */
import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'crontabs.stable.example.com' },
  spec: {
    group: 'stable.example.com',
    scope: 'Namespaced',
    names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            description: 'Foo CRD for Testing',
            properties: {
              spec: {
                type: 'object',
                description: 'Specification of CronTab',
                properties: { cronSpec: { type: 'string', description: 'The cron schedule' }, replicas: { type: 'integer' } },
                required: ['cronSpec'],
              },
            },
          },
        },
      },
    ],
  },
};

describe('published schemas', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRD })).status, 201);
  });
  after(() => s.stop());

  it('makes a cold document in steps, with turns of the event loop for other requests between them', async () => {
    // The server shares this process's event loop: count its turns while each cold form is made (a few hundred
    // milliseconds of work for the built-ins, which held every other request when made in one go).
    for (const [path, accept] of [
      ['/openapi/v2', 'application/json'],
      ['/openapi/v2', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf'],
      // (The v3 index makes no document: its hashes come from what the documents are made of.)
      ['/openapi/v3/api/v1', 'application/json'],
    ]) {
      let turns = 0;
      let counting = true;
      const count = () => {
        turns++;
        if (counting) setImmediate(count);
      };
      setImmediate(count);
      const res = await s.request('GET', path, { accept });
      counting = false;
      assert.equal(res.status, 200);
      assert.ok(turns > 50, `${path} (${accept}): ${turns} turns of the loop while it was made`);
    }
  });

  it('publishes the CRD in /openapi/v2 with an ETag, and answers 304 when unchanged', async () => {
    const res = await s.request('GET', '/openapi/v2');
    assert.equal(res.status, 200);
    const def = res.json.definitions['com.example.stable.v1.CronTab'];
    assert.ok(def, 'definition named by the reversed group');
    assert.deepEqual(def['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
    assert.equal(def.properties.spec.properties.cronSpec.description, 'The cron schedule');
    assert.ok(res.json.definitions['com.example.stable.v1.CronTabList']);
    const etag = res.headers.etag as string;
    assert.ok(etag);
    const cached = await new Promise<number>((resolve, reject) => {
      const req = https.get(new URL('/openapi/v2', s.kapi.url), { ca: s.kapi.caCertPem, headers: { Authorization: `Bearer ${s.kapi.adminToken}`, 'If-None-Match': etag } }, (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
      });
      req.on('error', reject);
    });
    assert.equal(cached, 304);
  });

  it('publishes /openapi/v3 per group-version', async () => {
    const disc = await s.request('GET', '/openapi/v3');
    assert.ok(disc.json.paths['apis/stable.example.com/v1']);
    const doc = await s.request('GET', '/openapi/v3/apis/stable.example.com/v1');
    assert.equal(doc.status, 200);
    assert.ok(doc.json.components.schemas['com.example.stable.v1.CronTab']);
  });

  it('publishes complete apiextensions.k8s.io definitions, so kubectl 1.20 accepts current v1 and documented v1beta1 CRDs', async () => {
    const v1 = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: shirts.clothes.example.com
spec:
  group: clothes.example.com
  scope: Namespaced
  names: {plural: shirts, singular: shirt, kind: Shirt}
  versions:
  - name: v1
    served: true
    storage: true
    selectableFields:
    - jsonPath: .spec.color
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.color != 'red'"
              messageExpression: "'no red: ' + self.color"
              reason: FieldValueForbidden
              fieldPath: .color
            properties:
              color: {type: string}
`;
    const applied = await s.kubectl(['apply', '-f', '-'], { input: v1 });
    assert.equal(applied.code, 0, applied.stderr);
    const v1beta1 = `apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: jobs.legacy.example.com
spec:
  group: legacy.example.com
  version: v1
  scope: Namespaced
  names: {plural: jobs, singular: job, kind: Job}
  additionalPrinterColumns:
  - {name: Spec, type: string, JSONPath: .spec.cronSpec}
  validation:
    openAPIV3Schema:
      properties:
        spec:
          properties:
            cronSpec: {type: string}
`;
    const legacy = await s.kubectl(['apply', '-f', '-'], { input: v1beta1 });
    assert.equal(legacy.code, 0, legacy.stderr);
    const defs = (await s.request('GET', '/openapi/v2')).json.definitions;
    const rule = defs['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ValidationRule'];
    assert.deepEqual(Object.keys(rule.properties).sort(), ['fieldPath', 'message', 'messageExpression', 'optionalOldSelf', 'reason', 'rule']);
    assert.ok(defs['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceDefinitionSpec'].properties.validation);
  });

  it('declares the fieldValidation query parameter on writes, so kubectl validates on the server', async () => {
    const v3 = (await s.request('GET', '/openapi/v3/apis/stable.example.com/v1')).json;
    const item = v3.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'];
    const collection = v3.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs'];
    const names = (op: any) => (op.parameters ?? []).map((p: any) => p.name ?? p.$ref);
    for (const op of [collection.post, item.put, item.patch]) assert.ok(names(op).includes('fieldValidation'), JSON.stringify(names(op)));
    assert.ok(!names(item.get).includes('fieldValidation'));
    const v2 = (await s.request('GET', '/openapi/v2')).json;
    const v2item = v2.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'];
    assert.ok(names(v2item.patch).includes('fieldValidation'));
    const core = (await s.request('GET', '/openapi/v3/api/v1')).json;
    assert.ok(names(core.paths['/api/v1/namespaces/{namespace}/configmaps'].post).includes('fieldValidation'));
  });

  it('lets kubectl explain the custom resource and validate against it', async () => {
    const explain = await s.kubectl(['explain', 'crontab.spec']);
    assert.equal(explain.code, 0, explain.stderr);
    assert.match(explain.stdout, /Specification of CronTab/);
    assert.match(explain.stdout, /cronSpec\s+<string> -required-/);
    const bad = `apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: x\nspec:\n  cronSpec: "* * * * *"\n  foo: bar\n`;
    const created = await s.kubectl(['create', '-f', '-'], { input: bad });
    assert.notEqual(created.code, 0);
    assert.match(created.stderr, /unknown field "foo"/);
  });

  it('describes every served built-in kind from its Go type, field by field, in v2 and v3', async () => {
    const v2 = (await s.request('GET', '/openapi/v2')).json;
    const kinds = new Map<string, any>();
    for (const def of Object.values<any>(v2.definitions)) for (const g of def['x-kubernetes-group-version-kind'] ?? []) kinds.set(`${g.group}/${g.version}/${g.kind}`, def);
    const crdGroups = new Set((await s.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions')).json.items.map((c: any) => c.spec.group));
    const groups = [{ name: '', versions: [{ groupVersion: 'v1' }] }, ...(await s.request('GET', '/apis')).json.groups.filter((g: any) => !crdGroups.has(g.name))];
    let checked = 0;
    for (const g of groups) {
      for (const { groupVersion } of g.versions) {
        const list = (await s.request('GET', g.name ? `/apis/${groupVersion}` : '/api/v1')).json;
        for (const r of list.resources) {
          if (r.name.includes('/') || !r.verbs.includes('get')) continue;
          const [group, version] = g.name ? groupVersion.split('/') : ['', 'v1'];
          const def = kinds.get(`${group}/${version}/${r.kind}`);
          assert.ok(def?.description && def.properties?.metadata, `${groupVersion} ${r.kind}: ${JSON.stringify(def)?.slice(0, 200)}`);
          checked++;
        }
      }
    }
    assert.ok(checked > 40, `${checked} kinds`);
    // Every reference resolves.
    const refs = JSON.stringify(v2.definitions).match(/"\$ref":"#\/definitions\/[^"]+"/g) ?? [];
    for (const r of new Set(refs)) assert.ok(v2.definitions[r.slice('"$ref":"#/definitions/'.length, -1)], r);
    const spec = v2.definitions['io.k8s.api.apps.v1.DeploymentSpec'];
    assert.deepEqual(spec.required, ['selector', 'template']);
    assert.deepEqual(spec.properties.template, { $ref: '#/definitions/io.k8s.api.core.v1.PodTemplateSpec', description: spec.properties.template.description });
    const containers = v2.definitions['io.k8s.api.core.v1.PodSpec'].properties.containers;
    assert.equal(containers['x-kubernetes-patch-merge-key'], 'name');
    assert.equal(containers['x-kubernetes-list-type'], 'map');
    // v3: refs with siblings wrapped in allOf, and the zero defaults of non-pointer structs and required scalars.
    const apps = (await s.request('GET', '/openapi/v3/apis/apps/v1')).json.components.schemas;
    assert.deepEqual(apps['io.k8s.api.apps.v1.DeploymentSpec'].properties.template.default, {});
    assert.deepEqual(apps['io.k8s.api.apps.v1.DeploymentSpec'].properties.template.allOf, [{ $ref: '#/components/schemas/io.k8s.api.core.v1.PodTemplateSpec' }]);
    assert.equal(apps['io.k8s.api.apps.v1.ReplicaSetStatus'].properties.replicas.default, 0);
    assert.ok(apps['io.k8s.api.core.v1.Container'].properties.ports);
  });

  it('lets kubectl explain nested fields of built-ins and apply them without schema warnings', async () => {
    const ports = await s.kubectl(['explain', 'deployment.spec.template.spec.containers.ports']);
    assert.equal(ports.code, 0, ports.stderr);
    assert.match(ports.stdout, /containerPort\s+<integer> -required-/);
    const items = await s.kubectl(['explain', 'cronjob.spec.jobTemplate.spec.template.spec.volumes.configMap.items']);
    assert.equal(items.code, 0, items.stderr);
    assert.match(items.stdout, /key\s+<string> -required-\n\s+key is the key to project/);
    const deployment = (image: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - {name: a, image: "${image}", ports: [{containerPort: 80}]}\n      - {name: b, image: busybox}\n`;
    for (const image of ['nginx:1', 'nginx:2']) {
      const applied = await s.kubectl(['apply', '-f', '-'], { input: deployment(image) });
      assert.equal(applied.code, 0, applied.stderr);
      assert.equal(applied.stderr, '', 'no "error calculating patch from openapi" warning');
    }
    const got = (await s.request('GET', '/apis/apps/v1/namespaces/default/deployments/web')).json;
    assert.deepEqual(got.spec.template.spec.containers.map((c: any) => `${c.name}=${c.image}`), ['a=nginx:2', 'b=busybox']);
  });

  it('drops a deleted CRD from the documents', async () => {
    await s.request('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com');
    const res = await s.request('GET', '/openapi/v2');
    assert.equal(res.json.definitions['com.example.stable.v1.CronTab'], undefined);
  });
});
