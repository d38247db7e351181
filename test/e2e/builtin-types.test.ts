/**
 * Built-in kinds decoded as kube-apiserver's typed decoder reads them (#26): a value of the wrong JSON
 * type is encoding/json's error in transformDecodeError's form; undeclared fields are dropped with a
 * warning, refused with fieldValidation=Strict and dropped silently with Ignore.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';
const CMS = '/api/v1/namespaces/default/configmaps';
const deployment = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }] } },
    ...spec,
  },
});

describe('typed decoding of built-in kinds', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('refuses values of the wrong type with the decoder\'s message', async () => {
    const cases: [string, unknown, string][] = [
      [DEPLOY, deployment('d1', { replicas: 'three' }), 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32'],
      [DEPLOY, deployment('d2', { replicas: 1.5 }), 'json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32'],
      [DEPLOY, { ...deployment('d3'), spec: { ...deployment('d3').spec, template: { spec: { containers: [{ name: 'c', image: 5 }] } } } }, 'json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string'],
      [DEPLOY, { ...deployment('d4'), spec: { ...deployment('d4').spec, template: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 80, protocol: 6 }] }] } } } }, 'json: cannot unmarshal number into Go struct field ContainerPort.spec.template.spec.containers.ports.protocol of type v1.Protocol'],
      [DEPLOY, { ...deployment('d5'), spec: { ...deployment('d5').spec, template: { spec: { containers: 'c' } } } }, 'json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container'],
      [CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { a: 1 } }, 'json: cannot unmarshal number into Go struct field ConfigMap.data of type string'],
      [CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c2' }, immutable: 'yes' }, 'json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool'],
    ];
    for (const [path, body, why] of cases) {
      const res = await s.request('POST', path, { body });
      const kind = path === DEPLOY ? 'Deployment' : 'ConfigMap';
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json.message, `${kind} in version "v1" cannot be handled as a ${kind}: ${why}`);
    }
    const quantity = await s.request('POST', '/api/v1/namespaces/default/pods', {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x', resources: { limits: { cpu: 'lots' } } }] } },
    });
    assert.equal(quantity.status, 400);
    assert.equal(quantity.json.message, "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  });

  // json.Serializer: an unregistered kind is UseOrCreateObject's error; a registered one decodes, then the
  // versioning codec cannot convert it into the endpoint's internal type.
  it('refuses a body of another kind or version with the typed decoder\'s messages', async () => {
    const scheme = 'in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"';
    const cases: [Record<string, unknown>, string][] = [
      [{ apiVersion: 'v1', kind: 'Secret' }, 'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion'],
      [{ apiVersion: 'apps/v1', kind: 'Deployment' }, 'Deployment in version "v1" cannot be handled as a ConfigMap: converting (v1.Deployment) to (core.ConfigMap): unknown conversion'],
      [{ apiVersion: 'v1', kind: 'configmap' }, `configmap in version "v1" cannot be handled as a ConfigMap: no kind "configmap" is registered for version "v1" ${scheme}`],
      [{ apiVersion: 'v2', kind: 'ConfigMap' }, `ConfigMap in version "v2" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "v2" ${scheme}`],
    ];
    for (const [typeMeta, message] of cases) {
      const res = await s.request('POST', CMS, { body: { ...typeMeta, metadata: { name: 'other' } } });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json.message, message);
    }
  });

  it('drops undeclared fields with a warning, refuses them when Strict, ignores them when Ignore', async () => {
    const typo = deployment('typo', { replicas: 1, replica: 2, template: { metadata: { labels: { app: 'typo' } }, spec: { containers: [{ name: 'c', image: 'nginx', imagee: 'x' }] } } });
    const warned = await s.request('POST', DEPLOY, { body: typo });
    assert.equal(warned.status, 201, warned.text);
    // In document order (template comes first in this body).
    assert.equal(warned.headers.warning, '299 - "unknown field \\"spec.template.spec.containers[0].imagee\\"", 299 - "unknown field \\"spec.replica\\""');
    assert.equal(warned.json.spec.replica, undefined);
    assert.equal(warned.json.spec.template.spec.containers[0].imagee, undefined);
    const strict = await s.request('POST', `${DEPLOY}?fieldValidation=Strict`, { body: { ...typo, metadata: { name: 'typo2' } } });
    assert.equal(strict.status, 400);
    assert.equal(strict.json.message, 'strict decoding error: unknown field "spec.template.spec.containers[0].imagee", unknown field "spec.replica"');
    const ignored = await s.request('POST', `${DEPLOY}?fieldValidation=Ignore`, { body: { ...typo, metadata: { name: 'typo3' } } });
    assert.equal(ignored.status, 201);
    assert.equal(ignored.headers.warning, undefined);
    // A patch goes through the same decoding.
    const patched = await s.request('PATCH', `${DEPLOY}/typo`, { body: { spec: { paused: 'no' } }, contentType: 'application/merge-patch+json' });
    assert.equal(patched.status, 400);
    assert.match(patched.json.message, /cannot unmarshal string into Go struct field DeploymentSpec\.spec\.paused of type bool/);
  });

  // Upstream's per-type registry code (#26): a few defaults every client relies on.
  it('labels namespaces with their name, keeps spec.finalizers on the main endpoint, and writes Secret stringData into data', async () => {
    const ns = await s.request('POST', '/api/v1/namespaces', { body: { metadata: { generateName: 'gen-' } } });
    assert.equal(ns.status, 201, ns.text);
    assert.equal(ns.json.metadata.labels['kubernetes.io/metadata.name'], ns.json.metadata.name);
    const put = await s.request('PUT', `/api/v1/namespaces/${ns.json.metadata.name}`, { body: { ...ns.json, metadata: { ...ns.json.metadata, labels: {} }, spec: { finalizers: [] } } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json.spec.finalizers, ['kubernetes']);
    assert.deepEqual(put.json.metadata.labels, { 'kubernetes.io/metadata.name': ns.json.metadata.name });
    const secret = await s.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 'sd' }, data: { a: Buffer.from('old').toString('base64'), b: 'Yg==' }, stringData: { a: 'new', c: 'see' } } });
    assert.equal(secret.status, 201, secret.text);
    assert.deepEqual(secret.json.data, { a: Buffer.from('new').toString('base64'), b: 'Yg==', c: Buffer.from('see').toString('base64') });
    assert.equal(secret.json.stringData, undefined);
    assert.equal(secret.json.type, 'Opaque');
  });
  // kube-controller-manager's StatefulSet and DaemonSet controllers keep their history in ControllerRevisions.
  it('serves ControllerRevisions as upstream: data mandatory and immutable, revision not negative, the controller in its Table', async () => {
    const CRS = '/apis/apps/v1/namespaces/default/controllerrevisions';
    const missing = await s.request('POST', CRS, { body: { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r0' }, revision: -1 } });
    assert.equal(missing.status, 422, missing.text);
    assert.equal(missing.json.message, 'ControllerRevision.apps "r0" is invalid: [data: Required value: data is mandatory, revision: Invalid value: -1: must be greater than or equal to 0]');
    const sts = await s.request('POST', '/apis/apps/v1/namespaces/default/statefulsets', {
      body: { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, serviceName: 'web', template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } },
    });
    assert.equal(sts.status, 201, sts.text);
    // Owned by a StatefulSet that exists (the garbage collector removes a revision whose owner is gone).
    const owner = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: sts.json.metadata.uid, controller: true, blockOwnerDeletion: true };
    const created = await s.request('POST', CRS, {
      body: { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'web-5d8f', ownerReferences: [owner] }, data: { spec: { template: { metadata: { labels: { app: 'web' } } } } }, revision: 1 },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json.data, { spec: { template: { metadata: { labels: { app: 'web' } } } } });
    const changed = await s.request('PATCH', `${CRS}/web-5d8f`, { body: { data: { spec: { replicas: 2 } } }, contentType: 'application/merge-patch+json' });
    assert.equal(changed.status, 422, changed.text);
    assert.match(changed.json.message, /^ControllerRevision\.apps "web-5d8f" is invalid: data: Invalid value: .*: field is immutable$/);
    const relabelled = await s.request('PATCH', `${CRS}/web-5d8f`, { body: { metadata: { labels: { 'controller.kubernetes.io/hash': '5d8f' } } }, contentType: 'application/merge-patch+json' });
    assert.equal(relabelled.status, 200, relabelled.text);
    const table = await s.request('GET', CRS, { accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' });
    assert.equal(table.status, 200, table.text);
    assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Controller', 'Revision', 'Age']);
    assert.deepEqual(table.json.rows[0].cells.slice(0, 3), ['web-5d8f', 'statefulset.apps/web', 1]);
  });
});
