/**
 * kube-apiserver's small default admission plugins (#41): DefaultStorageClass and DefaultIngressClass (the newest
 * default class, a class asked for left as it is), StorageObjectInUseProtection (the protection finalizers) and
 * TaintNodesByCondition (a new Node is not-ready until its controller sees it Ready); each off with
 * --disable-admission-plugins.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from './harness.js';

const claim = (name: string, extra: Record<string, unknown> = {}) => ({ metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...extra } });

describe('default admission plugins', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('gives new claims the newest default StorageClass and the protection finalizer; volumes theirs', async () => {
    assert.equal((await s.request('POST', '/api/v1/namespaces/default/persistentvolumeclaims', { body: claim('none') })).json.spec.storageClassName, undefined, 'no default class yet');
    const sc = (name: string, isDefault: boolean) => ({ metadata: { name, annotations: isDefault ? { 'storageclass.kubernetes.io/is-default-class': 'true' } : {} }, provisioner: 'example.com/p' });
    assert.equal((await s.request('POST', '/apis/storage.k8s.io/v1/storageclasses', { body: sc('old', true) })).status, 201);
    await new Promise((r) => setTimeout(r, 1100)); // creation timestamps are in seconds
    assert.equal((await s.request('POST', '/apis/storage.k8s.io/v1/storageclasses', { body: sc('new', true) })).status, 201);
    assert.equal((await s.request('POST', '/apis/storage.k8s.io/v1/storageclasses', { body: sc('plain', false) })).status, 201);
    const defaulted = await s.request('POST', '/api/v1/namespaces/default/persistentvolumeclaims', { body: claim('c1') });
    assert.equal(defaulted.status, 201, defaulted.text);
    assert.equal(defaulted.json.spec.storageClassName, 'new');
    assert.deepEqual(defaulted.json.metadata.finalizers, ['kubernetes.io/pvc-protection']);
    const asked = await s.request('POST', '/api/v1/namespaces/default/persistentvolumeclaims', { body: claim('c2', { storageClassName: '' }) });
    assert.equal(asked.json.spec.storageClassName, '', 'no class, asked for');
    const pv = await s.request('POST', '/api/v1/persistentvolumes', { body: { metadata: { name: 'pv1' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/pv1' } } } });
    assert.equal(pv.status, 201, pv.text);
    assert.deepEqual(pv.json.metadata.finalizers, ['kubernetes.io/pv-protection']);
  });

  it('gives new Ingresses the default IngressClass, and new Nodes the not-ready taint', async () => {
    assert.equal((await s.request('POST', '/apis/networking.k8s.io/v1/ingressclasses', { body: { metadata: { name: 'nginx', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } }, spec: { controller: 'k8s.io/ingress-nginx' } } })).status, 201);
    const ing = await s.request('POST', '/apis/networking.k8s.io/v1/namespaces/default/ingresses', { body: { metadata: { name: 'web' }, spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } } });
    assert.equal(ing.status, 201, ing.text);
    assert.equal(ing.json.spec.ingressClassName, 'nginx');
    const legacy = await s.request('POST', '/apis/networking.k8s.io/v1/namespaces/default/ingresses', { body: { metadata: { name: 'old', annotations: { 'kubernetes.io/ingress.class': 'traefik' } }, spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } } });
    assert.equal(legacy.json.spec.ingressClassName, undefined, 'the legacy annotation names a class');
    const node = await s.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'n1' }, spec: { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] } } });
    assert.equal(node.status, 201, node.text);
    assert.deepEqual(node.json.spec.taints, [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
  });

  it('are off when disabled', async () => {
    const off = await startTestServer({ disableAdmissionPlugins: ['StorageObjectInUseProtection', 'TaintNodesByCondition'] });
    try {
      assert.equal((await off.request('POST', '/api/v1/namespaces/default/persistentvolumeclaims', { body: claim('c') })).json.metadata.finalizers, undefined);
      assert.equal((await off.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'n' } } })).json.spec?.taints, undefined);
    } finally {
      await off.stop();
    }
  });
});
