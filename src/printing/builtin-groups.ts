/**
 * Printers of the built-ins of the other groups, as kube-apiserver's printers show them (wide form):
 * Job, CronJob, RoleBinding, ClusterRoleBinding, Ingress, IngressClass, NetworkPolicy,
 * PodDisruptionBudget, PriorityClass, StorageClass, RuntimeClass, EndpointSlice,
 * HorizontalPodAutoscaler (v1), PersistentVolume, PersistentVolumeClaim, CertificateSigningRequest.
 * Column descriptions are the Go types' documentation (go-type-docs.ts).
 */
import type { KObject } from '../api/object.js';
import { humanDuration, timestampMillis, translateTimestampSince } from './duration.js';
import { age, ageColumn, column, docColumn, containerCells, formatLabelSelector, int, list, nameColumn, nameOf, printer, record, str } from './printer-helpers.js';
import type { TableConvertor } from './types.js';


const CONTAINERS = 'Names of each container in the template.';
const IMAGES = 'Images referenced by each container in the template.';

const hasCondition = (status: Record<string, unknown>, type: string) => list(status.conditions).some((c) => c.type === type && c.status === 'True');
const boolPtr = (v: unknown) => (typeof v === 'boolean' ? (v ? 'True' : 'False') : '<unset>');
const intOrString = (v: unknown) => (typeof v === 'number' || typeof v === 'string' ? String(v) : 'N/A');

/** Up to `max` entries joined, `+ N more...` after them, `<unset>` for none (listWithMoreString). */
function listWithMore(items: string[], max = 3): string {
  const shown = items.slice(0, max).join(',');
  if (items.length > max) return `${shown} + ${items.length - max} more...`;
  return shown === '' ? '<unset>' : shown;
}

export const jobPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      column('Status', 'string', 'Status of the job.'),
      docColumn('Completions', 'string', 'batch/v1.JobStatus', 'succeeded'),
      column('Duration', 'string', 'Time required to complete the job.'),
      ageColumn(),
      column('Containers', 'string', CONTAINERS, 1),
      column('Images', 'string', IMAGES, 1),
      docColumn('Selector', 'string', 'batch/v1.JobSpec', 'selector', 1),
    ],
    (o, now) => {
      const spec = record(o.spec);
      const status = record(o.status);
      let state = 'Running';
      if (hasCondition(status, 'Complete')) state = 'Complete';
      else if (hasCondition(status, 'Failed')) state = 'Failed';
      else if (o.metadata?.deletionTimestamp) state = 'Terminating';
      else if (hasCondition(status, 'Suspended')) state = 'Suspended';
      else if (hasCondition(status, 'FailureTarget')) state = 'FailureTarget';
      else if (hasCondition(status, 'SuccessCriteriaMet')) state = 'SuccessCriteriaMet';
      const succeeded = int(status.succeeded);
      let completions: string;
      if (spec.completions !== undefined && spec.completions !== null) completions = `${succeeded}/${int(spec.completions)}`;
      else completions = Number(int(spec.parallelism)) > 1 ? `${succeeded}/1 of ${int(spec.parallelism)}` : `${succeeded}/1`;
      const start = timestampMillis(status.startTime);
      const end = timestampMillis(status.completionTime);
      const duration = start === undefined ? '' : humanDuration((end ?? now) - start);
      const [names, images] = containerCells(record(record(spec.template).spec).containers);
      return [nameOf(o), state, completions, duration, age(o, now), names, images, formatLabelSelector(spec.selector)];
    },
  );

