/**
 * The parts of upstream's ValidatePodSpec and ValidateService that users meet most, with their
 * messages and in their order: volumes (one source, unique DNS-label names); containers present,
 * named (DNS labels, unique across init and regular containers) and given an image; container ports
 * in range with a known protocol; env names and valueFrom; volume mounts naming a volume at a unique
 * path; resource quantities (none negative, requests within limits); probes with one handler;
 * ephemeral containers' allow-list; restart and DNS policies. A Service's type, ports (required
 * unless headless or ExternalName, named when several, unique, in range) and externalName.
 */
import { field, type FieldError } from '../../machinery/field-errors.js';
import { inclusiveRangeError, isDNS1123Label } from '../../machinery/validation.js';
import { isRecord, records, type JsonRecord } from '../../util/json-object.js';
import { parseQuantity, type Quantity } from '../../schema/cel/quantity.js';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const validPort = (p: unknown) => typeof p === 'number' && Number.isInteger(p) && p >= 1 && p <= 65535;

function validateContainerPorts(ports: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  records(ports).forEach((port, i) => {
    const p = `${path}[${i}]`;
    if (port.containerPort === undefined || port.containerPort === null || port.containerPort === 0) errs.push(field.required(`${p}.containerPort`, ''));
    else if (!validPort(port.containerPort)) errs.push(field.invalid(`${p}.containerPort`, port.containerPort, inclusiveRangeError(1, 65535)));
    if (port.hostPort !== undefined && port.hostPort !== null && port.hostPort !== 0 && !validPort(port.hostPort)) {
      errs.push(field.invalid(`${p}.hostPort`, port.hostPort, inclusiveRangeError(1, 65535)));
    }
    if (port.protocol !== undefined && !PROTOCOLS.includes(String(port.protocol))) errs.push(field.notSupported(`${p}.protocol`, port.protocol, PROTOCOLS));
  });
  return errs;
}

/** ValidatePodSpec's checks users meet most, for a pod's spec at `path` (`spec`, `spec.template.spec`), in upstream's order. */
export function validatePodSpecContainers(spec: unknown, path: string): FieldError[] {
  const s = isRecord(spec) ? spec : {};
  const errs: FieldError[] = [];
  const volumes = validateVolumes(s.volumes, `${path}.volumes`, errs);
  const seen = new Set<string>();
  const check = (list: JsonRecord[], listPath: string, probes: boolean) =>
    list.forEach((c, i) => {
      const p = `${listPath}[${i}]`;
      const name = typeof c.name === 'string' ? c.name : '';
      if (!name) errs.push(field.required(`${p}.name`, ''));
      else for (const msg of isDNS1123Label(name)) errs.push(field.invalid(`${p}.name`, name, msg));
      if (typeof c.image !== 'string' || c.image.trim() === '') errs.push(field.required(`${p}.image`, ''));
      errs.push(...validateContainerPorts(c.ports, `${p}.ports`));
      errs.push(...validateEnv(c.env, `${p}.env`));
      errs.push(...validateVolumeMounts(c.volumeMounts, volumes, `${p}.volumeMounts`));
      if (c.imagePullPolicy !== undefined && !PULL_POLICIES.includes(String(c.imagePullPolicy))) errs.push(field.notSupported(`${p}.imagePullPolicy`, c.imagePullPolicy, PULL_POLICIES));
      errs.push(...validateResources(c.resources, `${p}.resources`));
      if (name && seen.has(name)) errs.push(field.duplicate(`${p}.name`, name));
      if (name) seen.add(name);
      if (probes) for (const probe of PROBES) if (c[probe] !== undefined && c[probe] !== null) errs.push(...validateProbe(c[probe], `${p}.${probe}`, probe));
    });
  const containers = records(s.containers);
  if (containers.length === 0) errs.push(field.required(`${path}.containers`, ''));
  check(containers, `${path}.containers`, true);
  check(records(s.initContainers), `${path}.initContainers`, false);
  const ephemeral = records(s.ephemeralContainers);
  check(ephemeral, `${path}.ephemeralContainers`, false);
  errs.push(...ephemeralContainerErrors(ephemeral, [...records(s.initContainers), ...containers], `${path}.ephemeralContainers`));
  if (s.restartPolicy !== undefined && !RESTART_POLICIES.includes(String(s.restartPolicy))) errs.push(field.notSupported(`${path}.restartPolicy`, s.restartPolicy, RESTART_POLICIES));
  if (s.dnsPolicy !== undefined && !DNS_POLICIES.includes(String(s.dnsPolicy))) errs.push(field.notSupported(`${path}.dnsPolicy`, s.dnsPolicy, DNS_POLICIES));
  return errs;
}

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'] as const;

