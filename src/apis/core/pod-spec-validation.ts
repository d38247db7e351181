/**
 * The parts of upstream's ValidatePodSpec and ValidateService that users meet most, with their
 * messages: containers present, named (DNS labels, unique across init and regular containers) and
 * given an image; container ports in range with a known protocol; a Service's type, ports (required
 * unless headless or ExternalName, named when several, unique, in range) and externalName.
 */
import { field, type FieldError } from '../../machinery/field-errors.js';
import { inclusiveRangeError, isDNS1123Label } from '../../machinery/validation.js';
import { isRecord, records, type JsonRecord } from '../../util/json-object.js';

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

/** ValidatePodSpec's container checks, for a pod's spec at `path` (`spec`, `spec.template.spec`). */
export function validatePodSpecContainers(spec: unknown, path: string): FieldError[] {
  const s = isRecord(spec) ? spec : {};
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  const check = (list: JsonRecord[], listPath: string) =>
    list.forEach((c, i) => {
      const p = `${listPath}[${i}]`;
      const name = typeof c.name === 'string' ? c.name : '';
      if (!name) errs.push(field.required(`${p}.name`, ''));
      else {
        for (const msg of isDNS1123Label(name)) errs.push(field.invalid(`${p}.name`, name, msg));
        if (seen.has(name)) errs.push(field.duplicate(`${p}.name`, name));
        seen.add(name);
      }
      if (typeof c.image !== 'string' || c.image.trim() === '') errs.push(field.required(`${p}.image`, ''));
      errs.push(...validateContainerPorts(c.ports, `${p}.ports`));
    });
  const containers = records(s.containers);
  check(records(s.initContainers), `${path}.initContainers`);
  if (containers.length === 0) errs.push(field.required(`${path}.containers`, ''));
  check(containers, `${path}.containers`);
  const ephemeral = records(s.ephemeralContainers);
  check(ephemeral, `${path}.ephemeralContainers`);
  errs.push(...ephemeralContainerErrors(ephemeral, [...records(s.initContainers), ...containers], `${path}.ephemeralContainers`));
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