export const cronJobPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      docColumn('Schedule', 'string', 'batch/v1.CronJobSpec', 'schedule'),
      docColumn('Timezone', 'string', 'batch/v1.CronJobSpec', 'timeZone'),
      docColumn('Suspend', 'boolean', 'batch/v1.CronJobSpec', 'suspend'),
      docColumn('Active', 'integer', 'batch/v1.CronJobStatus', 'active'),
      docColumn('Last Schedule', 'string', 'batch/v1.CronJobStatus', 'lastScheduleTime'),
      ageColumn(),
      column('Containers', 'string', CONTAINERS, 1),
      column('Images', 'string', IMAGES, 1),
      docColumn('Selector', 'string', 'batch/v1.JobSpec', 'selector', 1),
    ],
    (o, now) => {
      const spec = record(o.spec);
      const status = record(o.status);
      const jobSpec = record(record(spec.jobTemplate).spec);
      const [names, images] = containerCells(record(record(jobSpec.template).spec).containers);
      const last = status.lastScheduleTime ? translateTimestampSince(status.lastScheduleTime, now) : '<none>';
      return [nameOf(o), str(spec.schedule), str(spec.timeZone) || '<none>', boolPtr(spec.suspend), list(status.active).length, last, age(o, now), names, images, formatLabelSelector(jobSpec.selector)];
    },
  );

export const bindingPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      docColumn('Role', 'string', 'rbac/v1.RoleBinding', 'roleRef'),
      ageColumn(),
      column('Users', 'string', 'Users in the roleBinding', 1),
      column('Groups', 'string', 'Groups in the roleBinding', 1),
      column('ServiceAccounts', 'string', 'ServiceAccounts in the roleBinding', 1),
    ],
    (o, now) => {
      const ref = record(o.roleRef);
      const subjects = list(o.subjects);
      const of = (kind: string) => subjects.filter((s) => s.kind === kind);
      return [
        nameOf(o),
        `${str(ref.kind)}/${str(ref.name)}`,
        age(o, now),
        of('User').map((s) => str(s.name)).join(', '),
        of('Group').map((s) => str(s.name)).join(', '),
        of('ServiceAccount').map((s) => `${str(s.namespace)}:${str(s.name)}`).join(', '),
      ];
    },
  );

function loadBalancerAddresses(status: unknown, wide: boolean): string {
  const ingress = list(record(status).ingress);
  const text = ingress.map((i) => str(i.ip) || str(i.hostname)).filter(Boolean).join(',');
  return !wide && text.length > 16 ? `${text.slice(0, 13)}...` : text;
}

export const ingressPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      column('Class', 'string', 'The name of the IngressClass resource that should be used for additional configuration'),
      column('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule'),
      column('Address', 'string', 'Address is a list containing ingress points for the load-balancer'),
      column('Ports', 'string', 'Ports of TLS configurations that open'),
      ageColumn(),
    ],
    (o, now) => {
      const spec = record(o.spec);
      const rules = list(spec.rules);
      const hosts = rules.map((r) => str(r.host)).filter(Boolean);
      let hostCell = hosts.slice(0, 3).join(',') || '*';
      if (rules.length > 3 && hosts.length >= 3) hostCell += ` + ${rules.length - 3} more...`;
      const ports = list(spec.tls).length > 0 ? '80, 443' : '80';
      return [nameOf(o), str(spec.ingressClassName) || '<none>', hostCell, loadBalancerAddresses(record(o.status).loadBalancer, false), ports, age(o, now)];
    },
  );

export const ingressClassPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      column('Controller', 'string', 'Controller that is responsible for handling this class'),
      column('Parameters', 'string', 'A reference to a resource with additional parameters'),
      ageColumn(),
    ],
    (o, now) => {
      const spec = record(o.spec);
      const p = spec.parameters ? record(spec.parameters) : undefined;
      const parameters = p ? `${str(p.kind)}${p.apiGroup ? `.${str(p.apiGroup)}` : ''}/${str(p.name)}` : '<none>';
      return [nameOf(o), str(spec.controller), parameters, age(o, now)];
    },
  );

export const networkPolicyPrinter = (): TableConvertor =>
  printer([nameColumn(), docColumn('Pod-Selector', 'string', 'networking/v1.NetworkPolicySpec', 'podSelector'), ageColumn()], (o, now) => [
    nameOf(o),
    formatLabelSelector(record(o.spec).podSelector ?? {}),
    age(o, now),
  ]);

