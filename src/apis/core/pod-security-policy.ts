/**
 * The Pod Security Standards as pod-security-admission's policy package has them: each check of the baseline and
 * restricted levels in each of its versions, with upstream's reasons and details, and the evaluator that picks,
 * for a level and a version, the checks that apply (restricted checks override the baseline checks they replace).
 * Objects are read as JSON: a Go zero value (false, 0, "") is what an absent field is.
 */
import type { KObject } from '../../api/object.js';
import { compareGoStrings, goQuote } from '../../machinery/go-text.js';
import { isRecord, records } from '../../util/json-object.js';

export type Level = 'privileged' | 'baseline' | 'restricted';
export const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/** A policy version: v1.<minor>, or latest (newer than every other). */
export type Version = { latest: true } | { latest: false; minor: number };
export const LATEST: Version = { latest: true };
const v1 = (minor: number): Version => ({ latest: false, minor });

export const versionString = (v: Version): string => (v.latest ? 'latest' : `v1.${v.minor}`);
/** `a` is older than `b` (latest is older than nothing). */
export const older = (a: Version, b: Version): boolean => !a.latest && (b.latest || a.minor < b.minor);

export interface LevelVersion {
  level: Level;
  version: Version;
}
export const levelVersionString = (lv: LevelVersion): string => `${lv.level}:${versionString(lv.version)}`;

export interface CheckResult {
  allowed: boolean;
  reason?: string;
  detail?: string;
}

type CheckFn = (meta: KObject, spec: KObject) => CheckResult;

interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  /** The check's revisions, from the version each applies to (strictly increasing). */
  versions: Array<{ from: number; check: CheckFn; overrides?: string[] }>;
}

const ALLOWED: CheckResult = { allowed: true };

// ---- helpers (policy/helpers.go, visitor.go)

const joinQuote = (items: readonly string[]): string => (items.length === 0 ? '' : `"${items.join('", "')}"`);
const pluralize = (singular: string, plural: string, count: number): string => (count === 1 ? singular : plural);
/** sets.NewString(...).List(): unique, in Go's byte order. */
const sortedSet = (s: Iterable<string>): string[] => [...new Set(s)].sort(compareGoStrings);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const securityContext = (c: KObject): KObject | undefined => (isRecord(c.securityContext) ? c.securityContext : undefined);
const podSecurityContext = (spec: KObject): KObject | undefined => (isRecord(spec.securityContext) ? spec.securityContext : undefined);
const isWindows = (spec: KObject): boolean => isRecord(spec.os) && spec.os.name === 'windows';
/** A pod in a user namespace (hostUsers: false): some checks are relaxed for it. */
const inUserNamespace = (spec: KObject): boolean => spec.hostUsers === false;

/** Every container of the spec: init containers, containers, ephemeral containers. */
function containers(spec: KObject): KObject[] {
  return [...records(spec.initContainers), ...records(spec.containers), ...records(spec.ephemeralContainers)];
}
const nameOf = (c: KObject): string => str(c.name);

/** "pod and containers "a", "b"": the setters list most checks print. */
function setters(pod: boolean, badContainers: readonly string[]): string[] {
  const out = pod ? ['pod'] : [];
  if (badContainers.length > 0) out.push(`${pluralize('container', 'containers', badContainers.length)} ${joinQuote(badContainers)}`);
  return out;
}

// ---- baseline checks

function privileged(_meta: KObject, spec: KObject): CheckResult {
  const bad = containers(spec).filter((c) => securityContext(c)?.privileged === true).map(nameOf);
  if (bad.length === 0) return ALLOWED;
  return { allowed: false, reason: 'privileged', detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not set securityContext.privileged=true` };
}

function hostNamespaces(_meta: KObject, spec: KObject): CheckResult {
  const on = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((k) => spec[k] === true).map((k) => `${k}=true`);
  return on.length === 0 ? ALLOWED : { allowed: false, reason: 'host namespaces', detail: on.join(', ') };
}

function hostPathVolumes(_meta: KObject, spec: KObject): CheckResult {
  const bad = records(spec.volumes).filter((v) => isRecord(v.hostPath)).map(nameOf);
  if (bad.length === 0) return ALLOWED;
  return { allowed: false, reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)}` };
}

