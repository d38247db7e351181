/**
 * The built-in resources kapi serves as plain stored objects, with upstream's
 * names, scopes, short names, categories and verbs, so that generic tools and
 * test frameworks find what they expect. No controllers act on them.
 */
import { goQuote } from '../machinery/go-text.js';
import { errors } from '../machinery/status.js';
import type { ScaleConfig } from '../api/serving.js';
import type { DecodeOptions, ResourceNames, Strategy } from '../registry/types.js';
import type { KObject } from '../api/object.js';
import type { SubresourceInfo } from '../registry/registry.js';
import { eventsV1ToCore, eventToEventsV1 } from './events/convert.js';
import { eventStrategy } from './events/validation.js';
import { workloadValidation } from './apps/validation.js';
import { validatePodSpecContainers } from './core/pod-spec-validation.js';
import { hpaToV1, hpaToV2 } from './autoscaling/convert.js';
import { findDuplicateFields } from '../schema/index.js';
import { checkTypedObject } from '../schema/builtin/typed-json.js';
import { builtinDefaulter } from './builtin-defaults.js';
import { POD_SUBRESOURCES, podStrategy } from './core/pods.js';
import { serviceStrategy, type ServiceRanges } from './core/services.js';
import { rbacStrategy } from './rbac/validation.js';
import { apiServiceStrategy } from './apiregistration/apiservice.js';
import { admissionPolicyStrategy, mutatingPolicyStrategy, webhookConfigurationStrategy } from './admissionregistration/validation.js';
import { jobStrategy } from './batch/jobs.js';
import { configMapStrategy, secretStrategy } from './core/config.js';
import { field } from '../machinery/field-errors.js';
import { nameIsDNS1035Label, validatePathSegmentName } from '../machinery/validation.js';

export interface BuiltinResource {
  version: string;
  names: ResourceNames;
  verbs: string[];
  status?: boolean;
  /** The /finalize subresource (namespaces). */
  finalize?: boolean;
  /** The /scale subresource's paths (workloads). */
  scale?: ScaleConfig;
  /** Its other subresources (a pod's log, exec, eviction...). */
  subresources?: readonly SubresourceInfo[];
  strategy?: Strategy;
  /**
   * The strategy, for a resource whose strategy reads other objects (a Service's addresses taken, a Pod's
   * priority classes and service account): made from `strategy` once the server's context is there.
   */
  strategyIn?: (base: Strategy, context: BuiltinContext, ownObjects: () => Iterable<KObject>) => Strategy;
  /** The resources (group, resource) that strategy reads: their watch caches are filled from the start. */
  reads?: ReadonlyArray<readonly [string, string]>;
  /** Served from another resource's store, converted both ways (events.k8s.io Events are core Events). */
  storedAs?: StoredAs;
}

/** What some built-in strategies read beyond their own objects: the server's settings, and other resources' watch caches. */
export interface BuiltinContext {
  ranges: ServiceRanges;
  /** The stored objects of a resource (v1), as its watch cache has them. */
  objects(group: string, resource: string): KObject[];
  /** One stored object of a resource (v1), from its watch cache (undefined: none, or not cached yet). */
  object(group: string, resource: string, namespace: string | undefined, name: string): KObject | undefined;
}

export interface StoredAs {
  group: string;
  /** The stored resource's version (default: this one's). */
  version?: string;
  resource: string;
  /** A stored object in this resource's version. */
  toVersion(stored: KObject): KObject;
  /** An object of this resource's version in the storage form. */
  toStorage(obj: KObject): KObject;
}

/** The workloads' /scale: spec.replicas, status.replicas, and their LabelSelector. */
const WORKLOAD_SCALE: ScaleConfig = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' };

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const NO_COLLECTION = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

function res(
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
  extra: { shortNames?: string[]; categories?: string[]; verbs?: string[]; status?: boolean; scale?: ScaleConfig; subresources?: readonly SubresourceInfo[]; strategy?: Strategy; strategyIn?: BuiltinResource['strategyIn']; reads?: BuiltinResource['reads']; storedAs?: StoredAs } = {},
): BuiltinResource {
  return {
    version,
    names: {
      group,
      resource,
      singular: kind.toLowerCase(),
      kind,
      listKind: `${kind}List`,
      namespaced,
      shortNames: extra.shortNames,
      categories: extra.categories,
    },
    verbs: extra.verbs ?? ALL_VERBS,
    status: extra.status,
    scale: extra.scale,
    subresources: extra.subresources,
    strategy: extra.strategy,
    strategyIn: extra.strategyIn,
    reads: extra.reads,
    storedAs: extra.storedAs,
  };
}

