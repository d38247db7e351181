/**
 * The PodSecurity admission plugin (#41), on by default as in kube-apiserver: namespace labels choose a level per
 * mode; enforce refuses pods (403 with upstream's text), warn warns (pods and the objects that make them), audit
 * annotates the audit event; bad labels are refused; raising enforce warns about the pods already there; the
 * PodSecurityConfiguration of --admission-control-config-file sets the defaults and exemptions.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startKapi } from '../../src/kapi/index.js';
import { startTestServer, type TestServer } from './harness.js';

const ENFORCE = 'pod-security.kubernetes.io/enforce';

const pod = (name: string, spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx', ...container }], ...spec },
});

/** A container that meets the restricted level. */
const RESTRICTED_CONTAINER = {
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
};

describe('PodSecurity admission', () => {
  let s: TestServer;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-psa-'));
    writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: "", resources: ["pods"]}]\n');
    s = await startTestServer({ auditPolicyFile: join(dir, 'policy.yaml'), auditLogPath: join(dir, 'audit.log') });
  });
  after(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const namespace = async (name: string, labels: Record<string, string>) => {
    const r = await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name, labels } } });
    assert.equal(r.status, 201, r.text);
  };

  it('enforces a namespace\'s level with upstream\'s message, and lets through what meets it', async () => {
    await namespace('psa-baseline', { [ENFORCE]: 'baseline' });
    const bad = await s.request('POST', '/api/v1/namespaces/psa-baseline/pods', {
      body: pod('priv', { hostNetwork: true, volumes: [{ name: 'h', hostPath: { path: '/' } }] }, { securityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN', 'NET_RAW', 'CHOWN'] } }, ports: [{ containerPort: 80, hostPort: 8080 }] }),
    });
    assert.equal(bad.status, 403, bad.text);
    assert.equal(bad.json.reason, 'Forbidden');
    assert.deepEqual(bad.json.details, { name: 'priv', kind: 'pods' });
    assert.equal(
      bad.json.message,
      'pods "priv" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "c" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add), host namespaces (hostNetwork=true), hostPath volumes (volume "h"), hostPort (container "c" uses hostPort 8080), privileged (container "c" must not set securityContext.privileged=true)',
    );
    const ok = await s.request('POST', '/api/v1/namespaces/psa-baseline/pods', { body: pod('plain') });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.headers.warning, undefined, 'no warning for a pod that meets the level');
  });

  it('warns at the enforce level (and at warn\'s), and restricted asks for the restricted fields', async () => {
    await namespace('psa-restricted', { [ENFORCE]: 'restricted', 'pod-security.kubernetes.io/enforce-version': 'v1.24' });
    const bad = await s.request('POST', '/api/v1/namespaces/psa-restricted/pods', { body: pod('loose') });
    assert.equal(bad.status, 403);
    assert.equal(
      bad.json.message,
      'pods "loose" is forbidden: violates PodSecurity "restricted:v1.24": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
    const good = await s.request('POST', '/api/v1/namespaces/psa-restricted/pods', { body: pod('tight', {}, RESTRICTED_CONTAINER) });
    assert.equal(good.status, 201, good.text);

    await namespace('psa-warn', { 'pod-security.kubernetes.io/warn': 'restricted', 'pod-security.kubernetes.io/audit': 'baseline' });
    const warned = await s.request('POST', '/api/v1/namespaces/psa-warn/pods', { body: pod('w', {}, { securityContext: { runAsUser: 0, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } }) });
    assert.equal(warned.status, 201, warned.text);
    assert.equal(warned.headers.warning, '299 - "would violate PodSecurity \\"restricted:latest\\": runAsUser=0 (container \\"c\\" must not set runAsUser=0)"');
    // The objects that make pods are warned about, never refused.
    const deployment = {
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'nginx', securityContext: { privileged: true } }] } } },
    };
    const d = await s.request('POST', '/apis/apps/v1/namespaces/psa-restricted/deployments', { body: deployment });
    assert.equal(d.status, 201, d.text);
    assert.match(String(d.headers.warning), /^299 - "would violate PodSecurity \\"restricted:v1.24\\": privileged \(container \\"c\\" must not set securityContext.privileged=true\), allowPrivilegeEscalation != false/);
  });

  it('writes the decision and the audit level\'s violations into the audit event', async () => {
    await namespace('psa-audit', { 'pod-security.kubernetes.io/audit': 'baseline' });
    assert.equal((await s.request('POST', '/api/v1/namespaces/psa-audit/pods', { body: pod('a', { hostPID: true }) })).status, 201);
    let event: any;
    const deadline = Date.now() + 5000;
    while (!event && Date.now() < deadline) {
      const lines = readFileSync(join(dir, 'audit.log'), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
      event = lines.find((e) => e.stage === 'ResponseComplete' && e.objectRef?.namespace === 'psa-audit' && e.verb === 'create');
      if (!event) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(event, 'the pod create is audited');
    assert.equal(event.annotations['pod-security.kubernetes.io/enforce-policy'], 'privileged:latest');
    assert.equal(event.annotations['pod-security.kubernetes.io/audit-violations'], 'would violate PodSecurity "baseline:latest": host namespaces (hostPID=true)');
  });

  it('refuses labels that do not parse, and warns about existing pods when enforce rises', async () => {
    const bad = await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'psa-bad', labels: { [ENFORCE]: 'strict', 'pod-security.kubernetes.io/warn-version': '1.25' } } } });
    assert.equal(bad.status, 422);
    assert.equal(
      bad.json.message,
      'Namespace "psa-bad" is invalid: [metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted, metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.25": must be "latest" or "v1.x"]',
    );
    await namespace('psa-rise', {});
    for (const name of ['p2', 'p1']) assert.equal((await s.request('POST', '/api/v1/namespaces/psa-rise/pods', { body: pod(name, { hostIPC: true }) })).status, 201);
    assert.equal((await s.request('POST', '/api/v1/namespaces/psa-rise/pods', { body: pod('p3', {}, { securityContext: { privileged: true } }) })).status, 201);
    const rise = await s.request('PATCH', '/api/v1/namespaces/psa-rise', { body: { metadata: { labels: { [ENFORCE]: 'baseline' } } }, contentType: 'application/merge-patch+json' });
    assert.equal(rise.status, 200, rise.text);
    const warnings = String(rise.headers.warning).split(/, (?=299 )/);
    assert.deepEqual(warnings, [
      '299 - "existing pods in namespace \\"psa-rise\\" violate the new PodSecurity enforce level \\"baseline:latest\\""',
      '299 - "p1 (and 1 other pod): host namespaces"',
      '299 - "p3: privileged"',
    ]);
  });

  it('reads defaults and exemptions from --admission-control-config-file', async () => {
    const d = mkdtempSync(join(tmpdir(), 'kapi-psa-config-'));
    writeFileSync(
      join(d, 'admission.yaml'),
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: psa.yaml\n',
    );
    writeFileSync(
      join(d, 'psa.yaml'),
      'apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: baseline\nexemptions:\n  namespaces: [kube-system]\n  usernames: [system:serviceaccount:kube-system:replicaset-controller]\n',
    );
    const c = await startTestServer({ admissionControlConfigFile: join(d, 'admission.yaml') });
    try {
      const refused = await c.request('POST', '/api/v1/namespaces/default/pods', { body: pod('h', { hostNetwork: true }) });
      assert.equal(refused.status, 403);
      assert.match(refused.json.message, /violates PodSecurity "baseline:latest": host namespaces \(hostNetwork=true\)$/);
      assert.equal((await c.request('POST', '/api/v1/namespaces/kube-system/pods', { body: pod('h', { hostNetwork: true }) })).status, 201, 'an exempt namespace');
      const privileged = await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'open', labels: { [ENFORCE]: 'privileged' } } } });
      assert.equal(privileged.status, 201);
      assert.equal((await c.request('POST', '/api/v1/namespaces/open/pods', { body: pod('h', { hostNetwork: true }) })).status, 201, 'a namespace label overrides the default');
    } finally {
      await c.stop();
    }
    // Inline, as the README shows it.
    writeFileSync(
      join(d, 'admission.yaml'),
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n    defaults: {enforce: tight}\n    exemptions: {usernames: [""]}\n',
    );
    await assert.rejects(startKapi({ dataDir: join(d, 'data'), port: 0, admissionControlConfigFile: join(d, 'admission.yaml') }), {
      message: 'PodSecurity invalid: defaults.enforce: Invalid value: "tight": must be one of privileged, baseline, restricted, exemptions.usernames[0]: Invalid value: "": username must not be empty',
    });
    rmSync(d, { recursive: true, force: true });
  });
});
