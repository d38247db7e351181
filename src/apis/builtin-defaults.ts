/**
 * The defaulters of the built-in types, by Go struct: upstream's hand-written SetDefaults_<Struct>
 * functions (pkg/apis/<group>/v1/defaults.go), which run wherever a value of that struct appears (a
 * Container in a Pod, in a Deployment's template, in a CronJob's job template). The `+default=`
 * markers of the Go types are applied by the walker (schema/builtin/defaults.ts) and are not repeated here.
 */
import { TEMPLATE_GENERATION } from './apps/daemonset.js';
import { setOwn } from '../machinery/json-decoder.js';
import { TypedDefaulter, type StructDefaulters } from '../schema/builtin/defaults.js';
import { childRecord as child, isRecord as isObject, type JsonRecord } from '../util/json-object.js';

type Obj = JsonRecord;

const unset = (v: unknown) => v === undefined || v === null;
const empty = (v: unknown) => unset(v) || v === '' || v === 0;


function setIfUnset(o: Obj, key: string, value: unknown): void {
  if (unset(o[key])) o[key] = value;
}

function setIfEmpty(o: Obj, key: string, value: unknown): void {
  if (empty(o[key])) o[key] = value;
}

/**
 * The tag of an image reference as the kubelet's parser reads it: the text after the last `:` that
 * follows the last `/`, `latest` when there is neither a tag nor a digest, none for a digest alone.
 */
export function imageTag(image: string): string {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const colon = name.lastIndexOf(':');
  if (colon > name.lastIndexOf('/')) return name.slice(colon + 1);
  return at >= 0 ? '' : 'latest';
}

/** SetDefaults_Container (and the ephemeral containers' common part). */
function container(c: Obj): void {
  if (empty(c.imagePullPolicy)) c.imagePullPolicy = typeof c.image === 'string' && c.image && imageTag(c.image) === 'latest' ? 'Always' : 'IfNotPresent';
  setIfEmpty(c, 'terminationMessagePath', '/dev/termination-log');
  setIfEmpty(c, 'terminationMessagePolicy', 'File');
}

/** The volume sources of core/v1.Volume: every field but the name. */
function volume(v: Obj): void {
  if (Object.keys(v).every((k) => k === 'name' || unset(v[k]))) v.emptyDir = {};
}

/** SetDefaults_Pod: requests default to limits, service links on, host ports under host networking. */
function pod(p: Obj): void {
  const spec = isObject(p.spec) ? p.spec : undefined;
  if (!spec) return;
  for (const list of [spec.containers, spec.initContainers]) {
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      if (!isObject(c) || !isObject(c.resources) || !isObject(c.resources.limits)) continue;
      const resources = c.resources;
      const requests = child(resources, 'requests');
      for (const [name, value] of Object.entries(resources.limits as Obj)) if (!Object.hasOwn(requests, name)) setOwn(requests, name, value);
    }
  }
  setIfUnset(spec, 'enableServiceLinks', true);
  // Host networking: the ports are the host's (pods only, not templates, since 1.28).
  if (spec.hostNetwork === true) {
    for (const list of [spec.containers, spec.initContainers]) {
      if (!Array.isArray(list)) continue;
      for (const c of list) if (isObject(c) && Array.isArray(c.ports)) for (const port of c.ports) if (isObject(port) && empty(port.hostPort)) port.hostPort = port.containerPort;
    }
  }
}

/** SetDefaults_PodSpec, with the v1 conversion's mirror of serviceAccountName in the deprecated serviceAccount. */
function podSpec(s: Obj): void {
  setIfEmpty(s, 'dnsPolicy', 'ClusterFirst');
  setIfEmpty(s, 'restartPolicy', 'Always');
  setIfUnset(s, 'securityContext', {});
  setIfUnset(s, 'terminationGracePeriodSeconds', 30);
  setIfEmpty(s, 'schedulerName', 'default-scheduler');
  if (empty(s.serviceAccountName) && typeof s.serviceAccount === 'string' && s.serviceAccount) s.serviceAccountName = s.serviceAccount;
  if (typeof s.serviceAccountName === 'string' && s.serviceAccountName) s.serviceAccount = s.serviceAccountName;
}

