/**
 * The CRD status controllers as pure functions: the naming controller (accepted
 * names and the NamesAccepted condition, A-04/A-06/A-07), the establishing
 * controller (Established, A-04) and the API approval condition.
 * The version and condition helpers are re-exported here for convenience.
 */
import { apiApprovalCondition } from './api-approval.js';
import { clone, deepEqual } from './json-util.js';
import { conditionsEquivalent, getCondition, isConditionTrue, setCondition } from './helpers.js';
import { DESCRIPTORS, canonicalize } from './wire-codec.js';
import type { CRDCondition, CustomResourceDefinitionNames, CustomResourceDefinitionV1 } from '../../api/apiextensions.js';

export { apiApprovalCondition, apiApprovalState, isProtectedCommunityGroup } from './api-approval.js';
export { conditionsEquivalent, formatTime, getCondition, hasServedVersion, isConditionFalse, isConditionTrue, isStoredVersion, removeCondition, servedVersions, setCondition, storageVersion } from './helpers.js';
export { compareKubeAwareVersionStrings, sortVersionsByKubeAwarePriority } from '../../machinery/version-priority.js';

export interface NamingResult {
  acceptedNames: CustomResourceDefinitionNames;
  namesAccepted: CRDCondition;
  established: CRDCondition;
}

const namesOf = (n: CustomResourceDefinitionNames | undefined): Required<Pick<CustomResourceDefinitionNames, 'plural' | 'kind'>> & CustomResourceDefinitionNames =>
  canonicalize(n ?? {}, DESCRIPTORS.names);

/** Names taken in the group: every CRD's accepted names, `crd`'s own included (as upstream's lister sees it). */
function usedNames(crd: CustomResourceDefinitionV1, others: CustomResourceDefinitionV1[]): { resources: Set<string>; kinds: Set<string> } {
  const resources = new Set<string>();
  const kinds = new Set<string>();
  const group = crd.spec?.group;
  const all = [crd, ...others.filter((o) => o.metadata?.name !== crd.metadata?.name)];
  for (const c of all) {
    if (c.spec?.group !== group) continue;
    const a = namesOf(c.status?.acceptedNames);
    resources.add(a.plural).add(a.singular ?? '');
    for (const s of a.shortNames ?? []) resources.add(s);
    kinds.add(a.kind).add(a.listKind ?? '');
  }
  return { resources, kinds };
}

function conflict(requested: string, accepted: string, used: Set<string>): string | undefined {
  if (requested === accepted || !used.has(requested)) return undefined;
  return `${JSON.stringify(requested)} is already in use`;
}

/**
 * calculateNamesAndConditions: each requested name is accepted unless another CRD
 * of the group holds it; on conflicts the previously accepted name stays and the
 * last conflicting field gives the reason. `others` are the other CRDs (any group).
 */
export function calculateNamesAndConditions(crd: CustomResourceDefinitionV1, others: CustomResourceDefinitionV1[]): NamingResult {
  const { resources, kinds } = usedNames(crd, others);
  const requested = namesOf(crd.spec?.names);
  const accepted = namesOf(crd.status?.acceptedNames);
  const next: CustomResourceDefinitionNames = clone(accepted);
  let condition: CRDCondition = { type: 'NamesAccepted', status: 'Unknown' };
  const fail = (reason: string, message: string): void => {
    condition = { type: 'NamesAccepted', status: 'False', reason, message };
  };

  const plural = conflict(requested.plural, accepted.plural, resources);
  if (plural) fail('PluralConflict', plural);
  else next.plural = requested.plural;
  const singular = conflict(requested.singular ?? '', accepted.singular ?? '', resources);
  if (singular) fail('SingularConflict', singular);
  else next.singular = requested.singular;
  if (!deepEqual(requested.shortNames ?? [], accepted.shortNames ?? [])) {
    const mine = new Set(accepted.shortNames ?? []);
    const errs = (requested.shortNames ?? []).filter((s) => !mine.has(s)).flatMap((s) => conflict(s, '', resources) ?? []);
    const unique = [...new Set(errs)];
    if (unique.length) fail('ShortNamesConflict', unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`);
    else next.shortNames = requested.shortNames;
  }
  const kind = conflict(requested.kind, accepted.kind, kinds);
  if (kind) fail('KindConflict', kind);
  else next.kind = requested.kind;
  const listKind = conflict(requested.listKind ?? '', accepted.listKind ?? '', kinds);
  if (listKind) fail('ListKindConflict', listKind);
  else next.listKind = requested.listKind;
  next.categories = requested.categories;

  if (condition.status === 'Unknown') condition = { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };

  // Established stays False until the establishing controller flips it
  let established: CRDCondition = { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' };
  const old = getCondition(crd, 'Established');
  if (old) established = clone(old);
  if (established.status !== 'True' && condition.status === 'True') {
    established = { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have been accepted' };
  }
  return { acceptedNames: namesOf(next), namesAccepted: condition, established };
}

/**
 * One sync of the naming controller: the CRD with new accepted names and conditions,
 * or null when nothing changes (names already accepted, or same outcome as before).
 */
export function reconcileNames(crd: CustomResourceDefinitionV1, others: CustomResourceDefinitionV1[], now: Date | string = new Date()): CustomResourceDefinitionV1 | null {
  if (deepEqual(namesOf(crd.spec?.names), namesOf(crd.status?.acceptedNames))) return null;
  const result = calculateNamesAndConditions(crd, others);
  if (deepEqual(namesOf(crd.status?.acceptedNames), result.acceptedNames) && conditionsEquivalent(result.namesAccepted, getCondition(crd, 'NamesAccepted'))) {
    return null;
  }
  const out = clone(crd);
  out.status = { ...out.status, acceptedNames: result.acceptedNames };
  setCondition(out, result.namesAccepted, now);
  setCondition(out, result.established, now);
  return out;
}

/**
 * One sync of the establishing controller: Established=True (InitialNamesAccepted)
 * once NamesAccepted is True; null when there is nothing to do.
 */
export function establish(crd: CustomResourceDefinitionV1, now: Date | string = new Date()): CustomResourceDefinitionV1 | null {
  if (!isConditionTrue(crd, 'NamesAccepted') || isConditionTrue(crd, 'Established')) return null;
  const out = clone(crd);
  setCondition(out, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, now);
  return out;
}

/**
 * One sync of the API approval controller: the CRD with KubernetesAPIApprovalPolicyConformant
 * set, or null for unprotected groups and when the condition is unchanged.
 */
export function reconcileAPIApproval(crd: CustomResourceDefinitionV1, now: Date | string = new Date()): CustomResourceDefinitionV1 | null {
  const condition = apiApprovalCondition(crd);
  if (!condition || conditionsEquivalent(condition, getCondition(crd, condition.type))) return null;
  return setCondition(clone(crd), condition, now);
}

/** custom resources of a served version are served once names are accepted or the CRD is established. */
export function isServable(crd: CustomResourceDefinitionV1): boolean {
  return isConditionTrue(crd, 'NamesAccepted') || isConditionTrue(crd, 'Established');
}
