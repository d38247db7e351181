/**
 * kube-apiserver's smaller default admission plugins (#41): DefaultStorageClass and DefaultIngressClass (the newest
 * default class, a class asked for left as it is), StorageObjectInUseProtection (the protection finalizers),
 * TaintNodesByCondition (a new Node is not-ready until its controller sees it Ready), RuntimeClass and
 * PersistentVolumeClaimResize; each off with --disable-admission-plugins.
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

  it('gives pods their RuntimeClass\'s overhead and scheduling, and refuses what does not fit it', async () => {
    const pod = (name: string, spec: Record<string, unknown>) => s.request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } } });
    const missing = await pod('m', { runtimeClassName: 'missing' });
    assert.equal(missing.status, 403);
    assert.equal(missing.json.message, 'pods "m" is forbidden: pod rejected: RuntimeClass "missing" not found');
    const rc = { metadata: { name: 'kata' }, handler: 'kata', overhead: { podFixed: { cpu: '250m', memory: '120Mi' } }, scheduling: { nodeSelector: { runtime: 'kata' }, tolerations: [{ key: 'kata', operator: 'Exists', effect: 'NoSchedule' }] } };
    assert.equal((await s.request('POST', '/apis/node.k8s.io/v1/runtimeclasses', { body: rc })).status, 201);
    const kata = await pod('k', { runtimeClassName: 'kata', nodeSelector: { disk: 'ssd' } });
    assert.equal(kata.status, 201, kata.text);
    assert.deepEqual(kata.json.spec.overhead, { cpu: '250m', memory: '120Mi' });
    assert.deepEqual(kata.json.spec.nodeSelector, { disk: 'ssd', runtime: 'kata' });
    assert.ok(kata.json.spec.tolerations.some((t: { key?: string }) => t.key === 'kata'), JSON.stringify(kata.json.spec.tolerations));
    const conflict = await pod('c', { runtimeClassName: 'kata', nodeSelector: { runtime: 'runc' } });
    assert.equal(conflict.status, 403);
    assert.equal(conflict.json.message, 'pods "c" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; pod.spec.nodeSelector[runtime] = runc');
    const overhead = await pod('o', { overhead: { cpu: '1' } });
    assert.equal(overhead.status, 403);
    assert.equal(overhead.json.message, 'pods "o" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  });

  it('lets a bound claim grow only where its StorageClass allows expansion', async () => {
    const sc = (name: string, allowVolumeExpansion: boolean) => ({ metadata: { name }, provisioner: 'example.com/p', allowVolumeExpansion });
    for (const [name, grows] of [['grows', true], ['fixed', false]] as const) assert.equal((await s.request('POST', '/apis/storage.k8s.io/v1/storageclasses', { body: sc(name, grows) })).status, 201);
    const PVCS = '/api/v1/namespaces/default/persistentvolumeclaims';
    const bound = async (name: string, storageClassName: string) => {
      const created = await s.request('POST', PVCS, { body: claim(name, { storageClassName }) });
      assert.equal(created.status, 201, created.text);
      const status = await s.request('PUT', `${PVCS}/${name}/status`, { body: { ...created.json, status: { phase: 'Bound' } } });
      assert.equal(status.status, 200, status.text);
    };
    const grow = (name: string) => s.request('PATCH', `${PVCS}/${name}`, { body: { spec: { resources: { requests: { storage: '2Gi' } } } }, contentType: 'application/merge-patch+json' });
    await bound('g', 'grows');
    assert.equal((await grow('g')).status, 200);
    await bound('f', 'fixed');
    const fixed = await grow('f');
    assert.equal(fixed.status, 403);
    assert.equal(fixed.json.message, 'persistentvolumeclaims "f" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    assert.equal((await s.request('POST', PVCS, { body: claim('u', { storageClassName: 'grows' }) })).status, 201);
    const unbound = await grow('u');
    assert.equal(unbound.status, 403);
    assert.equal(unbound.json.message, 'persistentvolumeclaims "u" is forbidden: Only bound persistent volume claims can be expanded');
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