function hostPorts(_meta: KObject, spec: KObject): CheckResult {
  const bad: string[] = [];
  const ports: string[] = [];
  for (const c of containers(spec)) {
    const used = records(c.ports).filter((p) => typeof p.hostPort === 'number' && p.hostPort !== 0);
    if (used.length === 0) continue;
    bad.push(nameOf(c));
    for (const p of used) ports.push(String(p.hostPort));
  }
  if (bad.length === 0) return ALLOWED;
  const unique = sortedSet(ports);
  return {
    allowed: false,
    reason: 'hostPort',
    detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', unique.length)} ${unique.join(', ')}`,
  };
}

/** The hosts a probe or lifecycle handler names (httpGet, tcpSocket). */
function handlerHosts(handler: unknown): string[] {
  if (!isRecord(handler)) return [];
  return [handler.httpGet, handler.tcpSocket].filter(isRecord).map((h) => str(h.host)).filter((h) => h !== '');
}

function hostProbesAndHostLifecycle(_meta: KObject, spec: KObject): CheckResult {
  const bad = new Set<string>();
  const hosts = new Set<string>();
  for (const c of containers(spec)) {
    const lifecycle = isRecord(c.lifecycle) ? c.lifecycle : {};
    for (const handler of [c.livenessProbe, c.readinessProbe, c.startupProbe, lifecycle.postStart, lifecycle.preStop]) {
      const found = handlerHosts(handler);
      if (found.length === 0) continue;
      bad.add(nameOf(c));
      for (const h of found) hosts.add(h);
    }
  }
  if (bad.size === 0) return ALLOWED;
  return {
    allowed: false,
    reason: 'probe or lifecycle host',
    detail: `${pluralize('container', 'containers', bad.size)} ${joinQuote(sortedSet(bad))} ${pluralize('uses', 'use', bad.size)} ${pluralize('probe or lifecycle host', 'probe or lifecycle hosts', hosts.size)} ${joinQuote(sortedSet(hosts))}`,
  };
}

const DEFAULT_CAPABILITIES = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

function capabilitiesBaseline(_meta: KObject, spec: KObject): CheckResult {
  const bad: string[] = [];
  const added: string[] = [];
  for (const c of containers(spec)) {
    const caps = securityContext(c)?.capabilities;
    if (!isRecord(caps)) continue;
    const extra = (Array.isArray(caps.add) ? caps.add : []).map(str).filter((cap) => !DEFAULT_CAPABILITIES.has(cap));
    if (extra.length === 0) continue;
    bad.push(nameOf(c));
    added.push(...extra);
  }
  if (bad.length === 0) return ALLOWED;
  return {
    allowed: false,
    reason: 'non-default capabilities',
    detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not include ${joinQuote(sortedSet(added))} in securityContext.capabilities.add`,
  };
}

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

function appArmorProfile(meta: KObject, spec: KObject): CheckResult {
  const allowedType = (t: unknown) => t === 'RuntimeDefault' || t === 'Localhost';
  const badValues: string[] = [];
  const podProfile = podSecurityContext(spec)?.appArmorProfile;
  const podBad = isRecord(podProfile) && !allowedType(podProfile.type);
  if (podBad) badValues.push(str((podProfile as KObject).type));
  const bad: string[] = [];
  for (const c of containers(spec)) {
    const profile = securityContext(c)?.appArmorProfile;
    if (!isRecord(profile) || allowedType(profile.type)) continue;
    bad.push(nameOf(c));
    badValues.push(str(profile.type));
  }
  const badSetters = setters(podBad, bad);
  const values = sortedSet(badValues);
  const annotations = isRecord(meta.annotations) ? meta.annotations : {};
  const forbidden = Object.entries(annotations)
    .filter(([k, v]) => k.startsWith(APPARMOR_ANNOTATION_PREFIX) && !(str(v) === '' || v === 'runtime/default' || str(v).startsWith('localhost/')))
    .map(([k, v]) => `${k}=${goQuote(str(v))}`)
    .sort(compareGoStrings);
  if (forbidden.length > 0) {
    values.push(...forbidden);
    badSetters.push(pluralize('annotation', 'annotations', forbidden.length));
  }
  if (badSetters.length === 0) return ALLOWED;
  return {
    allowed: false,
    reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length),
    detail: `${badSetters.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}`,
  };
}

const SELINUX_TYPES_1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const SELINUX_TYPES_1_31 = new Set([...SELINUX_TYPES_1_0, 'container_engine_t']);

function seLinuxOptions(allowedTypes: ReadonlySet<string>): CheckFn {
  return (_meta, spec) => {
    const badTypes: string[] = [];
    let setUser = false;
    let setRole = false;
    const valid = (opts: KObject): boolean => {
      let ok = true;
      const type = str(opts.type);
      if (!allowedTypes.has(type)) {
        ok = false;
        badTypes.push(type);
      }
      if (str(opts.user) !== '') {
        ok = false;
        setUser = true;
      }
      if (str(opts.role) !== '') {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const podOpts = podSecurityContext(spec)?.seLinuxOptions;
    const podBad = isRecord(podOpts) && !valid(podOpts);
    const bad = containers(spec)
      .filter((c) => {
        const opts = securityContext(c)?.seLinuxOptions;
        return isRecord(opts) && !valid(opts);
      })
      .map(nameOf);
    const badSetters = setters(podBad, bad);
    if (badSetters.length === 0) return ALLOWED;
    const data: string[] = [];
    const types = sortedSet(badTypes);
    if (types.length > 0) data.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
    return { allowed: false, reason: 'seLinuxOptions', detail: `${badSetters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}` };
  };
}

function procMount(_meta: KObject, spec: KObject): CheckResult {
  const bad: string[] = [];
  const types: string[] = [];
  for (const c of containers(spec)) {
    const mount = securityContext(c)?.procMount;
    if (typeof mount !== 'string' || mount === 'Default') continue;
    bad.push(nameOf(c));
    types.push(mount);
  }
  if (bad.length === 0) return ALLOWED;
  return {
    allowed: false,
    reason: 'procMount',
    detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`,
  };
}

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const validSeccomp = (t: unknown) => t === 'Localhost' || t === 'RuntimeDefault';