/** Workloads keep metadata.generation moving with their spec, as upstream's strategies do. */
const workload: Strategy = { generation: 'spec', resetFieldsOnMainEndpoint: ['status'], allowUnconditionalUpdate: true };
const plain: Strategy = { allowUnconditionalUpdate: true };
/** Workloads with replicas: SetDefaults_Deployment (and the others') replicas = 1 when unset. */
const replicated: Strategy = {
  ...workload,
  defaulting(obj) {
    if (obj.spec && typeof obj.spec === 'object' && (obj.spec.replicas === undefined || obj.spec.replicas === null)) obj.spec.replicas = 1;
  },
};
/**
 * Secret: `stringData` is written into `data` (base64; it wins over `data`) and is never stored, as the
 * v1 conversion does; `type` defaults to Opaque.
 */
const secretDefaults: Strategy = {
  ...plain,
  defaulting(obj) {
    const stringData = obj.stringData;
    if (stringData && typeof stringData === 'object' && !Array.isArray(stringData)) {
      const data: Record<string, unknown> = { ...(obj.data ?? {}) };
      for (const [k, v] of Object.entries(stringData)) if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
      obj.data = data;
    }
    delete obj.stringData;
    if (!obj.type) obj.type = 'Opaque';
  },
};

/** Make `obj` (a freshly decoded object) into `other`, in place. */
function replaceWith(obj: KObject, other: KObject): void {
  for (const k of Object.keys(obj)) delete obj[k];
  Object.assign(obj, other);
}

/** Kinds with a /status subresource: the main endpoint leaves status alone. */
const withStatus: Strategy = { ...plain, resetFieldsOnMainEndpoint: ['status'] };
/** A CronJob's name leaves room for the suffix of its Jobs' names (ValidateCronJob: 52 characters). */
const cronJobStrategy: Strategy = {
  ...workload,
  validate: (cj) => [
    ...(typeof cj.metadata.name === 'string' && cj.metadata.name.length > 52 ? [field.invalid('metadata.name', cj.metadata.name, 'must be no more than 52 characters')] : []),
    ...validatePodSpecContainers(cj.spec?.jobTemplate?.spec?.template?.spec, 'spec.jobTemplate.spec.template.spec'),
  ],
};

