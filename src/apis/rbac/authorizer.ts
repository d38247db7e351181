/**
 * kube-apiserver's authorizers over RBAC's stored objects, read from the stores' watch caches:
 * - the privileged-group authorizer (`system:masters` may do anything), always first;
 * - RBAC: the ClusterRoleBindings, then the RoleBindings of the request's namespace, whose subjects
 *   are the user, lend the rules of their roles (RBACAuthorizer, VisitRulesFor). A binding whose role
 *   is missing is skipped, and the miss is the denial's reason, as upstream reports it.
 * `--authorization-mode` picks RBAC or AlwaysAllow.
 */
import { goQuote } from '../../machinery/go-text.js';
import type { UserInfo } from '../../api/authentication.js';
import type { Attributes, Authorizer, Decision, NonResourceRule, ResourceRule, Rules } from '../../api/authorization.js';
import type { RestStore } from '../../registry/store.js';
import type { KObject } from '../../api/object.js';
import { isRecord } from '../../util/json-object.js';
import { ruleAllows, rulesOf, SERVICE_ACCOUNT_PREFIX, subjectIs, subjectsOf, type PolicyRule, type Subject } from './rules.js';
import { CacheView, type ViewHandlers } from '../../cache/cache-view.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
const MAX_INDEXED_NAMESPACES = 4096;
export const SYSTEM_MASTERS = 'system:masters';

export interface RbacStores {
  roles: RestStore;
  roleBindings: RestStore;
  clusterRoles: RestStore;
  clusterRoleBindings: RestStore;
}

/** Visits the rules lent to a user; returns false to stop. `source` describes where a rule comes from. */
type Visitor = (source: () => string, rule: PolicyRule | undefined, error?: string) => boolean;

/** A rule a binding lends, or the error met resolving its role. */
interface Step {
  source: () => string;
  rule: PolicyRule | undefined;
  error?: string;
}