function seccompProfileBaselineAnnotations(meta: KObject, spec: KObject): CheckResult {
  const annotations = isRecord(meta.annotations) ? meta.annotations : {};
  const validValue = (v: string) => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
  const forbidden: string[] = [];
  const look = (key: string) => {
    if (Object.hasOwn(annotations, key) && !validValue(str(annotations[key]))) forbidden.push(`${key}=${goQuote(str(annotations[key]))}`);
  };
  look(SECCOMP_POD_ANNOTATION);
  for (const c of containers(spec)) look(SECCOMP_CONTAINER_ANNOTATION_PREFIX + nameOf(c));
  if (forbidden.length === 0) return ALLOWED;
  const unique = sortedSet(forbidden);
  return { allowed: false, reason: 'seccompProfile', detail: `forbidden ${pluralize('annotation', 'annotations', unique.length)} ${unique.join(', ')}` };
}

/** The seccomp check of both levels: `required` (restricted) also refuses a container that sets none while the pod sets none. */
function seccompProfile(required: boolean, windowsExempt = false): CheckFn {
  return (_meta, spec) => {
    if (windowsExempt && isWindows(spec)) return ALLOWED;
    const badValues: string[] = [];
    const podProfile = podSecurityContext(spec)?.seccompProfile;
    const podBad = isRecord(podProfile) && !validSeccomp(podProfile.type);
    if (podBad) badValues.push(str((podProfile as KObject).type));
    const podSet = isRecord(podProfile) && !podBad;
    const explicit: string[] = [];
    const implicit: string[] = [];
    for (const c of containers(spec)) {
      const profile = securityContext(c)?.seccompProfile;
      if (isRecord(profile)) {
        if (!validSeccomp(profile.type)) {
          explicit.push(nameOf(c));
          badValues.push(str(profile.type));
        }
      } else if (!podSet) implicit.push(nameOf(c));
    }
    const badSetters = setters(podBad, explicit);
    if (badSetters.length > 0) {
      return { allowed: false, reason: 'seccompProfile', detail: `${badSetters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}` };
    }
    if (required && implicit.length > 0) {
      return {
        allowed: false,
        reason: 'seccompProfile',
        detail: `pod or ${pluralize('container', 'containers', implicit.length)} ${joinQuote(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
      };
    }
    return ALLOWED;
  };
}

const SYSCTLS_1_0 = ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start'];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [...SYSCTLS_1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes'];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];
const SYSCTLS_1_37 = [...SYSCTLS_1_32, 'net.ipv4.tcp_slow_start_after_idle', 'net.ipv4.tcp_notsent_lowat'];

function sysctls(allowedList: readonly string[]): CheckFn {
  const allowed = new Set(allowedList);
  return (_meta, spec) => {
    const forbidden = records(podSecurityContext(spec)?.sysctls)
      .map((s) => str(s.name))
      .filter((name) => !allowed.has(name));
    return forbidden.length === 0 ? ALLOWED : { allowed: false, reason: 'forbidden sysctls', detail: forbidden.join(', ') };
  };
}

function windowsHostProcess(_meta: KObject, spec: KObject): CheckResult {
  const hostProcess = (sc: KObject | undefined) => isRecord(sc?.windowsOptions) && sc.windowsOptions.hostProcess === true;
  const bad = containers(spec).filter((c) => hostProcess(securityContext(c))).map(nameOf);
  const badSetters = setters(hostProcess(podSecurityContext(spec)), bad);
  if (badSetters.length === 0) return ALLOWED;
  return { allowed: false, reason: 'hostProcess', detail: `${badSetters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` };
}

// ---- restricted checks

function allowPrivilegeEscalation(windowsExempt: boolean): CheckFn {
  return (_meta, spec) => {
    if (windowsExempt && isWindows(spec)) return ALLOWED;
    const bad = containers(spec)
      .filter((c) => securityContext(c)?.allowPrivilegeEscalation !== false)
      .map(nameOf);
    if (bad.length === 0) return ALLOWED;
    return {
      allowed: false,
      reason: 'allowPrivilegeEscalation != false',
      detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must set securityContext.allowPrivilegeEscalation=false`,
    };
  };
}

function capabilitiesRestricted(windowsExempt: boolean): CheckFn {
  return (_meta, spec) => {
    if (windowsExempt && isWindows(spec)) return ALLOWED;
    const missingDropAll: string[] = [];
    const adding: string[] = [];
    const forbidden: string[] = [];
    for (const c of containers(spec)) {
      const caps = securityContext(c)?.capabilities;
      if (!isRecord(caps)) {
        missingDropAll.push(nameOf(c));
        continue;
      }
      if (!(Array.isArray(caps.drop) && caps.drop.includes('ALL'))) missingDropAll.push(nameOf(c));
      const extra = (Array.isArray(caps.add) ? caps.add : []).map(str).filter((cap) => cap !== 'NET_BIND_SERVICE');
      if (extra.length > 0) {
        adding.push(nameOf(c));
        forbidden.push(...extra);
      }
    }
    const details: string[] = [];
    if (missingDropAll.length > 0) {
      details.push(`${pluralize('container', 'containers', missingDropAll.length)} ${joinQuote(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
    }
    if (adding.length > 0) {
      details.push(`${pluralize('container', 'containers', adding.length)} ${joinQuote(adding)} must not include ${joinQuote(sortedSet(forbidden))} in securityContext.capabilities.add`);
    }
    return details.length === 0 ? ALLOWED : { allowed: false, reason: 'unrestricted capabilities', detail: details.join('; ') };
  };
}

/** Inline volume sources the restricted level allows, and the names of those it refuses (in upstream's order). */
const ALLOWED_VOLUME_SOURCES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret'];
const RESTRICTED_VOLUME_SOURCES: Array<[string, string]> = [
  ['hostPath', 'hostPath'],
  ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['gitRepo', 'gitRepo'],
  ['nfs', 'nfs'],
  ['iscsi', 'iscsi'],
  ['glusterfs', 'glusterfs'],
  ['rbd', 'rbd'],
  ['flexVolume', 'flexVolume'],
  ['cinder', 'cinder'],
  ['cephfs', 'cephfs'],
  ['flocker', 'flocker'],
  ['fc', 'fc'],
  ['azureFile', 'azureFile'],
  ['vsphereVolume', 'vsphereVolume'],
  ['quobyte', 'quobyte'],
  ['azureDisk', 'azureDisk'],
  ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'],
  ['scaleIO', 'scaleIO'],
  ['storageos', 'storageos'],
];

function restrictedVolumes(_meta: KObject, spec: KObject): CheckResult {
  const bad: string[] = [];
  const types: string[] = [];
  for (const v of records(spec.volumes)) {
    if (ALLOWED_VOLUME_SOURCES.some((k) => isRecord(v[k]))) continue;
    bad.push(nameOf(v));
    types.push(RESTRICTED_VOLUME_SOURCES.find(([k]) => isRecord(v[k]))?.[1] ?? 'unknown');
  }
  if (bad.length === 0) return ALLOWED;
  const unique = sortedSet(types);
  return {
    allowed: false,
    reason: 'restricted volume types',
    detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', unique.length)} ${joinQuote(unique)}`,
  };
}

function runAsNonRoot(_meta: KObject, spec: KObject): CheckResult {
  const podValue = podSecurityContext(spec)?.runAsNonRoot;
  const podBad = podValue === false;
  const podNonRoot = podValue === true;
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const value = securityContext(c)?.runAsNonRoot;
    if (typeof value === 'boolean') {
      if (!value) explicit.push(nameOf(c));
    } else if (!podNonRoot) implicit.push(nameOf(c));
  }
  const badSetters = setters(podBad, explicit);
  if (badSetters.length > 0) return { allowed: false, reason: 'runAsNonRoot != true', detail: `${badSetters.join(' and ')} must not set securityContext.runAsNonRoot=false` };
  if (implicit.length > 0) {
    return { allowed: false, reason: 'runAsNonRoot != true', detail: `pod or ${pluralize('container', 'containers', implicit.length)} ${joinQuote(implicit)} must set securityContext.runAsNonRoot=true` };
  }
  return ALLOWED;
}

function runAsUser(_meta: KObject, spec: KObject): CheckResult {
  const bad = containers(spec).filter((c) => securityContext(c)?.runAsUser === 0).map(nameOf);
  const badSetters = setters(podSecurityContext(spec)?.runAsUser === 0, bad);
  return badSetters.length === 0 ? ALLOWED : { allowed: false, reason: 'runAsUser=0', detail: `${badSetters.join(' and ')} must not set runAsUser=0` };
}

/** The check, or nothing for a pod in a user namespace (the 1.35 revisions). */
const unlessUserNamespace =
  (check: CheckFn): CheckFn =>
  (meta, spec) =>
    inUserNamespace(spec) ? ALLOWED : check(meta, spec);

const CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ from: 0, check: appArmorProfile }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ from: 0, check: capabilitiesBaseline }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ from: 0, check: hostNamespaces }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ from: 0, check: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ from: 0, check: hostPorts }] },
  { id: 'hostProbesAndHostLifecycle', level: 'baseline', versions: [{ from: 34, check: hostProbesAndHostLifecycle }] },
  { id: 'privileged', level: 'baseline', versions: [{ from: 0, check: privileged }] },
  {
    id: 'procMount',
    level: 'baseline',
    versions: [
      { from: 0, check: procMount },
      { from: 35, check: unlessUserNamespace(procMount) },
    ],
  },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { from: 0, check: seLinuxOptions(SELINUX_TYPES_1_0) },
      { from: 31, check: seLinuxOptions(SELINUX_TYPES_1_31) },
    ],
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    versions: [
      { from: 0, check: seccompProfileBaselineAnnotations },
      { from: 19, check: seccompProfile(false) },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { from: 0, check: sysctls(SYSCTLS_1_0) },
      { from: 27, check: sysctls(SYSCTLS_1_27) },
      { from: 29, check: sysctls(SYSCTLS_1_29) },
      { from: 32, check: sysctls(SYSCTLS_1_32) },
      { from: 37, check: sysctls(SYSCTLS_1_37) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ from: 0, check: windowsHostProcess }] },
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { from: 8, check: allowPrivilegeEscalation(false) },
      { from: 25, check: allowPrivilegeEscalation(true) },
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { from: 22, check: capabilitiesRestricted(false), overrides: ['capabilities_baseline'] },
      { from: 25, check: capabilitiesRestricted(true), overrides: ['capabilities_baseline'] },
    ],
  },
  { id: 'procMount_restricted', level: 'restricted', versions: [{ from: 35, check: procMount, overrides: ['procMount'] }] },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ from: 0, check: restrictedVolumes, overrides: ['hostPathVolumes'] }] },
  {
    id: 'runAsNonRoot',
    level: 'restricted',
    versions: [
      { from: 0, check: runAsNonRoot },
      { from: 35, check: unlessUserNamespace(runAsNonRoot) },
    ],
  },
  {
    id: 'runAsUser',
    level: 'restricted',
    versions: [
      { from: 23, check: runAsUser },
      { from: 35, check: unlessUserNamespace(runAsUser) },
    ],
  },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { from: 19, check: seccompProfile(true), overrides: ['seccompProfile_baseline'] },
      { from: 25, check: seccompProfile(true, true), overrides: ['seccompProfile_baseline'] },
    ],
  },
];