/** The volume sources, in the order upstream looks for them (the first found is the volume's type). */
const VOLUME_SOURCES = [
  'emptyDir', 'hostPath', 'gitRepo', 'gcePersistentDisk', 'awsElasticBlockStore', 'secret', 'nfs', 'iscsi', 'glusterfs', 'flocker',
  'persistentVolumeClaim', 'rbd', 'cinder', 'cephfs', 'quobyte', 'downwardAPI', 'fc', 'flexVolume', 'configMap', 'azureFile',
  'vsphereVolume', 'photonPersistentDisk', 'portworxVolume', 'azureDisk', 'storageos', 'projected', 'scaleIO', 'csi', 'ephemeral', 'image',
];

/** ValidateVolumes: each volume one source and a unique DNS-label name; the names of the valid ones (what mounts may name). */
function validateVolumes(volumes: unknown, path: string, errs: FieldError[]): Set<string> {
  const valid = new Set<string>();
  records(volumes).forEach((v, i) => {
    const p = `${path}[${i}]`;
    const own: FieldError[] = [];
    const sources = VOLUME_SOURCES.filter((k) => v[k] !== undefined && v[k] !== null);
    if (sources.length === 0) own.push(field.required(p, 'must specify a volume type'));
    // upstream's path for a second downwardAPI source is spelt `downwarAPI`.
    for (const extra of sources.slice(1)) own.push(field.forbidden(`${p}.${extra === 'downwardAPI' ? 'downwarAPI' : extra}`, 'may not specify more than 1 volume type'));
    const name = typeof v.name === 'string' ? v.name : '';
    if (!name) own.push(field.required(`${p}.name`, ''));
    else for (const msg of isDNS1123Label(name)) own.push(field.invalid(`${p}.name`, name, msg));
    if (own.length === 0 && valid.has(name)) own.push(field.duplicate(`${p}.name`, name));
    if (own.length === 0) valid.add(name);
    errs.push(...own);
  });
  return valid;
}

/** ValidateVolumeMounts: a mount names a (valid) volume and a unique path; a subPath stays relative and below. */
function validateVolumeMounts(mounts: unknown, volumes: Set<string>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const paths = new Set<string>();
  records(mounts).forEach((m, i) => {
    const p = `${path}[${i}]`;
    const name = typeof m.name === 'string' ? m.name : '';
    const mountPath = typeof m.mountPath === 'string' ? m.mountPath : '';
    if (!name) errs.push(field.required(`${p}.name`, ''));
    if (!volumes.has(name)) errs.push(field.notFound(`${p}.name`, name));
    if (!mountPath) errs.push(field.required(`${p}.mountPath`, ''));
    if (paths.has(mountPath)) errs.push(field.invalid(`${p}.mountPath`, mountPath, 'must be unique'));
    paths.add(mountPath);
    // upstream reports the subPath rules without the mount's index.
    for (const key of ['subPath', 'subPathExpr']) {
      const sub = typeof m[key] === 'string' ? (m[key] as string) : '';
      if (!sub) continue;
      if (key === 'subPathExpr' && m.subPath) errs.push(field.invalid(`${p}.subPathExpr`, sub, 'subPathExpr and subPath are mutually exclusive'));
      if (sub.startsWith('/')) errs.push(field.invalid(`${path}.${key}`, sub, 'must be a relative path'));
      if (sub.split('/').includes('..')) errs.push(field.invalid(`${path}.${key}`, sub, "must not contain '..'"));
    }
  });
  return errs;
}

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const ENV_NAME_MESSAGE =
  "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')";