/** SetDefaults_Service. */
function service(svc: Obj): void {
  const spec = child(svc, 'spec');
  setIfEmpty(spec, 'sessionAffinity', 'None');
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP') {
    const clientIP = child(child(spec, 'sessionAffinityConfig'), 'clientIP');
    setIfUnset(clientIP, 'timeoutSeconds', 10800);
  }
  setIfEmpty(spec, 'type', 'ClusterIP');
  if (Array.isArray(spec.ports)) {
    for (const port of spec.ports) if (isObject(port) && empty(port.targetPort)) port.targetPort = port.port;
  }
  const type = spec.type;
  const externalIPs = Array.isArray(spec.externalIPs) && spec.externalIPs.length > 0;
  if (type === 'NodePort' || type === 'LoadBalancer' || (type === 'ClusterIP' && externalIPs)) setIfEmpty(spec, 'externalTrafficPolicy', 'Cluster');
  if (type === 'ClusterIP' || type === 'NodePort' || type === 'LoadBalancer') setIfUnset(spec, 'internalTrafficPolicy', 'Cluster');
  if (type === 'LoadBalancer') setIfUnset(spec, 'allocateLoadBalancerNodePorts', true);
}

/** SetDefaults_Deployment, SetDefaults_ReplicaSet, ...: replicas 1 when unset (the decoder's, so the writer owns it). */
function defaultReplicas(spec: Obj): void {
  setIfUnset(spec, 'replicas', 1);
}

function deployment(d: Obj): void {
  const spec = child(d, 'spec');
  defaultReplicas(spec);
  const strategy = child(spec, 'strategy');
  setIfEmpty(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const ru = child(strategy, 'rollingUpdate');
    setIfUnset(ru, 'maxUnavailable', '25%');
    setIfUnset(ru, 'maxSurge', '25%');
  }
  setIfUnset(spec, 'revisionHistoryLimit', 10);
  setIfUnset(spec, 'progressDeadlineSeconds', 600);
}

function daemonSet(d: Obj): void {
  // apps/v1 shows the internal spec.templateGeneration (0 until the strategy sets it) as an annotation.
  const annotations = child(child(d, 'metadata'), 'annotations');
  if (typeof annotations[TEMPLATE_GENERATION] !== 'string') annotations[TEMPLATE_GENERATION] = '0';
  const spec = child(d, 'spec');
  const strategy = child(spec, 'updateStrategy');
  setIfEmpty(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const ru = child(strategy, 'rollingUpdate');
    setIfUnset(ru, 'maxUnavailable', 1);
    setIfUnset(ru, 'maxSurge', 0);
  }
  setIfUnset(spec, 'revisionHistoryLimit', 10);
}

function statefulSet(s: Obj): void {
  const spec = child(s, 'spec');
  setIfEmpty(spec, 'podManagementPolicy', 'OrderedReady');
  const strategy = child(spec, 'updateStrategy');
  if (empty(strategy.type)) {
    strategy.type = 'RollingUpdate';
    child(strategy, 'rollingUpdate');
  }
  // Convert_apps_StatefulSetSpec_To_v1_StatefulSetSpec writes the claim templates' type meta.
  if (Array.isArray(spec.volumeClaimTemplates)) {
    for (const t of spec.volumeClaimTemplates) {
      if (!isObject(t)) continue;
      t.apiVersion = 'v1';
      t.kind = 'PersistentVolumeClaim';
    }
  }
  if (strategy.type === 'RollingUpdate' && isObject(strategy.rollingUpdate)) {
    setIfUnset(strategy.rollingUpdate, 'partition', 0);
    // MaxUnavailableStatefulSet: beta and on since 1.35.
    setIfUnset(strategy.rollingUpdate, 'maxUnavailable', 1);
  }
  const retention = child(spec, 'persistentVolumeClaimRetentionPolicy');
  setIfEmpty(retention, 'whenDeleted', 'Retain');
  setIfEmpty(retention, 'whenScaled', 'Retain');
  defaultReplicas(spec);
  setIfUnset(spec, 'revisionHistoryLimit', 10);
}