/**
 * policy.NewEvaluator: the checks of each level at each version, baseline ones first, each level's in the order
 * of their IDs. `emulatedMinor` caps the newest version (latest) at the server's own (kube-apiserver's
 * emulation version): a check newer than the server does not apply.
 */
export class PodSecurityEvaluator {
  private readonly maxMinor: number;
  private readonly byLevel = new Map<string, CheckFn[]>();

  constructor(emulatedMinor: number) {
    const newest = Math.max(...CHECKS.map((c) => c.versions[c.versions.length - 1].from));
    this.maxMinor = Math.min(newest, emulatedMinor);
  }

  /** The results of every check that applies at `lv` (none for privileged). */
  evaluate(lv: LevelVersion, meta: KObject, spec: KObject): CheckResult[] {
    if (lv.level === 'privileged') return [];
    const minor = lv.version.latest ? this.maxMinor : Math.min(lv.version.minor, this.maxMinor);
    const key = `${lv.level}:${minor}`;
    let checks = this.byLevel.get(key);
    if (!checks) this.byLevel.set(key, (checks = checksAt(lv.level, minor)));
    return checks.map((check) => check(meta, spec));
  }
}

/** The checks of `level` at v1.`minor`: each check's newest revision up to it, less those a restricted one overrides. */
function checksAt(level: 'baseline' | 'restricted', minor: number): CheckFn[] {
  const at = (c: Check) => c.versions.filter((v) => v.from <= minor).at(-1);
  const byId = (a: Check, b: Check) => compareGoStrings(a.id, b.id);
  const restricted = level === 'restricted' ? CHECKS.filter((c) => c.level === 'restricted' && at(c)).sort(byId) : [];
  const overridden = new Set(restricted.flatMap((c) => at(c)!.overrides ?? []));
  const baseline = CHECKS.filter((c) => c.level === 'baseline' && at(c) && !overridden.has(c.id)).sort(byId);
  return [...baseline, ...restricted].map((c) => at(c)!.check);
}

