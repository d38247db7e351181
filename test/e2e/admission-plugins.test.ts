/**
 * Admission plugins by kube-apiserver's names: the default set, --enable-admission-plugins and
 * --disable-admission-plugins with upstream's checks, run in upstream's order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionFlagErrors, ALL_ORDERED_PLUGINS, admissionPlugins, enabledAdmissionPlugins, type AdmissionContext } from '../../src/apis/admission-plugins.js';
import { BUILTIN_ADMISSION } from '../../src/apis/builtin.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKapi } from '../../src/kapi/index.js';
import { startTestServer } from './harness.js';

describe('admission plugins', () => {
  it('checks the flags as kube-apiserver does', () => {
    assert.deepEqual(admissionFlagErrors(['NamespaceLifecycle'], ['LimitRanger']), []);
    assert.deepEqual(admissionFlagErrors(['Foo', 'LimitRanger'], ['Bar', 'LimitRanger']), [
      'enable-admission-plugins plugin "Foo" is unknown',
      'disable-admission-plugins plugin "Bar" is unknown',
      '[LimitRanger] in enable-admission-plugins and disable-admission-plugins overlapped',
    ]);
  });

  it('runs what is on in upstream order, whatever order the flags name them in', () => {
    const on = enabledAdmissionPlugins(['AlwaysDeny', 'NamespaceAutoProvision'], ['MutatingAdmissionWebhook', 'ValidatingAdmissionPolicy']);
    assert.ok(on.includes('NamespaceLifecycle') && on.includes('ValidatingAdmissionWebhook'));
    assert.ok(!on.includes('MutatingAdmissionWebhook') && !on.includes('ValidatingAdmissionPolicy'));
    assert.deepEqual(on, [...on].sort((a, b) => ALL_ORDERED_PLUGINS.indexOf(a) - ALL_ORDERED_PLUGINS.indexOf(b)));
    assert.equal(on[0], 'NamespaceAutoProvision');
    assert.equal(on.at(-1), 'AlwaysDeny');
    // The groups' plugins are made in that order (with the embedder's before the dynamic ones); the webhook pair shares one matcher.
    const made: string[] = [];
    const definitions = [...BUILTIN_ADMISSION].filter((d) => d.make).reverse().map((d) => ({ name: d.name, make: () => (made.push(d.name), { name: d.name }) }));
    const plugins = admissionPlugins(definitions, enabledAdmissionPlugins(), {} as AdmissionContext, [{ name: 'embedded' }]);
    assert.deepEqual(plugins.map((p) => p.name), ['NamespaceLifecycle', 'LimitRanger', 'TaintNodesByCondition', 'PodSecurity', 'DefaultStorageClass', 'StorageObjectInUseProtection', 'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass', 'embedded', 'MutatingAdmissionPolicy', 'MutatingAdmissionWebhook', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook', 'ResourceQuota']);
    assert.deepEqual(made, plugins.map((p) => p.name).filter((n) => n !== 'embedded'));
  });

  it('without NamespaceLifecycle, objects go into namespaces that do not exist (as on kube-apiserver)', async () => {
    const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
    const on = await startTestServer();
    try {
      const r = await on.request('POST', '/api/v1/namespaces/nowhere/configmaps', { body: cm('a') });
      assert.equal(r.status, 404, r.text);
      assert.equal(r.json.message, 'namespaces "nowhere" not found');
    } finally {
      await on.stop();
    }
    const off = await startTestServer({ disableAdmissionPlugins: ['NamespaceLifecycle'] });
    try {
      const r = await off.request('POST', '/api/v1/namespaces/nowhere/configmaps', { body: cm('a') });
      assert.equal(r.status, 201, r.text);
      assert.equal((await off.request('GET', '/api/v1/namespaces/nowhere/configmaps/a')).status, 200);
    } finally {
      await off.stop();
    }
  });

  it('runs the plugins built into the pod strategy (ServiceAccount, Priority, DefaultTolerationSeconds) only while they are on', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    const on = await startTestServer();
    try {
      const r = await on.request('POST', '/api/v1/namespaces/default/pods', { body: pod });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.json.spec.serviceAccountName, 'default');
      assert.ok(r.json.spec.volumes?.some((v: { name: string }) => v.name.startsWith('kube-api-access-')));
      assert.equal(r.json.spec.priority, 0);
      assert.equal(r.json.spec.tolerations?.length, 2);
    } finally {
      await on.stop();
    }
    const off = await startTestServer({ disableAdmissionPlugins: ['ServiceAccount', 'Priority', 'DefaultTolerationSeconds'] });
    try {
      const r = await off.request('POST', '/api/v1/namespaces/default/pods', { body: pod });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.json.spec.serviceAccountName, undefined);
      assert.equal(r.json.spec.volumes, undefined);
      assert.equal(r.json.spec.priority, undefined);
      assert.equal(r.json.spec.tolerations, undefined);
    } finally {
      await off.stop();
    }
  });

  it('refuses to start on flags kube-apiserver refuses, and names the plugins kapi does not have', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kapi-admission-'));
    try {
      await assert.rejects(startKapi({ dataDir: dir, port: 0, enableAdmissionPlugins: ['NoSuchPlugin'] }), /enable-admission-plugins plugin "NoSuchPlugin" is unknown/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const warnings: string[] = [];
    const s = await startTestServer({ enableAdmissionPlugins: ['AlwaysPullImages', 'Priority'], warn: (m) => warnings.push(m) });
    try {
      // Priority is kapi's (in the pod strategy): only AlwaysPullImages is named.
      assert.ok(warnings.some((w) => w.endsWith('admission plugins kapi does not have are not run: AlwaysPullImages')), warnings.join('\n'));
    } finally {
      await s.stop();
    }
  });
});
