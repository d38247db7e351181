/**
 * RBAC's privilege-escalation prevention, as upstream's policy-based role and binding storages check
 * every create and update (but those that only touch what the garbage collector writes):
 * - a Role or ClusterRole may only hold rules its writer holds, unless the writer may `escalate`
 *   roles; an aggregationRule needs every permission (it can gather anything);
 * - a binding may only lend a role whose rules its writer holds, unless the writer may `bind` it.
 * Members of system:masters (and the server's own writes, which carry no user) are not checked.
 */
import { errors } from '../../machinery/status.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../../registry/admission.js';
import type { KObject } from '../../api/object.js';
import type { Authorizer } from '../../api/authorization.js';
import { deepEqual } from '../../util/deep-equal.js';
import { isRecord } from '../../util/json-object.js';
import { aggregate, RBAC_GROUP, SYSTEM_MASTERS, type RbacResolver } from './authorizer.js';
import { compactRules, compactString, goStrings, rulesOf, uncovered, type PolicyRule } from './rules.js';
import { goQuote } from '../../machinery/go-text.js';

const ROLES = new Set(['roles', 'clusterroles']);
const BINDINGS = new Set(['rolebindings', 'clusterrolebindings']);
const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** IsOnlyMutatingGCFields: the update changes nothing but owner references and finalizers. */
function onlyGcFields(obj: KObject, old: KObject): boolean {
  const strip = (o: KObject) => {
    const { ownerReferences: _o, finalizers: _f, managedFields: _m, resourceVersion: _r, ...metadata } = o.metadata ?? {};
    return { ...o, metadata };
  };
  return deepEqual(strip(obj), strip(old));
}

export function rbacEscalationCheck(authorizer: Authorizer, resolver: RbacResolver): AdmissionPlugin {
  /** ConfirmNoEscalation: the rules of `wanted` the user lacks, as upstream's message lists them. */
  const missing = (a: AdmissionAttributes, wanted: PolicyRule[]): string | undefined => {
    const user = a.user!;
    const held = resolver.rulesFor({ name: user.name, uid: user.uid ?? '', groups: user.groups, extra: user.extra }, a.namespace);
    const lacking = uncovered(held.rules, wanted);
    if (lacking.length === 0) return undefined;
    const lines = [...new Set(compactRules(lacking).map(compactString))].sort();
    let msg = `user ${goQuote(user.name)} (groups=${goStrings(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
    if (held.errors.length > 0) msg += `; resolution errors: [${aggregate(held.errors)}]`;
    return msg;
  };
  const allowed = async (a: AdmissionAttributes, verb: string, resource: string, name: string): Promise<boolean> => {
    const user = a.user!;
    const d = await authorizer.authorize({
      user: { name: user.name, uid: user.uid ?? '', groups: user.groups, extra: user.extra },
      verb,
      resourceRequest: true,
      path: '',
      apiGroup: RBAC_GROUP,
      apiVersion: '*',
      resource,
      subresource: '',
      namespace: a.namespace,
      name,
    });
    return d.decision === 'allow';
  };
  const check = async (a: AdmissionAttributes, obj: KObject, resource: string): Promise<void> => {
    const gr = { group: RBAC_GROUP, resource };
    if (ROLES.has(resource)) {
      // The request's own name: none for a create (its URL names no object).
      if (await allowed(a, 'escalate', resource, a.operation === 'CREATE' ? '' : a.name)) return;
      const lacking = missing(a, rulesOf(obj));
      if (lacking) throw errors.forbidden(gr, a.name, lacking);
      // Setting an aggregationRule, or taking one away, needs every permission (hasAggregationRule of either).
      const aggregates = isRecord(obj.aggregationRule) || (a.operation === 'UPDATE' && isRecord(a.oldObject?.aggregationRule));
      if (resource === 'clusterroles' && aggregates && missing(a, FULL_AUTHORITY)) {
        throw errors.forbidden(gr, a.name, 'must have cluster-admin privileges to use the aggregationRule');
      }
      return;
    }
    const ref = isRecord(obj.roleRef) ? obj.roleRef : {};
    const kind = typeof ref.kind === 'string' ? ref.kind : '';
    const roleName = typeof ref.name === 'string' ? ref.name : '';
    if ((kind === 'Role' || kind === 'ClusterRole') && (await allowed(a, 'bind', kind === 'Role' ? 'roles' : 'clusterroles', roleName))) return;
    const { rules, error } = resolver.roleReferenceRules({ kind, name: roleName }, a.namespace);
    if (error !== undefined) throw errors.forbidden(gr, a.name, error);
    const lacking = missing(a, rules);
    if (lacking) throw errors.forbidden(gr, a.name, lacking);
  };
  return {
    name: 'RBACEscalation',
    // Synchronous for every other write: no promise where there is nothing to check.
    validate(a) {
      const { resource } = a.resource;
      if (a.resource.group !== RBAC_GROUP || a.operation === 'DELETE' || !a.object || a.subresource) return;
      if (!ROLES.has(resource) && !BINDINGS.has(resource)) return;
      if (!a.user || a.user.groups.includes(SYSTEM_MASTERS)) return;
      if (a.operation === 'UPDATE' && a.oldObject && onlyGcFields(a.object, a.oldObject)) return;
      return check(a, a.object, resource);
    },
  };
}
