/** The Pod Security Standards' checks by version (pod-security-admission's policy package), without a server. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregate, LATEST, parseVersion, PodSecurityEvaluator, type Level } from '../../src/apis/core/pod-security-policy.js';

const evaluator = new PodSecurityEvaluator(32);
const check = (level: Level, version: string, spec: Record<string, unknown>, meta: Record<string, unknown> = {}) =>
  aggregate(evaluator.evaluate({ level, version: parseVersion(version) ?? LATEST }, meta, spec));
const container = (securityContext: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({ name: 'c', image: 'x', securityContext, ...extra });
const RESTRICTED = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };

describe('Pod Security Standards checks', () => {
  it('applies each check from the version it came in', () => {
    // runAsUser=0 is refused from v1.23; capabilities from v1.22; seccomp fields from v1.19 (annotations before).
    const root = { containers: [container({ ...RESTRICTED, runAsUser: 0 })] };
    assert.equal(check('restricted', 'v1.22', root).allowed, true);
    assert.equal(check('restricted', 'v1.23', root).detail, 'runAsUser=0 (container "c" must not set runAsUser=0)');
    const noDrop = { containers: [container({ ...RESTRICTED, capabilities: { add: ['NET_ADMIN'] } })] };
    assert.equal(check('restricted', 'v1.21', noDrop).reason, 'non-default capabilities', 'the baseline check until restricted overrides it');
    assert.equal(check('restricted', 'v1.22', noDrop).detail, 'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]; container "c" must not include "NET_ADMIN" in securityContext.capabilities.add)');
    const annotated = { containers: [container()] };
    const meta = { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' } };
    assert.equal(check('baseline', 'v1.18', annotated, meta).detail, 'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")');
    assert.equal(check('baseline', 'v1.19', annotated, meta).allowed, true, 'annotations are not read from v1.19');
    // Windows pods are spared the Linux-only restricted checks from v1.25, not before.
    const windows = { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [container({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } })] };
    assert.equal(check('restricted', 'v1.24', windows).detail, 'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
    assert.equal(check('restricted', 'v1.25', { ...windows, containers: [container()] }).allowed, true);
  });

  it('reads "latest" and newer versions as the server\'s own', () => {
    const sysctl = (name: string) => ({ containers: [container()], securityContext: { sysctls: [{ name, value: '1' }] } });
    assert.equal(check('baseline', 'v1.26', sysctl('net.ipv4.ip_local_reserved_ports')).detail, 'forbidden sysctls (net.ipv4.ip_local_reserved_ports)');
    assert.equal(check('baseline', 'v1.27', sysctl('net.ipv4.ip_local_reserved_ports')).allowed, true);
    // v1.37's sysctls and v1.34's probe hosts are newer than the server (1.32): not applied at latest or at v1.40.
    assert.equal(check('baseline', 'latest', sysctl('net.ipv4.tcp_notsent_lowat')).allowed, false);
    assert.equal(check('baseline', 'v1.40', sysctl('net.ipv4.tcp_notsent_lowat')).allowed, false);
    const probeHost = { containers: [container({}, { livenessProbe: { httpGet: { host: 'example.com', port: 80 } } })] };
    assert.equal(check('baseline', 'latest', probeHost).allowed, true);
    assert.equal(aggregate(new PodSecurityEvaluator(36).evaluate({ level: 'baseline', version: LATEST }, {}, probeHost)).detail, 'probe or lifecycle host (container "c" uses probe or lifecycle host "example.com")');
  });

  it('names what breaks the level as upstream does', () => {
    const spec = {
      securityContext: { seLinuxOptions: { type: 'spc_t', user: 'root' }, windowsOptions: { hostProcess: true } },
      initContainers: [container({ procMount: 'Unmasked', appArmorProfile: { type: 'Unconfined' } }, { name: 'init' })],
      containers: [container({ seccompProfile: { type: 'Unconfined' } }), container({}, { name: 'd', ports: [{ containerPort: 1, hostPort: 81 }, { containerPort: 2, hostPort: 80 }] })],
      volumes: [{ name: 'n', nfs: { server: 's', path: '/' } }, { name: 'e', emptyDir: {} }],
    };
    assert.equal(
      check('baseline', 'latest', spec).detail,
      'forbidden AppArmor profile (container "init" must not set AppArmor profile type to "Unconfined"), hostPort (container "d" uses hostPorts 80, 81), procMount (container "init" must not set securityContext.procMount to "Unmasked"), seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set), seccompProfile (container "c" must not set securityContext.seccompProfile.type to "Unconfined"), hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)',
    );
    assert.match(check('restricted', 'latest', spec).detail, /restricted volume types \(volume "n" uses restricted volume type "nfs"\)/);
    assert.equal(check('privileged', 'latest', spec).allowed, true);
  });
});