function job(j: Obj): void {
  const spec = child(j, 'spec');
  const templateLabels = isObject(spec.template) && isObject(spec.template.metadata) ? spec.template.metadata.labels : undefined;
  const meta = child(j, 'metadata');
  if (isObject(templateLabels) && (!isObject(meta.labels) || Object.keys(meta.labels).length === 0)) meta.labels = { ...templateLabels };
  if (unset(spec.completions) && unset(spec.parallelism)) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  setIfUnset(spec, 'parallelism', 1);
  setIfUnset(spec, 'backoffLimit', unset(spec.backoffLimitPerIndex) ? 6 : 2147483647);
  setIfUnset(spec, 'completionMode', 'NonIndexed');
  setIfUnset(spec, 'suspend', false);
  setIfUnset(spec, 'podReplacementPolicy', unset(spec.podFailurePolicy) ? 'TerminatingOrFailed' : 'Failed');
}

function cronJob(c: Obj): void {
  const spec = child(c, 'spec');
  setIfEmpty(spec, 'concurrencyPolicy', 'Allow');
  setIfUnset(spec, 'suspend', false);
  setIfUnset(spec, 'successfulJobsHistoryLimit', 3);
  setIfUnset(spec, 'failedJobsHistoryLimit', 1);
}

/** SetDefaults_HorizontalPodAutoscaler (v2): one replica at least, 80% CPU without metrics, a given behavior completed. */
function hpaV2(h: Obj): void {
  const spec = child(h, 'spec');
  setIfUnset(spec, 'minReplicas', 1);
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
  }
  if (!isObject(spec.behavior)) return;
  // copyHPAScalingRules: what is given stays (an empty policies list included); scale-down's window is the controller's.
  const rules = (key: string, window: number | undefined, policies: Obj[]) => {
    const r = child(spec.behavior as Obj, key);
    if (window !== undefined) setIfUnset(r, 'stabilizationWindowSeconds', window);
    setIfUnset(r, 'selectPolicy', 'Max');
    if (!Array.isArray(r.policies)) r.policies = policies;
  };
  rules('scaleUp', 0, [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }]);
  rules('scaleDown', undefined, [{ type: 'Percent', value: 100, periodSeconds: 15 }]);
}

function networkPolicy(n: Obj): void {
  const spec = child(n, 'spec');
  if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0) {
    const types = ['Ingress'];
    if (Array.isArray(spec.egress) && spec.egress.length > 0) types.push('Egress');
    spec.policyTypes = types;
  }
}

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function subject(s: Obj): void {
  if (!empty(s.apiGroup)) return;
  if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = RBAC_GROUP;
  else if (s.kind === 'ServiceAccount') s.apiGroup = '';
}

function binding(b: Obj): void {
  setIfEmpty(child(b, 'roleRef'), 'apiGroup', RBAC_GROUP);
}