export const BUILTIN_RESOURCES: BuiltinResource[] = [
  res('', 'v1', 'configmaps', 'ConfigMap', true, { shortNames: ['cm'], strategy: configMapStrategy(plain) }),
  res('', 'v1', 'endpoints', 'Endpoints', true, { shortNames: ['ep'], strategy: plain }),
  res('', 'v1', 'events', 'Event', true, { shortNames: ['ev'], strategy: eventStrategy(plain) }),
  res('', 'v1', 'limitranges', 'LimitRange', true, { shortNames: ['limits'], strategy: plain }),
  res('', 'v1', 'nodes', 'Node', false, { shortNames: ['no'], status: true, strategy: { ...plain, resetFieldsOnMainEndpoint: ['status'] } }),
  res('', 'v1', 'pods', 'Pod', true, { shortNames: ['po'], categories: ['all'], status: true, subresources: POD_SUBRESOURCES, strategyIn: (_, c) => podStrategy(() => c.objects('scheduling.k8s.io', 'priorityclasses'), (namespace, name) => c.object('', 'serviceaccounts', namespace, name)),
    reads: [['scheduling.k8s.io', 'priorityclasses'], ['', 'serviceaccounts']],
  }),
  res('', 'v1', 'podtemplates', 'PodTemplate', true, { strategy: plain }),
  res('', 'v1', 'replicationcontrollers', 'ReplicationController', true, { shortNames: ['rc'], categories: ['all'], status: true, scale: WORKLOAD_SCALE, strategy: replicated }),
  res('', 'v1', 'resourcequotas', 'ResourceQuota', true, { shortNames: ['quota'], status: true, strategy: { ...plain, resetFieldsOnMainEndpoint: ['status'] } }),
  res('', 'v1', 'secrets', 'Secret', true, { strategy: secretStrategy(secretDefaults) }),
  res('', 'v1', 'serviceaccounts', 'ServiceAccount', true, {
    shortNames: ['sa'],
    strategy: plain,
    subresources: [{ name: 'token', group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] }],
  }),
  res('', 'v1', 'services', 'Service', true, { shortNames: ['svc'], categories: ['all'], verbs: NO_COLLECTION, status: true, strategy: { ...withStatus, nameRule: nameIsDNS1035Label }, strategyIn: (base, c, services) => serviceStrategy(base, c.ranges, services), reads: [['', 'services']] }),
  res('apps', 'v1', 'daemonsets', 'DaemonSet', true, { shortNames: ['ds'], categories: ['all'], status: true, strategy: workloadValidation(workload, 'daemonset') }),
  res('apps', 'v1', 'deployments', 'Deployment', true, { shortNames: ['deploy'], categories: ['all'], status: true, scale: WORKLOAD_SCALE, strategy: workloadValidation(replicated, 'deployment', { replicas: true }) }),
  res('apps', 'v1', 'replicasets', 'ReplicaSet', true, { shortNames: ['rs'], categories: ['all'], status: true, scale: WORKLOAD_SCALE, strategy: workloadValidation(replicated, 'deployment', { replicas: true }) }),
  res('apps', 'v1', 'statefulsets', 'StatefulSet', true, { shortNames: ['sts'], categories: ['all'], status: true, scale: WORKLOAD_SCALE, strategy: workloadValidation(replicated, 'statefulset', { replicas: true }) }),
  res('coordination.k8s.io', 'v1', 'leases', 'Lease', true, { strategy: plain }),
  res('events.k8s.io', 'v1', 'events', 'Event', true, {
    shortNames: ['ev'],
    storedAs: { group: '', resource: 'events', toVersion: eventToEventsV1, toStorage: eventsV1ToCore },
  }),
  // Kinds an operator's install bundle and tests touch; stored with their typed decoding, no controller acts on them.
  res('', 'v1', 'persistentvolumes', 'PersistentVolume', false, { shortNames: ['pv'], status: true, strategy: { ...withStatus, nameRule: validatePathSegmentName } }),
  res('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true, { shortNames: ['pvc'], status: true, strategy: withStatus }),
  res('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true, { strategy: rbacStrategy(plain, 'Role') }),
  res('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true, { strategy: rbacStrategy(plain, 'RoleBinding') }),
  res('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false, { strategy: rbacStrategy(plain, 'ClusterRole') }),
  res('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false, { strategy: rbacStrategy(plain, 'ClusterRoleBinding') }),
  res('batch', 'v1', 'jobs', 'Job', true, { categories: ['all'], status: true, strategy: jobStrategy(workload) }),
  res('batch', 'v1', 'cronjobs', 'CronJob', true, { shortNames: ['cj'], categories: ['all'], status: true, strategy: cronJobStrategy }),
  // HorizontalPodAutoscalers are stored as autoscaling/v2 (objects written as v1 by older kapi are converted as they are read).
  res('autoscaling', 'v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler', true, {
    shortNames: ['hpa'],
    categories: ['all'],
    status: true,
    strategy: {
      ...withStatus,
      onRead(obj) {
        if (obj.apiVersion === 'autoscaling/v1') replaceWith(obj, hpaToV2(obj));
      },
    },
  }),
  res('autoscaling', 'v1', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler', true, {
    shortNames: ['hpa'],
    categories: ['all'],
    status: true,
    storedAs: { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers', toVersion: hpaToV1, toStorage: hpaToV2 },
  }),
  res('networking.k8s.io', 'v1', 'ingresses', 'Ingress', true, { shortNames: ['ing'], status: true, strategy: workload }),
  res('networking.k8s.io', 'v1', 'ingressclasses', 'IngressClass', false, { strategy: plain }),
  res('networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', true, { shortNames: ['netpol'], strategy: { ...plain, generation: 'spec' } }),
  res('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true, { shortNames: ['pdb'], status: true, strategy: workload }),
  res('scheduling.k8s.io', 'v1', 'priorityclasses', 'PriorityClass', false, { shortNames: ['pc'], strategy: plain }),
  res('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true, { strategy: plain }),
  res('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false, { shortNames: ['sc'], strategy: plain }),
  res('storage.k8s.io', 'v1', 'csidrivers', 'CSIDriver', false, { strategy: plain }),
  res('storage.k8s.io', 'v1', 'csinodes', 'CSINode', false, { strategy: plain }),
  res('storage.k8s.io', 'v1', 'volumeattachments', 'VolumeAttachment', false, { status: true, strategy: withStatus }),
  res('node.k8s.io', 'v1', 'runtimeclasses', 'RuntimeClass', false, { strategy: plain }),
  res('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false, { categories: ['api-extensions'], strategy: webhookConfigurationStrategy(false) }),
  res('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false, { categories: ['api-extensions'], strategy: webhookConfigurationStrategy(true) }),
  res('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy', false, { categories: ['api-extensions'], status: true, strategy: admissionPolicyStrategy }),
  res('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding', false, { categories: ['api-extensions'], strategy: plain }),
  res('admissionregistration.k8s.io', 'v1', 'mutatingadmissionpolicies', 'MutatingAdmissionPolicy', false, { categories: ['api-extensions'], strategy: mutatingPolicyStrategy }),
  res('admissionregistration.k8s.io', 'v1', 'mutatingadmissionpolicybindings', 'MutatingAdmissionPolicyBinding', false, { categories: ['api-extensions'], strategy: plain }),
  res('apiregistration.k8s.io', 'v1', 'apiservices', 'APIService', false, { categories: ['api-extensions'], status: true, strategy: apiServiceStrategy }),
  res('flowcontrol.apiserver.k8s.io', 'v1', 'flowschemas', 'FlowSchema', false, { status: true, strategy: withStatus }),
  res('flowcontrol.apiserver.k8s.io', 'v1', 'prioritylevelconfigurations', 'PriorityLevelConfiguration', false, { status: true, strategy: withStatus }),
  res('certificates.k8s.io', 'v1', 'certificatesigningrequests', 'CertificateSigningRequest', false, { shortNames: ['csr'], status: true, strategy: { ...withStatus, nameRule: validatePathSegmentName } }),
];

/**
 * upstream's typed decoding of a request's object in its version (`structId`, the endpoint's struct), as the
 * handler runs it before managed fields and admission (an endpoint's decodeObject): a value of the wrong type
 * is the decoder's 400; undeclared fields are dropped, and they and duplicate fields fail, warn or pass as
 * fieldValidation says; then the Go structs' defaulters.
 */
export function typedDecoder(structId: string, kind: string): (obj: KObject, ctx: DecodeOptions) => void {
  return (obj, ctx) => decodeTyped(obj, ctx, structId, kind, []);
}

function decodeTyped(obj: KObject, ctx: DecodeOptions, structId: string, kind: string, unknownBefore: string[]): void {
  const checked = checkTypedObject(structId, obj);
  if (checked.error) throw errors.badRequest(`${kind} in version "${ctx.version}" cannot be handled as a ${kind}: ${checked.error}`);
  const mode = ctx.fieldValidation ?? 'Warn';
  if (mode !== 'Ignore') {
    const unknown = [...unknownBefore, ...checked.unknown];
    const problems = [...(ctx.rawBody ? findDuplicateFields(ctx.rawBody) : []), ...unknown.map((f) => `unknown field ${goQuote(f)}`)];
    if (problems.length > 0) {
      if (mode === 'Strict') throw errors.badRequest(`strict decoding error: ${problems.join(', ')}`);
      ctx.warnings?.push(...problems);
    }
  }
  builtinDefaulter.apply(structId, obj);
}

/** Fields a request sent that the version it used does not have, found before it was converted to the stored form. */
const unknownInServedVersion = new WeakMap<KObject, string[]>();

/**
 * The typed decoding of a resource served from another's store (events.k8s.io Events, v1 HPAs): the
 * object is checked against its own version's struct before it is converted (which keeps only the
 * fields it knows); the fields found unknown are reported by the stored kind's strategy.
 */
export function typedConversion(structId: string, kind: string, version: string, toStorage: (obj: KObject) => KObject): (obj: KObject) => KObject {
  return (obj) => {
    const checked = checkTypedObject(structId, obj);
    if (checked.error) throw errors.badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${checked.error}`);
    const stored = toStorage(obj);
    if (checked.unknown.length > 0) unknownInServedVersion.set(stored, checked.unknown);
    return stored;
  };
}

/**
 * A built-in kind's strategy with its typed decoding first: a value of the wrong type is the decoder's
 * 400, undeclared (and duplicate) fields fail, warn or pass as fieldValidation says, as for custom
 * resources; then the defaulters of the Go structs (builtin-defaults.ts) and the kind's own.
 * `structId` names the kind's Go struct (go-types.ts).
 */
export function withTypedDecoding(strategy: Strategy, structId: string, kind: string): Strategy {
  return {
    ...strategy,
    defaulting(obj, ctx, asDecoded) {
      // An object the handler decoded (typedDecoder) and admission left alone is checked and defaulted already;
      // one converted since to the stored version takes that version's defaults (upstream's storage decoding gives them).
      if (!asDecoded) decodeTyped(obj, ctx, structId, kind, unknownInServedVersion.get(obj) ?? []);
      else if (obj.apiVersion !== (ctx.group ? `${ctx.group}/${ctx.version}` : ctx.version)) builtinDefaulter.apply(structId, obj);
      strategy.defaulting?.(obj, ctx);
    },
    // Stored objects are defaulted as they are decoded, as upstream's storage codec does: one written
    // before a default existed reads (and compares on update) as if it had been written with it.
    onRead(obj) {
      strategy.onRead?.(obj);
      builtinDefaulter.apply(structId, obj);
    },
  };
}
