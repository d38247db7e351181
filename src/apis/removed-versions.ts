/**
 * Versions upstream has removed (kube-apiserver 1.25 stopped serving them), which kapi serves when
 * `--runtime-config` asks: the control plane of Debian's kubernetes (1.20) lists and watches them
 * (kube-scheduler policy/v1beta1 PodDisruptionBudgets; kube-controller-manager's CronJob, disruption and
 * EndpointSlice controllers batch/v1beta1, policy/v1beta1 and discovery.k8s.io/v1beta1). Each is stored as
 * its v1 resource and converted as upstream's conversion functions did.
 */
import type { KObject } from '../api/object.js';
import { isRecord, records, type JsonRecord } from '../util/json-object.js';
import { deepEqual } from '../util/deep-equal.js';
import { cronJobPrinter, endpointSlicePrinter, podDisruptionBudgetPrinter } from '../printing/index.js';
import { res, type BuiltinResource, type StoredAs } from './resource-table.js';

/** The same fields in both versions: only apiVersion changes. */
function renamedVersion(group: string, resource: string, from: string, to: string): StoredAs {
  return { group, version: to, resource, toVersion: (o) => ({ ...o, apiVersion: `${group}/${from}` }), toStorage: (o) => ({ ...o, apiVersion: `${group}/${to}` }) };
}

/** policy/v1beta1: an empty selector selects no pods (v1: every pod); each version's other form says the same. */
const PDB_V1BETA1_LABEL = 'pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match';
const requirement = (operator: 'Exists' | 'DoesNotExist') => ({ matchExpressions: [{ key: PDB_V1BETA1_LABEL, operator }] });
/** Equal as apimachinery's semantic equality has it (an empty list or map is nil). */
function sameSelector(selector: unknown, other: JsonRecord): boolean {
  if (!isRecord(selector)) return false;
  const norm = (s: JsonRecord) => ({
    matchLabels: isRecord(s.matchLabels) && Object.keys(s.matchLabels).length > 0 ? s.matchLabels : undefined,
    matchExpressions: Array.isArray(s.matchExpressions) && s.matchExpressions.length > 0 ? s.matchExpressions : undefined,
  });
  return deepEqual(norm(selector), norm(other));
}

function withSelector(pdb: KObject, apiVersion: string, selector: unknown): KObject {
  return { ...pdb, apiVersion, spec: { ...pdb.spec, selector } };
}

/** policy/v1beta1 → v1 (Convert_v1beta1_PodDisruptionBudget_To_policy_PodDisruptionBudget). */
function pdbToV1(pdb: KObject): KObject {
  const selector = pdb.spec?.selector;
  if (sameSelector(selector, {})) return withSelector(pdb, 'policy/v1', requirement('Exists'));
  if (sameSelector(selector, requirement('DoesNotExist'))) return withSelector(pdb, 'policy/v1', {});
  if (isRecord(selector) && Array.isArray(selector.matchExpressions)) {
    // The label of the two forms never mixes with a user's own requirements.
    const kept = selector.matchExpressions.filter((e: unknown) => !(isRecord(e) && e.key === PDB_V1BETA1_LABEL));
    if (kept.length !== selector.matchExpressions.length) return withSelector(pdb, 'policy/v1', { ...selector, matchExpressions: kept });
  }
  return { ...pdb, apiVersion: 'policy/v1' };
}

/** policy/v1 → v1beta1 (Convert_policy_PodDisruptionBudget_To_v1beta1_PodDisruptionBudget). */
function pdbToV1beta1(pdb: KObject): KObject {
  const selector = pdb.spec?.selector;
  if (sameSelector(selector, requirement('Exists'))) return withSelector(pdb, 'policy/v1beta1', {});
  if (sameSelector(selector, {})) return withSelector(pdb, 'policy/v1beta1', requirement('DoesNotExist'));
  return { ...pdb, apiVersion: 'policy/v1beta1' };
}

const ZONE = 'topology.kubernetes.io/zone';
const HOSTNAME = 'kubernetes.io/hostname';

/** discovery.k8s.io/v1beta1 → v1: topology's zone is `zone`, its hostname `nodeName` (when the same), the rest `deprecatedTopology`. */
function endpointToV1(ep: JsonRecord): JsonRecord {
  const { topology, ...rest } = ep;
  const out: JsonRecord = { ...rest };
  if (!isRecord(topology)) return out;
  const deprecated: JsonRecord = { ...topology };
  if (typeof topology[ZONE] === 'string') {
    out.zone = topology[ZONE];
    delete deprecated[ZONE];
  }
  if (HOSTNAME in topology && typeof out.nodeName === 'string' && topology[HOSTNAME] === out.nodeName) delete deprecated[HOSTNAME];
  if (Object.keys(deprecated).length > 0) out.deprecatedTopology = deprecated;
  return out;
}

/** discovery.k8s.io/v1 → v1beta1: `deprecatedTopology`, with `zone` and (unless there) `nodeName`, is `topology`. */
function endpointToV1beta1(ep: JsonRecord): JsonRecord {
  const { deprecatedTopology, zone, ...rest } = ep;
  const out: JsonRecord = { ...rest };
  if (deprecatedTopology === undefined && zone === undefined && ep.nodeName === undefined) return out;
  const topology: JsonRecord = isRecord(deprecatedTopology) ? { ...deprecatedTopology } : {};
  if (typeof zone === 'string') topology[ZONE] = zone;
  if (typeof ep.nodeName === 'string' && !(HOSTNAME in topology)) topology[HOSTNAME] = ep.nodeName;
  out.topology = topology;
  return out;
}

const sliceIn = (slice: KObject, apiVersion: string, convert: (ep: JsonRecord) => JsonRecord): KObject =>
  Array.isArray(slice.endpoints) ? { ...slice, apiVersion, endpoints: records(slice.endpoints).map(convert) } : { ...slice, apiVersion };

/** The removed versions kapi can serve, each from its v1 resource's store. */
export const REMOVED_RESOURCES: BuiltinResource[] = [
  res('batch', 'v1beta1', 'cronjobs', 'CronJob', true, { printer: cronJobPrinter, shortNames: ['cj'], categories: ['all'], status: true, removed: true, storedAs: renamedVersion('batch', 'cronjobs', 'v1beta1', 'v1') }),
  res('policy', 'v1beta1', 'poddisruptionbudgets', 'PodDisruptionBudget', true, {
    printer: podDisruptionBudgetPrinter,
    shortNames: ['pdb'],
    status: true,
    removed: true,
    storedAs: { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets', toVersion: pdbToV1beta1, toStorage: pdbToV1 },
  }),
  res('discovery.k8s.io', 'v1beta1', 'endpointslices', 'EndpointSlice', true, {
    printer: endpointSlicePrinter,
    removed: true,
    storedAs: {
      group: 'discovery.k8s.io',
      version: 'v1',
      resource: 'endpointslices',
      toVersion: (o) => sliceIn(o, 'discovery.k8s.io/v1beta1', endpointToV1beta1),
      toStorage: (o) => sliceIn(o, 'discovery.k8s.io/v1', endpointToV1),
    },
  }),
];
