/** A start that fails (a taken port, a bad audit policy, a step after the store is open) leaves nothing open behind its error. */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { startKapi } from '../../src/kapi/index.js';
import { defineResource, t, version } from '../../src/sdk/index.js';

it('releases the store when the port is taken or the configuration is bad', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-start-'));
  const first = await startKapi({ dataDir: join(dir, 'a'), port: 0 });
  try {
    await assert.rejects(startKapi({ dataDir: join(dir, 'b'), port: first.port }), /EADDRINUSE/);
    writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n');
    await assert.rejects(startKapi({ dataDir: join(dir, 'b'), port: 0, auditPolicyFile: join(dir, 'bad.yaml'), auditLogPath: join(dir, 'audit.log') }));
    // The failed starts' store is closed: the data directory opens again, and this process can end.
    const again = await startKapi({ dataDir: join(dir, 'b'), port: 0 });
    await again.stop();
  } finally {
    await first.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * The handles and timers the process holds, by type: what keeps it from ending. File operations in flight are left
 * out (they end by themselves, and the test runner has its own).
 */
function activeResources(): string {
  return process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap' && !r.startsWith('FSReq')).sort().join(',');
}

it('closes what it started when a step after the store is open fails', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-start-'));
  try {
    const before = activeResources();
    // A resource defined in TypeScript whose CRD the server refuses: the failure comes once the store, the CRD
    // runtime, the caches and the HTTP front are up.
    const defined = defineResource({ group: 'start.example.com', kind: 'Broken', versions: [version('v1', { spec: t.object({ size: t.integer() }) })] });
    const broken = { ...defined, crd: { ...defined.crd, spec: { ...(defined.crd.spec as object), scope: 'Sideways' } } };
    await assert.rejects(startKapi({ dataDir: join(dir, 'data'), port: 0, resources: [broken] }), /is invalid/);
    await new Promise((r) => setImmediate(r));
    assert.equal(activeResources(), before, 'no timer, socket or watch of the failed start is left');
    // A wrong plugin configuration is found before anything is opened.
    writeFileSync(
      join(dir, 'admission.yaml'),
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration: {apiVersion: pod-security.admission.config.k8s.io/v1, kind: PodSecurityConfiguration, defaults: {enforce: tight}}\n',
    );
    await assert.rejects(startKapi({ dataDir: join(dir, 'psa'), port: 0, admissionControlConfigFile: join(dir, 'admission.yaml') }), /PodSecurity invalid/);
    assert.equal(existsSync(join(dir, 'psa', 'state.db')), false, 'the store was not opened');
    assert.equal(activeResources(), before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
