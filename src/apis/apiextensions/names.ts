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

/** A set a name can be looked up in. */
interface NameSet {
  has(name: string): boolean;
}

/** One CRD's accepted names: its resource names (plural, singular, short names) and its kinds (kind, list kind). */
function acceptedNamesOf(crd: CustomResourceDefinitionV1): { resources: Set<string>; kinds: Set<string> } {
  const a = namesOf(crd.status?.acceptedNames);
  const resources = new Set<string>([a.plural, a.singular ?? '', ...(a.shortNames ?? [])]);
  const kinds = new Set<string>([a.kind, a.listKind ?? '']);
  return { resources, kinds };
}

/**
 * Every CRD's accepted names by group, kept as CRDs change (the CRD controller keeps one from its cache): naming
 * a CRD then looks its requested names up instead of reading every CRD of its group (a group of 10,000 CRDs).
 */
export class AcceptedNamesIndex {
  private readonly byCrd = new Map<string, { group: string; resources: Set<string>; kinds: Set<string> }>();
  private readonly byGroup = new Map<string, { members: Set<string>; resources: Map<string, number>; kinds: Map<string, number> }>();

  /** The CRD as it is now (added or changed). */
  set(crd: CustomResourceDefinitionV1): void {
    const name = String(crd.metadata?.name ?? '');
    this.remove(name);
    const group = String(crd.spec?.group ?? '');
    const entry = { group, ...acceptedNamesOf(crd) };
    this.byCrd.set(name, entry);
    let g = this.byGroup.get(group);
    if (!g) this.byGroup.set(group, (g = { members: new Set(), resources: new Map(), kinds: new Map() }));
    g.members.add(name);
    for (const r of entry.resources) g.resources.set(r, (g.resources.get(r) ?? 0) + 1);
    for (const k of entry.kinds) g.kinds.set(k, (g.kinds.get(k) ?? 0) + 1);
  }

  remove(name: string): void {
    const entry = this.byCrd.get(name);
    if (!entry) return;
    this.byCrd.delete(name);
    const g = this.byGroup.get(entry.group)!;
    g.members.delete(name);
    const drop = (counts: Map<string, number>, names: Set<string>) => {
      for (const n of names) {
        const left = (counts.get(n) ?? 1) - 1;
        if (left > 0) counts.set(n, left);
        else counts.delete(n);
      }
    };
    drop(g.resources, entry.resources);
    drop(g.kinds, entry.kinds);
    if (g.members.size === 0) this.byGroup.delete(entry.group);
  }

  /** The CRDs of a group, by name. */
  members(group: string): string[] {
    return [...(this.byGroup.get(group)?.members ?? [])];
  }

  /** The names the group's CRDs other than `name` hold. */
  usedByOthers(group: string, name: string): { resources: NameSet; kinds: NameSet } {
    const g = this.byGroup.get(group);
    const own = this.byCrd.get(name);
    const view = (counts: Map<string, number> | undefined, mine: Set<string> | undefined): NameSet => ({
      has: (n) => (counts?.get(n) ?? 0) - (own?.group === group && mine?.has(n) ? 1 : 0) > 0,
    });
    return { resources: view(g?.resources, own?.resources), kinds: view(g?.kinds, own?.kinds) };
  }
}

/** Names taken in the group: every CRD's accepted names, `crd`'s own included (as upstream's lister sees it). */
function usedNames(crd: CustomResourceDefinitionV1, others: CustomResourceDefinitionV1[] | AcceptedNamesIndex): { resources: NameSet; kinds: NameSet } {
  const own = acceptedNamesOf(crd);
  const group = crd.spec?.group;
  if (others instanceof AcceptedNamesIndex) {
    const theirs = others.usedByOthers(String(group ?? ''), String(crd.metadata?.name ?? ''));
    return {
      resources: { has: (n) => own.resources.has(n) || theirs.resources.has(n) },
      kinds: { has: (n) => own.kinds.has(n) || theirs.kinds.has(n) },
    };
  }
  const resources = new Set<string>(own.resources);
  const kinds = new Set<string>(own.kinds);
  for (const c of others) {
    if (c.spec?.group !== group || c.metadata?.name === crd.metadata?.name) continue;
    const a = acceptedNamesOf(c);
    for (const r of a.resources) resources.add(r);
    for (const k of a.kinds) kinds.add(k);
  }
  return { resources, kinds };
}

function conflict(requested: string, accepted: string, used: NameSet): string | undefined {
  if (requested === accepted || !used.has(requested)) return undefined;
  return `${JSON.stringify(requested)} is already in use`;
}

/**
 * calculateNamesAndConditions: each requested name is accepted unless another CRD
 * of the group holds it; on conflicts the previously accepted name stays and the
 * last conflicting field gives the reason. `others` are the other CRDs (any group).
 */
export function calculateNamesAndConditions(crd: CustomResourceDefinitionV1, others: CustomResourceDefinitionV1[] | AcceptedNamesIndex): NamingResult {
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
export function reconcileNames(crd: CustomResourceDefinitionV1, others: CustomResourceDefinitionV1[] | AcceptedNamesIndex, now: Date | string = new Date()): CustomResourceDefinitionV1 | null {
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