function csiDriver(d: Obj): void {
  const spec = child(d, 'spec');
  setIfUnset(spec, 'attachRequired', true);
  setIfUnset(spec, 'podInfoOnMount', false);
  setIfUnset(spec, 'storageCapacity', false);
  setIfUnset(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
  if (!Array.isArray(spec.volumeLifecycleModes) || spec.volumeLifecycleModes.length === 0) spec.volumeLifecycleModes = ['Persistent'];
  setIfUnset(spec, 'requiresRepublish', false);
  setIfUnset(spec, 'seLinuxMount', false);
}

const defaultMode = (v: Obj) => setIfUnset(v, 'defaultMode', 420);

/** SetDefaults_ValidatingWebhook / SetDefaults_MutatingWebhook. */
function webhook(w: Obj, mutating: boolean): void {
  setIfUnset(w, 'failurePolicy', 'Fail');
  setIfUnset(w, 'matchPolicy', 'Equivalent');
  setIfUnset(w, 'namespaceSelector', {});
  setIfUnset(w, 'objectSelector', {});
  setIfUnset(w, 'timeoutSeconds', 10);
  if (mutating) setIfUnset(w, 'reinvocationPolicy', 'Never');
}

/**
 * SetDefaults_LimitRangeItem: a Container item's default limit is its max, and its default request its default
 * limit, else its min.
 */
function limitRangeItem(item: Obj): void {
  if (item.type !== 'Container') return;
  const list = (key: string): Obj => {
    const v = item[key];
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Obj;
    return (item[key] = {});
  };
  const fill = (into: Obj, from: unknown) => {
    if (from === null || typeof from !== 'object' || Array.isArray(from)) return;
    for (const [k, v] of Object.entries(from)) if (!Object.hasOwn(into, k)) into[k] = v;
  };
  const defaults = list('default');
  const defaultRequest = list('defaultRequest');
  fill(defaults, item.max);
  fill(defaultRequest, defaults);
  fill(defaultRequest, item.min);
  // Empty maps are omitted (omitempty).
  if (Object.keys(defaults).length === 0) delete item.default;
  if (Object.keys(defaultRequest).length === 0) delete item.defaultRequest;
}

export const BUILTIN_DEFAULTERS: StructDefaulters = {
  'core/v1.LimitRangeItem': limitRangeItem,
  'core/v1.Pod': pod,
  'core/v1.PodSpec': podSpec,
  'core/v1.Container': container,
  'core/v1.EphemeralContainerCommon': container,
  'core/v1.Volume': volume,
  'core/v1.Probe': (p) => {
    setIfEmpty(p, 'timeoutSeconds', 1);
    setIfEmpty(p, 'periodSeconds', 10);
    setIfEmpty(p, 'successThreshold', 1);
    setIfEmpty(p, 'failureThreshold', 3);
  },
  'core/v1.HTTPGetAction': (a) => {
    setIfEmpty(a, 'path', '/');
    setIfEmpty(a, 'scheme', 'HTTP');
  },
  'core/v1.SecretVolumeSource': defaultMode,
  'core/v1.ConfigMapVolumeSource': defaultMode,
  'core/v1.DownwardAPIVolumeSource': defaultMode,
  'core/v1.ProjectedVolumeSource': defaultMode,
  'core/v1.ServiceAccountTokenProjection': (p) => setIfUnset(p, 'expirationSeconds', 3600),
  'core/v1.ObjectFieldSelector': (s) => setIfEmpty(s, 'apiVersion', 'v1'),
  'core/v1.HostPathVolumeSource': (h) => setIfUnset(h, 'type', ''),
  'core/v1.EndpointPort': (p) => setIfEmpty(p, 'protocol', 'TCP'),
  'core/v1.Service': service,
  'core/v1.PersistentVolume': (pv) => {
    const spec = child(pv, 'spec');
    setIfEmpty(spec, 'persistentVolumeReclaimPolicy', 'Retain');
    setIfUnset(spec, 'volumeMode', 'Filesystem');
    setIfEmpty(child(pv, 'status'), 'phase', 'Pending');
  },
  'core/v1.PersistentVolumeClaim': (pvc) => setIfEmpty(child(pvc, 'status'), 'phase', 'Pending'),
  // Claims and claim templates alike (StatefulSets' volumeClaimTemplates, ephemeral volumes).
  'core/v1.PersistentVolumeClaimSpec': (spec) => setIfUnset(spec, 'volumeMode', 'Filesystem'),
  // SetDefaults_Secret, and the v1 conversion that writes stringData into data (base64; it wins) and never keeps it.
  'core/v1.Secret': (secret) => {
    const stringData = secret.stringData;
    if (isObject(stringData)) {
      const data: Obj = isObject(secret.data) ? secret.data : {};
      for (const [k, v] of Object.entries(stringData)) if (typeof v === 'string') setOwn(data, k, Buffer.from(v, 'utf8').toString('base64'));
      secret.data = data;
    }
    delete secret.stringData;
    setIfEmpty(secret, 'type', 'Opaque');
  },
  'core/v1.ReplicationController': (rc) => {
    const spec = child(rc, 'spec');
    defaultReplicas(spec);
    const labels = isObject(spec.template) && isObject(spec.template.metadata) && isObject(spec.template.metadata.labels) ? spec.template.metadata.labels : undefined;
    if (labels && (!isObject(spec.selector) || Object.keys(spec.selector).length === 0)) spec.selector = { ...labels };
    const meta = child(rc, 'metadata');
    if (labels && (!isObject(meta.labels) || Object.keys(meta.labels).length === 0)) meta.labels = { ...labels };
  },
  'apps/v1.Deployment': deployment,
  'apps/v1.ReplicaSet': (rs) => defaultReplicas(child(rs, 'spec')),
  'apps/v1.DaemonSet': daemonSet,
  'apps/v1.StatefulSet': statefulSet,
  'batch/v1.Job': job,
  'batch/v1.CronJob': cronJob,
  'batch/v1.PodFailurePolicyOnPodConditionsPattern': (p) => setIfEmpty(p, 'status', 'True'),
  'autoscaling/v1.HorizontalPodAutoscaler': (h) => setIfUnset(child(h, 'spec'), 'minReplicas', 1),
  'autoscaling/v2.HorizontalPodAutoscaler': hpaV2,
  'networking/v1.NetworkPolicy': networkPolicy,
  'networking/v1.NetworkPolicyPort': (p) => setIfUnset(p, 'protocol', 'TCP'),
  'rbac/v1.Subject': subject,
  'rbac/v1.RoleBinding': binding,
  'rbac/v1.ClusterRoleBinding': binding,
  'admissionregistration/v1.ValidatingWebhook': (w) => webhook(w, false),
  'admissionregistration/v1.MutatingWebhook': (w) => webhook(w, true),
  'admissionregistration/v1.RuleWithOperations': (r) => setIfUnset(r, 'scope', '*'),
  'admissionregistration/v1.NamedRuleWithOperations': (r) => setIfUnset(r, 'scope', '*'),
  'admissionregistration/v1.ServiceReference': (r) => setIfUnset(r, 'port', 443),
  'admissionregistration/v1.ValidatingAdmissionPolicySpec': (spec) => setIfUnset(spec, 'failurePolicy', 'Fail'),
  'admissionregistration/v1.MutatingAdmissionPolicySpec': (spec) => {
    setIfUnset(spec, 'failurePolicy', 'Fail');
    setIfUnset(spec, 'reinvocationPolicy', 'Never');
  },
  'admissionregistration/v1.MatchResources': (m) => {
    setIfUnset(m, 'matchPolicy', 'Equivalent');
    setIfUnset(m, 'namespaceSelector', {});
    setIfUnset(m, 'objectSelector', {});
  },
  'admissionregistration/v1.ParamRef': (p) => {
    if (isObject(p.selector) || typeof p.name === 'string') setIfUnset(p, 'parameterNotFoundAction', 'Deny');
  },
  'flowcontrol/v1.FlowSchemaSpec': (spec) => setIfEmpty(spec, 'matchingPrecedence', 1000),
  'flowcontrol/v1.LimitedPriorityLevelConfiguration': (l) => {
    setIfUnset(l, 'nominalConcurrencyShares', 30);
    setIfUnset(l, 'lendablePercent', 0);
  },
  'flowcontrol/v1.ExemptPriorityLevelConfiguration': (e) => {
    setIfUnset(e, 'nominalConcurrencyShares', 0);
    setIfUnset(e, 'lendablePercent', 0);
  },
  'flowcontrol/v1.QueuingConfiguration': (q) => {
    setIfEmpty(q, 'queues', 64);
    setIfEmpty(q, 'handSize', 8);
    setIfEmpty(q, 'queueLengthLimit', 50);
  },
  'scheduling/v1.PriorityClass': (p) => setIfUnset(p, 'preemptionPolicy', 'PreemptLowerPriority'),
  'storage/v1.StorageClass': (s) => {
    setIfUnset(s, 'reclaimPolicy', 'Delete');
    setIfUnset(s, 'volumeBindingMode', 'Immediate');
  },
  'storage/v1.CSIDriver': csiDriver,
  'discovery/v1.EndpointPort': (p) => {
    setIfUnset(p, 'name', '');
    setIfUnset(p, 'protocol', 'TCP');
  },
};

/** Defaults every built-in object's struct tree (one walker for all kinds). */
export const builtinDefaulter = new TypedDefaulter(BUILTIN_DEFAULTERS);