/** Users (with their groups) and namespaces whose rules are kept at once; more, and all are forgotten. */
const MAX_CACHED_USERS = 4096;
/** A user of longer name and groups is not kept (names and groups come from credentials: bounded anyway). */
const MAX_CACHED_KEY = 4096;
/** Steps kept for one user and namespace at most, and in all (a step is a few dozen bytes). */
const MAX_CACHED_STEPS_PER_USER = 4096;
const MAX_CACHED_STEPS = 500_000;

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${goQuote(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${goQuote(s.name)}`;
}

const roleRefOf = (binding: KObject): { kind: string; name: string } => {
  const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
  return { kind: typeof ref.kind === 'string' ? ref.kind : '', name: typeof ref.name === 'string' ? ref.name : '' };
};

/** The rules RBAC gives users, from the stored roles and bindings (upstream's DefaultRuleResolver). */
export class RbacResolver {
  constructor(private readonly stores: RbacStores) {}

  /** The rules a binding's role reference lends (GetRoleReferenceRules), or the error upstream gives. */
  roleReferenceRules(ref: { kind: string; name: string }, namespace: string): { rules: PolicyRule[]; error?: string } {
    if (ref.kind === 'ClusterRole') {
      const role = this.get(this.stores.clusterRoles, undefined, ref.name);
      return role ? { rules: rulesOf(role) } : { rules: [], error: `clusterrole.${RBAC_GROUP} ${goQuote(ref.name)} not found` };
    }
    if (ref.kind === 'Role') {
      const role = this.get(this.stores.roles, namespace, ref.name);
      return role ? { rules: rulesOf(role) } : { rules: [], error: `role.${RBAC_GROUP} ${goQuote(ref.name)} not found` };
    }
    return { rules: [], error: `unsupported role reference kind: ${goQuote(ref.kind)}` };
  }

  /**
   * VisitRulesFor: the cluster-wide bindings, then those of the namespace. What they lend a user in a namespace
   * (rules, and the errors met) is kept until a role or binding changes, so that a user's requests after the
   * first only match rules (a bounded number of users and namespaces are kept).
   */
  visit(user: UserInfo, namespace: string, visitor: Visitor): void {
    for (const step of this.stepsFor(user, namespace)) if (!visitor(step.source, step.rule, step.error)) return;
  }

  private stepsFor(user: UserInfo, namespace: string): Step[] {
    const { roles, roleBindings, clusterRoles, clusterRoleBindings } = this.stores;
    const seen = this.seen;
    if (
      seen[0] !== roles.cache.changeRevision ||
      seen[1] !== roleBindings.cache.changeRevision ||
      seen[2] !== clusterRoles.cache.changeRevision ||
      seen[3] !== clusterRoleBindings.cache.changeRevision
    ) {
      this.clearSteps();
      this.seen = [roles.cache.changeRevision, roleBindings.cache.changeRevision, clusterRoles.cache.changeRevision, clusterRoleBindings.cache.changeRevision];
    }
    const key = JSON.stringify([namespace, user.name, user.groups]);
    if (key.length > MAX_CACHED_KEY) return this.collect(user, namespace);
    let steps = this.steps.get(key);
    if (!steps) {
      steps = this.collect(user, namespace);
      // A user lent many rules (a Role of thousands, bound many times) is not kept: it is visited each time.
      if (steps.length > MAX_CACHED_STEPS_PER_USER) return steps;
      if (this.steps.size >= MAX_CACHED_USERS || this.cachedSteps + steps.length > MAX_CACHED_STEPS) this.clearSteps();
      this.steps.set(key, steps);
      this.cachedSteps += steps.length;
    }
    return steps;
  }

  /** [roles, roleBindings, clusterRoles, clusterRoleBindings] change revisions the kept steps were made at. */
  private seen: number[] = [];
  private readonly steps = new Map<string, Step[]>();
  /** The steps kept in all. */
  private cachedSteps = 0;

  private clearSteps(): void {
    this.steps.clear();
    this.cachedSteps = 0;
  }

  private collect(user: UserInfo, namespace: string): Step[] {
    const steps: Step[] = [];
    const lend = (source: () => string, rules: PolicyRule[], error: string | undefined) => {
      if (error !== undefined) steps.push({ source, rule: undefined, error });
      for (const rule of rules) steps.push({ source, rule });
    };
    for (const binding of this.bindingsOf(user, this.clusterIndex())) {
      const subject = subjectsOf(binding).find((s) => subjectIs(user, s, ''));
      if (!subject) continue;
      const ref = roleRefOf(binding);
      const { rules, error } = ref.kind === 'ClusterRole' ? this.roleReferenceRules(ref, '') : { rules: [], error: `unsupported role reference kind: ${goQuote(ref.kind)}` };
      lend(() => `ClusterRoleBinding ${goQuote(binding.metadata.name)} of ${ref.kind} ${goQuote(ref.name)} to ${describeSubject(subject, '')}`, rules, error);
    }
    if (!namespace) return steps;
    for (const binding of this.bindingsOf(user, this.namespaceIndex(namespace))) {
      const subject = subjectsOf(binding).find((s) => subjectIs(user, s, namespace));
      if (!subject) continue;
      const ref = roleRefOf(binding);
      const { rules, error } = this.roleReferenceRules(ref, namespace);
      lend(() => `RoleBinding ${goQuote(`${binding.metadata.name}/${namespace}`)} of ${ref.kind} ${goQuote(ref.name)} to ${describeSubject(subject, namespace)}`, rules, error);
    }
    return steps;
  }

  /** RulesFor: every rule lent to the user in the namespace, and the errors met on the way. */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.visit(user, namespace, (_source, rule, error) => {
      if (rule) rules.push(rule);
      if (error !== undefined) errors.push(error);
      return true;
    });
    return { rules, errors };
  }

  /**
   * The bindings that name the user or one of its groups, in the order of the store (upstream visits
   * them all in that order; the first that allows is the one a decision names).
   */
  private bindingsOf(user: UserInfo, index: SubjectIndex): KObject[] {
    const found = [index.get(`U:${user.name}`), ...user.groups.map((g) => index.get(`G:${g}`))].filter((l) => l !== undefined);
    if (found.length === 0) return [];
    if (found.length === 1) return found[0].map((e) => e.binding);
    const seen = new Map<string, KObject>();
    for (const list of found) for (const e of list) seen.set(e.key, e.binding);
    return [...seen.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((e) => e[1]);
  }

  private clusterIndex(): SubjectIndex {
    this.cluster ??= indexed(this.stores.clusterRoleBindings, '', '');
    this.cluster.view.refresh();
    return this.cluster.index;
  }

  private namespaceIndex(namespace: string): SubjectIndex {
    let entry = this.namespaces.get(namespace);
    if (!entry) {
      const store = this.stores.roleBindings;
      entry = indexed(store, store.namespacePrefix(namespace), namespace);
      entry.view.refresh();
      // Only namespaces with bindings are kept, and no more than a bound of them (requests name any namespace).
      if (entry.index.bindings > 0) {
        if (this.namespaces.size >= MAX_INDEXED_NAMESPACES) this.namespaces.clear();
        this.namespaces.set(namespace, entry);
      }
      return entry.index;
    }
    entry.view.refresh();
    return entry.index;
  }

  private cluster?: Indexed;
  private readonly namespaces = new Map<string, Indexed>();

  private get(store: RestStore, namespace: string | undefined, name: string): KObject | undefined {
    return store.cache.get(store.key(namespace, name))?.object;
  }
}

/** A subject index, and the view of the cache that keeps it up to date binding by binding. */
interface Indexed {
  index: SubjectIndex;
  view: CacheView;
}

function indexed(store: RestStore, prefix: string, bindingNamespace: string): Indexed {
  const index = new SubjectIndex(bindingNamespace);
  return { index, view: new CacheView(store.cache, prefix, index) };
}

/**
 * Bindings by the subjects they name (`U:<user name>`, service accounts by theirs, `G:<group>`), each subject's
 * list in the order of the store (by key).
 */
class SubjectIndex implements ViewHandlers {
  private readonly lists = new Map<string, Array<{ key: string; binding: KObject }>>();
  /** The subjects each binding is listed under, to take it out when it changes. */
  private readonly subjectsOf = new Map<string, string[]>();

  constructor(private readonly bindingNamespace: string) {}

  /** The bindings indexed (those that name no subject this index keys among them). */
  get bindings(): number {
    return this.subjectsOf.size;
  }

  get(subject: string): ReadonlyArray<{ key: string; binding: KObject }> | undefined {
    return this.lists.get(subject);
  }

  /** Every binding forgotten (the index is made again). */
  reset(): void {
    this.lists.clear();
    this.subjectsOf.clear();
  }

  /** The binding at `key` as it is now (undefined: gone), in its place. */
  set(key: string, binding: KObject | undefined): void {
    for (const subject of this.subjectsOf.get(key) ?? []) {
      const list = this.lists.get(subject)!;
      list.splice(place(list, key), 1);
      if (list.length === 0) this.lists.delete(subject);
    }
    this.subjectsOf.delete(key);
    if (!binding) return;
    const subjects = this.subjectKeys(binding);
    this.subjectsOf.set(key, subjects);
    for (const subject of subjects) {
      let list = this.lists.get(subject);
      if (!list) this.lists.set(subject, (list = []));
      // Made anew, bindings come in key order: each goes last, found at once.
      list.splice(place(list, key), 0, { key, binding });
    }
  }

  private subjectKeys(binding: KObject): string[] {
    const keys = new Set<string>();
    for (const s of subjectsOf(binding)) {
      if (s.kind === 'User') keys.add(`U:${s.name}`);
      else if (s.kind === 'Group') keys.add(`G:${s.name}`);
      else if (s.kind === 'ServiceAccount' && (s.namespace || this.bindingNamespace)) keys.add(`U:${SERVICE_ACCOUNT_PREFIX}${s.namespace || this.bindingNamespace}:${s.name}`);
    }
    return [...keys];
  }
}

/** Where `key` is, or goes, in a list sorted by key. */
function place(list: ReadonlyArray<{ key: string }>, key: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid].key < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Go's aggregate error text: one error as it is, several in brackets. */
export const aggregate = (errors: string[]) => (errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);

const ALL_RULES: Rules = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
  incomplete: false,
};

/** `--authorization-mode=RBAC`: system:masters may do anything; everyone else what their bindings give. */
export function rbacAuthorizer(resolver: RbacResolver): Authorizer {
  return {
    authorize(a: Attributes): Decision {
      const user = a.user;
      if (!user) return { decision: 'no-opinion' };
      if (user.groups.includes(SYSTEM_MASTERS)) return { decision: 'allow' };
      let allowedBy: string | undefined;
      const errors: string[] = [];
      resolver.visit(user, a.namespace, (source, rule, error) => {
        if (rule && ruleAllows(a, rule)) {
          allowedBy = `RBAC: allowed by ${source()}`;
          return false;
        }
        if (error !== undefined) errors.push(error);
        return true;
      });
      if (allowedBy) return { decision: 'allow', reason: allowedBy };
      return { decision: 'no-opinion', reason: errors.length > 0 ? `RBAC: ${aggregate(errors)}` : '' };
    },
    rulesFor(user: UserInfo, namespace: string): Rules {
      if (user.groups.includes(SYSTEM_MASTERS)) return structuredClone(ALL_RULES);
      const { rules, errors } = resolver.rulesFor(user, namespace);
      const resourceRules: ResourceRule[] = [];
      const nonResourceRules: NonResourceRule[] = [];
      for (const r of rules) {
        if (r.resources?.length) {
          const rule: ResourceRule = { verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources };
          if (r.resourceNames?.length) rule.resourceNames = r.resourceNames;
          resourceRules.push(rule);
        }
        if (r.nonResourceURLs?.length) nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
      }
      return { resourceRules, nonResourceRules, incomplete: errors.length > 0, ...(errors.length > 0 ? { evaluationError: aggregate(errors) } : {}) };
    },
  };
}