export const podDisruptionBudgetPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      column('Min Available', 'string', 'The minimum number of pods that must be available simultaneously.  This can be either an integer or a string specifying a percentage, e.g. "28%".'),
      column('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable simultaneously.  This can be either an integer or a string specifying a percentage, e.g. "28%".'),
      column('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.'),
      ageColumn(),
    ],
    (o, now) => {
      const spec = record(o.spec);
      return [nameOf(o), intOrString(spec.minAvailable), intOrString(spec.maxUnavailable), int(record(o.status).disruptionsAllowed), age(o, now)];
    },
  );

export const priorityClassPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      docColumn('Value', 'integer', 'scheduling/v1.PriorityClass', 'value'),
      docColumn('Global-Default', 'boolean', 'scheduling/v1.PriorityClass', 'globalDefault'),
      ageColumn(),
      docColumn('PreemptionPolicy', 'string', 'scheduling/v1.PriorityClass', 'preemptionPolicy'),
    ],
    (o, now) => [nameOf(o), int(o.value), o.globalDefault === true, age(o, now), str(o.preemptionPolicy) || '<unset>'],
  );

const DEFAULT_CLASS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];

export const storageClassPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      docColumn('Provisioner', 'string', 'storage/v1.StorageClass', 'provisioner'),
      docColumn('ReclaimPolicy', 'string', 'storage/v1.StorageClass', 'reclaimPolicy'),
      docColumn('VolumeBindingMode', 'string', 'storage/v1.StorageClass', 'volumeBindingMode'),
      docColumn('AllowVolumeExpansion', 'string', 'storage/v1.StorageClass', 'allowVolumeExpansion'),
      ageColumn(),
    ],
    (o, now) => {
      const annotations = record(o.metadata?.annotations);
      const isDefault = DEFAULT_CLASS.some((a) => annotations[a] === 'true');
      return [
        nameOf(o) + (isDefault ? ' (default)' : ''),
        str(o.provisioner),
        str(o.reclaimPolicy) || 'Delete',
        str(o.volumeBindingMode) || 'Immediate',
        o.allowVolumeExpansion === true,
        age(o, now),
      ];
    },
  );

export const runtimeClassPrinter = (): TableConvertor =>
  printer([nameColumn(), docColumn('Handler', 'string', 'node/v1.RuntimeClass', 'handler'), ageColumn()], (o, now) => [nameOf(o), str(o.handler), age(o, now)]);

export const endpointSlicePrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      docColumn('AddressType', 'string', 'discovery/v1.EndpointSlice', 'addressType'),
      docColumn('Ports', 'string', 'discovery/v1.EndpointSlice', 'ports'),
      docColumn('Endpoints', 'string', 'discovery/v1.EndpointSlice', 'endpoints'),
      ageColumn(),
    ],
    (o, now) => {
      const ports = list(o.ports).map((p) => (typeof p.port === 'number' ? String(p.port) : typeof p.name === 'string' ? p.name : '*'));
      const addresses = list(o.endpoints).flatMap((e) => (Array.isArray(e.addresses) ? e.addresses.map(String) : []));
      return [nameOf(o), str(o.addressType), listWithMore(ports), listWithMore(addresses), age(o, now)];
    },
  );

export const horizontalPodAutoscalerPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      docColumn('Reference', 'string', 'autoscaling/v1.HorizontalPodAutoscalerSpec', 'scaleTargetRef'),
      column('Targets', 'string', 'metrics: the metrics that this HPA targets, and their current values'),
      docColumn('MinPods', 'string', 'autoscaling/v1.HorizontalPodAutoscalerSpec', 'minReplicas'),
      docColumn('MaxPods', 'integer', 'autoscaling/v1.HorizontalPodAutoscalerSpec', 'maxReplicas'),
      docColumn('Replicas', 'integer', 'autoscaling/v1.HorizontalPodAutoscalerStatus', 'currentReplicas'),
      ageColumn(),
    ],
    (o, now) => {
      const spec = record(o.spec);
      const status = record(o.status);
      const ref = record(spec.scaleTargetRef);
      let targets: string;
      if (Array.isArray(spec.metrics)) targets = formatHPAMetrics(list(spec.metrics), list(status.currentMetrics));
      else {
        const target = spec.targetCPUUtilizationPercentage;
        const current = status.currentCPUUtilizationPercentage;
        targets = typeof target === 'number' ? `cpu: ${typeof current === 'number' ? `${current}%` : '<unknown>'}/${target}%` : '<none>';
      }
      const min = typeof spec.minReplicas === 'number' ? spec.minReplicas : '<unset>';
      return [nameOf(o), `${str(ref.kind)}/${str(ref.name)}`, targets, String(min), int(spec.maxReplicas), int(status.currentReplicas), age(o, now)];
    },
  );

/** formatHPAMetrics: each autoscaling/v2 metric as `current/target` (two at most, then `+ N more...`). */
function formatHPAMetrics(specs: KObject[], statuses: KObject[]): string {
  if (specs.length === 0) return '<none>';
  const quantity = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '<unknown>');
  const cells = specs.map((m, i) => {
    const type = str(m.type);
    const current = record(statuses[i]);
    const source = record(m[type ? type[0].toLowerCase() + type.slice(1) : '']);
    const now = record(record(current[type ? type[0].toLowerCase() + type.slice(1) : '']).current);
    const target = record(source.target);
    if (target.type === 'Utilization') {
      const value = typeof now.averageUtilization === 'number' ? `${now.averageUtilization}%` : '<unknown>';
      const name = type === 'ContainerResource' ? `${str(source.name)} of container "${str(source.container)}"` : str(source.name);
      return `${name}: ${value}/${int(target.averageUtilization)}%`;
    }
    const wanted = target.type === 'AverageValue' ? target.averageValue : target.value;
    const have = target.type === 'AverageValue' ? now.averageValue : now.value;
    const prefix = type === 'Resource' || type === 'ContainerResource' ? `${str(source.name)}: ` : '';
    return `${prefix}${quantity(have)}/${quantity(wanted)}${target.type === 'AverageValue' && type !== 'Resource' ? ' (avg)' : ''}`;
  });
  return cells.length > 2 ? `${cells.slice(0, 2).join(', ')} + ${cells.length - 2} more...` : cells.join(', ');
}

