/**
 * Details where kapi differed from current upstream (#41's list), each as kube-apiserver answers: a Scale of another
 * version, a namespace name with a dot, a YAML body of another YAML version or cut short, a custom resource's
 * replicas of the wrong type, a write-back of an object that reads with a default added since, and quantities
 * written in canonical form.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, until, type TestServer } from './harness.js';

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.details.example.com' },
  spec: {
    group: 'details.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
      },
    ],
  },
};
const WIDGETS = '/apis/details.example.com/v1/namespaces/default/widgets';

describe('details as current upstream has them', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRD })).status, 201);
    await until('the CRD served', async () => (await s.request('GET', WIDGETS)).status === 200);
  });
  after(() => s.stop());

  it('refuses a Scale of another version, a namespace name with a dot and a YAML 2.0 body; names the line of YAML cut short', async () => {
    const deploy = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } };
    assert.equal((await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deploy })).status, 201);
    const scale = await s.request('PUT', '/apis/apps/v1/namespaces/default/deployments/d/scale', { body: { apiVersion: 'autoscaling/v2', kind: 'Scale', metadata: { name: 'd' }, spec: { replicas: 3 } } });
    assert.equal(scale.status, 400, scale.text);
    assert.equal(scale.json.message, 'Scale in version "v2" cannot be handled as a Scale: no kind "Scale" is registered for version "autoscaling/v2" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"');
    assert.equal((await s.request('GET', '/apis/apps/v1/namespaces/default/deployments/d')).json.spec.replicas, 1, 'nothing scaled');

    const ns = await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'fuzz.dot' } } });
    assert.equal(ns.status, 422, ns.text);
    assert.equal(ns.json.message, 'Namespace "fuzz.dot" is invalid: metadata.name: Invalid value: "fuzz.dot": must not contain dots');

    const yaml2 = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: '%YAML 2.0\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y2\n', contentType: 'application/yaml' });
    assert.equal(yaml2.status, 400, yaml2.text);
    assert.match(yaml2.json.message, /^the object provided is unrecognized \(must be of type ConfigMap\): yaml: found incompatible YAML document \(/);
    const cut = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: 'a: [unclosed', contentType: 'application/yaml' });
    assert.equal(cut.status, 400, cut.text);
    assert.match(cut.json.message, /: yaml: line 1: did not find expected ',' or '\]' \(/);
  });

  it('reports a custom resource\'s replicas of the wrong type as unstructured reads them', async () => {
    const res = await s.request('POST', WIDGETS, { body: { apiVersion: 'details.example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { replicas: 'three' } } });
    assert.equal(res.status, 422, res.text);
    assert.equal(res.json.message, 'Widget.details.example.com "w" is invalid: .spec.replicas: Invalid value: 0: .spec.replicas accessor error: three is of the type string, expected int64');
  });

  it('writes back an object that reads with a default added since (the stored bytes differ), and nothing when they do not', async () => {
    assert.equal((await s.request('POST', WIDGETS, { body: { apiVersion: 'details.example.com/v1', kind: 'Widget', metadata: { name: 'old' }, spec: { replicas: 1 } } })).status, 201);
    const crd = (await s.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD.metadata.name}`)).json;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec = { type: 'object', properties: { replicas: { type: 'integer' }, color: { type: 'string', default: 'blue' } } };
    assert.equal((await s.request('PUT', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD.metadata.name}`, { body: crd })).status, 200);
    const read = (await s.request('GET', `${WIDGETS}/old`)).json;
    assert.equal(read.spec.color, 'blue', 'defaulted on read');
    const put = await s.request('PUT', `${WIDGETS}/old`, { body: read });
    assert.equal(put.status, 200, put.text);
    assert.notEqual(put.json.metadata.resourceVersion, read.metadata.resourceVersion, 'written: the stored object had no color');
    const again = await s.request('PUT', `${WIDGETS}/old`, { body: put.json });
    assert.equal(again.json.metadata.resourceVersion, put.json.metadata.resourceVersion, 'a no-op now');
  });

  it('writes quantities of built-in objects in canonical form', async () => {
    const pod = await s.request('POST', '/api/v1/namespaces/default/pods', {
      body: { metadata: { name: 'q' }, spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1000m', memory: '1024Mi' }, limits: { cpu: 2, memory: '2e9', 'ephemeral-storage': '1.5Gi' } } }] } },
    });
    assert.equal(pod.status, 201, pod.text);
    assert.deepEqual(pod.json.spec.containers[0].resources, { requests: { cpu: '1', memory: '1Gi', 'ephemeral-storage': '1536Mi' }, limits: { cpu: '2', memory: '2e9', 'ephemeral-storage': '1536Mi' } });
    const quota = await s.request('POST', '/api/v1/namespaces/default/resourcequotas', { body: { metadata: { name: 'rq' }, spec: { hard: { pods: '1000', cpu: '0.5' } } } });
    assert.deepEqual(quota.json.spec.hard, { pods: '1k', cpu: '500m' });
  });
});