/** policy.AggregateCheckResults, as the two messages it gives: the reasons, and the reasons with their details. */
export interface AggregateResult {
  allowed: boolean;
  /** "host ports, privileged" */
  reason: string;
  /** "host ports (8080), privileged (container "a" must not ...)" */
  detail: string;
}

export function aggregate(results: readonly CheckResult[]): AggregateResult {
  const failed = results.filter((r) => !r.allowed);
  const reasons = failed.map((r) => r.reason || 'unknown forbidden reason');
  return {
    allowed: failed.length === 0,
    reason: reasons.join(', '),
    detail: failed.map((r, i) => (r.detail ? `${reasons[i]} (${r.detail})` : reasons[i])).join(', '),
  };
}

/** api.ParseLevel */
export function parseLevel(s: string): Level | undefined {
  return (LEVELS as readonly string[]).includes(s) ? (s as Level) : undefined;
}

/** api.ParseVersion: "latest" or "v1.<minor>". */
export function parseVersion(s: string): Version | undefined {
  if (s === 'latest') return LATEST;
  const m = /^v1\.(0|[1-9][0-9]*)$/.exec(s);
  if (!m) return undefined;
  const minor = Number(m[1]);
  return Number.isSafeInteger(minor) ? v1(minor) : undefined;
}

export const LEVEL_ERROR = 'must be one of privileged, baseline, restricted';
export const VERSION_ERROR = 'must be "latest" or "v1.x"';