const accessModes = (modes: unknown) =>
  (Array.isArray(modes) ? modes : [])
    .map((m) => ({ ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' })[String(m)] ?? '')
    .filter(Boolean)
    .join(',');

export const persistentVolumePrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      docColumn('Capacity', 'string', 'core/v1.PersistentVolumeSpec', 'capacity'),
      docColumn('Access Modes', 'string', 'core/v1.PersistentVolumeSpec', 'accessModes'),
      docColumn('Reclaim Policy', 'string', 'core/v1.PersistentVolumeSpec', 'persistentVolumeReclaimPolicy'),
      docColumn('Status', 'string', 'core/v1.PersistentVolumeStatus', 'phase'),
      docColumn('Claim', 'string', 'core/v1.PersistentVolumeSpec', 'claimRef'),
      docColumn('StorageClass', 'string', 'core/v1.PersistentVolumeSpec', 'storageClassName'),
      docColumn('VolumeAttributesClass', 'string', 'core/v1.PersistentVolumeSpec', 'volumeAttributesClassName'),
      docColumn('Reason', 'string', 'core/v1.PersistentVolumeStatus', 'reason'),
      ageColumn(),
      docColumn('VolumeMode', 'string', 'core/v1.PersistentVolumeSpec', 'volumeMode', 1),
    ],
    (o, now) => {
      const spec = record(o.spec);
      const status = record(o.status);
      const claim = spec.claimRef ? `${str(record(spec.claimRef).namespace)}/${str(record(spec.claimRef).name)}` : '';
      return [
        nameOf(o),
        str(record(spec.capacity).storage),
        accessModes(spec.accessModes),
        str(spec.persistentVolumeReclaimPolicy),
        str(status.phase),
        claim,
        str(spec.storageClassName),
        str(spec.volumeAttributesClassName) || '<unset>',
        str(status.reason),
        age(o, now),
        str(spec.volumeMode) || '<unset>',
      ];
    },
  );

export const persistentVolumeClaimPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      docColumn('Status', 'string', 'core/v1.PersistentVolumeClaimStatus', 'phase'),
      docColumn('Volume', 'string', 'core/v1.PersistentVolumeClaimSpec', 'volumeName'),
      docColumn('Capacity', 'string', 'core/v1.PersistentVolumeClaimStatus', 'capacity'),
      docColumn('Access Modes', 'string', 'core/v1.PersistentVolumeClaimStatus', 'accessModes'),
      docColumn('StorageClass', 'string', 'core/v1.PersistentVolumeClaimSpec', 'storageClassName'),
      docColumn('VolumeAttributesClass', 'string', 'core/v1.PersistentVolumeClaimSpec', 'volumeAttributesClassName'),
      ageColumn(),
      docColumn('VolumeMode', 'string', 'core/v1.PersistentVolumeClaimSpec', 'volumeMode', 1),
    ],
    (o, now) => {
      const spec = record(o.spec);
      const status = record(o.status);
      const phase = o.metadata?.deletionTimestamp ? 'Terminating' : str(status.phase);
      const bound = Boolean(spec.volumeName);
      return [
        nameOf(o),
        phase,
        str(spec.volumeName),
        bound ? str(record(status.capacity).storage) : '',
        bound ? accessModes(status.accessModes) : '',
        str(spec.storageClassName),
        str(spec.volumeAttributesClassName) || '<unset>',
        age(o, now),
        str(spec.volumeMode) || '<unset>',
      ];
    },
  );

export const certificateSigningRequestPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      ageColumn(),
      docColumn('SignerName', 'string', 'certificates/v1.CertificateSigningRequestSpec', 'signerName'),
      docColumn('Requestor', 'string', 'certificates/v1.CertificateSigningRequestSpec', 'username'),
      docColumn('RequestedDuration', 'string', 'certificates/v1.CertificateSigningRequestSpec', 'expirationSeconds'),
      column('Condition', 'string', 'Status of the certificate signing request'),
    ],
    (o: KObject, now) => {
      const spec = record(o.spec);
      const status = record(o.status);
      const conditions = list(status.conditions).map((c) => str(c.type));
      let condition = conditions.length > 0 ? conditions.join(',') : 'Pending';
      if (status.certificate) condition += ',Issued';
      const seconds = typeof spec.expirationSeconds === 'number' ? humanDuration(spec.expirationSeconds * 1000) : '<none>';
      return [nameOf(o), age(o, now), str(spec.signerName), str(spec.username), seconds, condition];
    },
  );

export const flowSchemaPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      docColumn('PriorityLevel', 'string', 'flowcontrol/v1.PriorityLevelConfigurationReference', 'name'),
      docColumn('MatchingPrecedence', 'string', 'flowcontrol/v1.FlowSchemaSpec', 'matchingPrecedence'),
      docColumn('DistinguisherMethod', 'string', 'flowcontrol/v1.FlowSchemaSpec', 'distinguisherMethod'),
      ageColumn(),
      docColumn('MissingPL', 'string', 'flowcontrol/v1.FlowSchemaStatus', 'conditions'),
    ],
    (o, now) => {
      const spec = record(o.spec);
      const dangling = list(record(o.status).conditions).find((c) => c.type === 'Dangling');
      const method = spec.distinguisherMethod ? str(record(spec.distinguisherMethod).type) : '<none>';
      return [nameOf(o), str(record(spec.priorityLevelConfiguration).name), int(spec.matchingPrecedence), method, age(o, now), dangling ? str(dangling.status) : '?'];
    },
  );

