/**
 * kube-apiserver's authorizers over RBAC's stored objects, read from the stores' watch caches:
 * - the privileged-group authorizer (`system:masters` may do anything), always first;
 * - RBAC: the ClusterRoleBindings, then the RoleBindings of the request's namespace, whose subjects
 *   are the user, lend the rules of their roles (RBACAuthorizer, VisitRulesFor). A binding whose role
 *   is missing is skipped, and the miss is the denial's reason, as upstream reports it.
 * `--authorization-mode` picks RBAC or AlwaysAllow.
 */
import { goQuote } from '../../machinery/go-text.js';
import type { UserInfo } from '../../server/authn.js';
import type { Attributes, Authorizer, Decision, NonResourceRule, ResourceRule, Rules } from '../../server/authz.js';
import type { RestStore } from '../../registry/store.js';
import type { KObject } from '../../registry/types.js';
import { isRecord } from '../../util/json-object.js';
import { ruleAllows, rulesOf, subjectIs, subjectsOf, type PolicyRule, type Subject } from './rules.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
export const SYSTEM_MASTERS = 'system:masters';

export interface RbacStores {
  roles: RestStore;
  roleBindings: RestStore;
  clusterRoles: RestStore;
  clusterRoleBindings: RestStore;
}

/** Visits the rules lent to a user; returns false to stop. `source` describes where a rule comes from. */
type Visitor = (source: () => string, rule: PolicyRule | undefined, error?: string) => boolean;

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

  /** VisitRulesFor: the cluster-wide bindings, then those of the namespace. */
  visit(user: UserInfo, namespace: string, visitor: Visitor): void {
    for (const { object: binding } of this.stores.clusterRoleBindings.cache.list().items) {
      const subject = subjectsOf(binding).find((s) => subjectIs(user, s, ''));
      if (!subject) continue;
      const ref = roleRefOf(binding);
      const { rules, error } = ref.kind === 'ClusterRole' ? this.roleReferenceRules(ref, '') : { rules: [], error: `unsupported role reference kind: ${goQuote(ref.kind)}` };
      const source = () => `ClusterRoleBinding ${goQuote(binding.metadata.name)} of ${ref.kind} ${goQuote(ref.name)} to ${describeSubject(subject, '')}`;
      if (error !== undefined && !visitor(source, undefined, error)) return;
      for (const rule of rules) if (!visitor(source, rule)) return;
    }
    if (!namespace) return;
    const bindings = this.stores.roleBindings;
    for (const { object: binding } of bindings.cache.list({ prefix: bindings.namespacePrefix(namespace) }).items) {
      const subject = subjectsOf(binding).find((s) => subjectIs(user, s, namespace));
      if (!subject) continue;
      const ref = roleRefOf(binding);
      const { rules, error } = this.roleReferenceRules(ref, namespace);
      const source = () => `RoleBinding ${goQuote(`${binding.metadata.name}/${namespace}`)} of ${ref.kind} ${goQuote(ref.name)} to ${describeSubject(subject, namespace)}`;
      if (error !== undefined && !visitor(source, undefined, error)) return;
      for (const rule of rules) if (!visitor(source, rule)) return;
    }
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

  private get(store: RestStore, namespace: string | undefined, name: string): KObject | undefined {
    return store.cache.get(store.key(namespace, name))?.object;
  }
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