const ENV_SOURCES = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'];

/** ValidateEnv: a valid name, and at most one of value and one valueFrom source. */
function validateEnv(env: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  records(env).forEach((e, i) => {
    const p = `${path}[${i}]`;
    const name = typeof e.name === 'string' ? e.name : '';
    if (!name) errs.push(field.required(`${p}.name`, ''));
    else if (!ENV_NAME.test(name)) errs.push(field.invalid(`${p}.name`, name, ENV_NAME_MESSAGE));
    else if (name === '.' || name === '..' || name.startsWith('..')) {
      errs.push(field.invalid(`${p}.name`, name, name === '.' ? "must not be '.'" : name === '..' ? "must not be '..'" : "must not start with '..'"));
    }
    if (!isRecord(e.valueFrom)) return;
    const sources = ENV_SOURCES.filter((k) => isRecord(e.valueFrom) && e.valueFrom[k] !== undefined && e.valueFrom[k] !== null);
    const at = `${p}.valueFrom`;
    if (sources.length === 0) errs.push(field.invalid(at, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
    else if (typeof e.value === 'string' && e.value !== '') errs.push(field.invalid(at, '', 'may not be specified when `value` is not empty'));
    else if (sources.length > 1) errs.push(field.invalid(at, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}

/** The resources whose request may be below their limit (the others must be equal). */
const OVERCOMMITTABLE = (name: string) => !name.startsWith('hugepages-') && (!name.includes('/') || name.startsWith('kubernetes.io/') || name.includes('.kubernetes.io/'));

/** ValidateResourceRequirements' quantity checks: none negative, a request no more than its limit. */
function validateResources(resources: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isRecord(resources)) return errs;
  const quantities = (which: 'limits' | 'requests') => {
    const out = new Map<string, { raw: string; q: Quantity }>();
    const values = isRecord(resources[which]) ? resources[which] : {};
    for (const [name, raw] of Object.entries(values)) {
      const q = typeof raw === 'string' || typeof raw === 'number' ? parseQuantity(String(raw)) : undefined;
      if (!q) continue;
      if (q.sign() < 0) errs.push(field.invalid(`${path}.${which}[${name}]`, String(raw), 'must be greater than or equal to 0'));
      else out.set(name, { raw: String(raw), q });
    }
    return out;
  };
  const limits = quantities('limits');
  const requests = quantities('requests');
  for (const [name, request] of requests) {
    const limit = limits.get(name);
    if (OVERCOMMITTABLE(name)) {
      if (limit && request.q.cmp(limit.q) > 0) errs.push(field.invalid(`${path}.requests`, request.raw, `must be less than or equal to ${name} limit of ${limit.raw}`));
    } else if (!limit) errs.push(field.required(`${path}.limits`, 'Limit must be set for non overcommitable resources'));
    else if (request.q.cmp(limit.q) !== 0) errs.push(field.invalid(`${path}.requests[${name}]`, request.raw, `must be equal to ${name} limit of ${limit.raw}`));
  }
  return errs;
}

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'];
const PROBE_NUMBERS = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'];

/** validateProbe: one handler, no negative numbers, successThreshold 1 for liveness and startup probes. */
function validateProbe(probe: unknown, path: string, kind: (typeof PROBES)[number]): FieldError[] {
  if (!isRecord(probe)) return [];
  const errs: FieldError[] = [];
  const handlers = PROBE_HANDLERS.filter((h) => probe[h] !== undefined && probe[h] !== null);
  if (handlers.length === 0) errs.push(field.required(path, 'must specify a handler type'));
  for (const extra of handlers.slice(1)) errs.push(field.forbidden(`${path}.${extra}`, 'may not specify more than 1 handler type'));
  for (const key of PROBE_NUMBERS) if (typeof probe[key] === 'number' && probe[key] < 0) errs.push(field.invalid(`${path}.${key}`, probe[key], 'must be greater than or equal to 0'));
  if (kind !== 'readinessProbe' && typeof probe.successThreshold === 'number' && probe.successThreshold !== 1) {
    errs.push(field.invalid(`${path}.successThreshold`, probe.successThreshold, 'must be 1'));
  }
  return errs;
}

/** The fields of EphemeralContainerCommon, in their Go order; those an ephemeral container may set are marked. */
const EPHEMERAL_FIELDS: ReadonlyArray<readonly [string, boolean]> = [
  ['name', true], ['image', true], ['command', true], ['args', true], ['workingDir', true], ['ports', false], ['envFrom', true],
  ['env', true], ['resources', false], ['resizePolicy', false], ['restartPolicy', false], ['restartPolicyRules', false],
  ['volumeMounts', true], ['volumeDevices', true], ['livenessProbe', false], ['readinessProbe', false], ['startupProbe', false],
  ['lifecycle', false], ['terminationMessagePath', true], ['terminationMessagePolicy', true], ['imagePullPolicy', true],
  ['securityContext', true], ['stdin', true], ['stdinOnce', true], ['tty', true],
];
const NOT_FOR_EPHEMERAL = 'cannot be set for an Ephemeral Container';
const isZeroScalar = (v: unknown) => v === undefined || v === null || v === false || v === '' || v === 0;
/** Go's IsZero on the decoded field: a struct whose fields are all zero (`resources: {}`, as kubectl debug sends) is zero. */
const isZero = (v: unknown) => isZeroScalar(v) || (isRecord(v) && Object.values(v).every(isZeroScalar));

/** validateEphemeralContainers' own rules: a target among the pod's containers, and only the fields its allow-list names. */
function ephemeralContainerErrors(ephemeral: JsonRecord[], others: JsonRecord[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set(others.map((c) => c.name));
  ephemeral.forEach((c, i) => {
    const p = `${path}[${i}]`;
    const target = c.targetContainerName;
    if (typeof target === 'string' && target !== '' && !names.has(target)) errs.push(field.notFound(`${p}.targetContainerName`, target));
    for (const [name, allowed] of EPHEMERAL_FIELDS) if (!allowed && !isZero(c[name])) errs.push(field.forbidden(`${p}.${name}`, NOT_FOR_EPHEMERAL));
    records(c.volumeMounts).forEach((m, j) => {
      for (const key of ['subPath', 'subPathExpr']) if (!isZero(m[key])) errs.push(field.forbidden(`${p}.volumeMounts[${j}].${key}`, NOT_FOR_EPHEMERAL));
    });
  });
  return errs;
}

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

/** ValidateService's checks of type, ports and externalName. */
export function validateServiceSpec(spec: unknown): FieldError[] {
  const s = isRecord(spec) ? spec : {};
  const errs: FieldError[] = [];
  const type = s.type ?? 'ClusterIP';
  if (!SERVICE_TYPES.includes(String(type))) errs.push(field.notSupported('spec.type', type, SERVICE_TYPES));
  const ports = records(s.ports);
  const headless = s.clusterIP === 'None';
  if (ports.length === 0 && !headless && type !== 'ExternalName') errs.push(field.required('spec.ports', ''));
  if (type === 'ExternalName' && !s.externalName) errs.push(field.required('spec.externalName', ''));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const p = `spec.ports[${i}]`;
    const name = typeof port.name === 'string' ? port.name : '';
    if (ports.length > 1 && !name) errs.push(field.required(`${p}.name`, ''));
    else if (name) {
      for (const msg of isDNS1123Label(name)) errs.push(field.invalid(`${p}.name`, name, msg));
      if (names.has(name)) errs.push(field.duplicate(`${p}.name`, name));
      names.add(name);
    }
    if (!validPort(port.port)) errs.push(field.invalid(`${p}.port`, port.port ?? 0, inclusiveRangeError(1, 65535)));
    if (port.protocol !== undefined && !PROTOCOLS.includes(String(port.protocol))) errs.push(field.notSupported(`${p}.protocol`, port.protocol, PROTOCOLS));
    if (typeof port.targetPort === 'number' && !validPort(port.targetPort)) errs.push(field.invalid(`${p}.targetPort`, port.targetPort, inclusiveRangeError(1, 65535)));
  });
  return errs;
}