export const priorityLevelPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      docColumn('Type', 'string', 'flowcontrol/v1.PriorityLevelConfigurationSpec', 'type'),
      docColumn('NominalConcurrencyShares', 'string', 'flowcontrol/v1.LimitedPriorityLevelConfiguration', 'nominalConcurrencyShares'),
      docColumn('Queues', 'string', 'flowcontrol/v1.QueuingConfiguration', 'queues'),
      docColumn('HandSize', 'string', 'flowcontrol/v1.QueuingConfiguration', 'handSize'),
      docColumn('QueueLengthLimit', 'string', 'flowcontrol/v1.QueuingConfiguration', 'queueLengthLimit'),
      ageColumn(),
    ],
    (o, now) => {
      const spec = record(o.spec);
      const limited = spec.limited ? record(spec.limited) : undefined;
      const queuing = limited && record(limited.limitResponse).queuing ? record(record(limited.limitResponse).queuing) : undefined;
      const cell = (v: unknown) => (v === undefined ? '<none>' : int(v));
      return [
        nameOf(o),
        str(spec.type),
        limited ? int(limited.nominalConcurrencyShares) : '<none>',
        queuing ? cell(queuing.queues) : '<none>',
        queuing ? cell(queuing.handSize) : '<none>',
        queuing ? cell(queuing.queueLengthLimit) : '<none>',
        age(o, now),
      ];
    },
  );

const count = (v: unknown) => (Array.isArray(v) ? v.length : 0);

export const webhookConfigurationPrinter = (): TableConvertor =>
  printer(
    [nameColumn(), column('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'), ageColumn()],
    (o, now) => [nameOf(o), count(o.webhooks), age(o, now)],
  );

export const admissionPolicyPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      column('Validations', 'integer', 'Validations indicates the number of validation rules defined in this configuration'),
      column('ParamKind', 'string', 'ParamKind specifies the kind of resources used to parameterize this policy'),
      ageColumn(),
    ],
    (o, now) => {
      const spec = record(o.spec);
      const kind = record(spec.paramKind);
      return [nameOf(o), count(spec.validations ?? spec.mutations), spec.paramKind ? `${str(kind.apiVersion)}/${str(kind.kind)}` : '<unset>', age(o, now)];
    },
  );

export const admissionPolicyBindingPrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      column('PolicyName', 'string', 'PolicyName indicates the policy definition which the policy binding binded to'),
      column('ParamRef', 'string', 'ParamRef indicates the param resource which sets the configration param'),
      ageColumn(),
    ],
    (o, now) => {
      const spec = record(o.spec);
      const ref = record(spec.paramRef);
      const paramRef = spec.paramRef ? `${ref.namespace ? `${str(ref.namespace)}/` : ''}${ref.name ? str(ref.name) : '*'}` : '<unset>';
      return [nameOf(o), str(spec.policyName), paramRef, age(o, now)];
    },
  );

/** kube-aggregator's APIService columns: where it is served (Local, or its service) and whether it is available. */
export const apiServicePrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      column('Service', 'string', 'The reference to the service that hosts this API endpoint.'),
      column('Available', 'string', 'Whether this service is available.'),
      ageColumn(),
    ],
    (o, now) => {
      const service = record(record(o.spec).service);
      const where = o.spec?.service ? `${str(service.namespace)}/${str(service.name)}` : 'Local';
      const available = (Array.isArray(o.status?.conditions) ? o.status.conditions : []).find((c: KObject) => c?.type === 'Available');
      const cell = !available ? 'Unknown' : available.status === 'True' ? 'True' : `${str(available.status)} (${str(available.reason)})`;
      return [nameOf(o), where, cell, age(o, now)];
    },
  );
