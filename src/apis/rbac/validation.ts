/**
 * RBAC objects' validation, as upstream's rbac validation: rules with verbs, and either resources (with
 * API groups) or non-resource URLs (not in namespaced Roles);
 * an aggregationRule with at least one selector; bindings whose roleRef names a Role or ClusterRole of
 * this group (a ClusterRoleBinding a ClusterRole) and never changes, and whose subjects are Users or
 * Groups of this group or ServiceAccounts (with a namespace in a ClusterRoleBinding).
 */
import { field, type FieldError } from '../../machinery/field-errors.js';
import { isDNS1123Subdomain, validatePathSegmentName } from '../../machinery/validation.js';
import type { Strategy } from '../../registry/types.js';
import type { KObject } from '../../api/object.js';
import { deepEqual } from '../../util/deep-equal.js';
import { isRecord, records } from '../../util/json-object.js';
import { RBAC_GROUP } from './authorizer.js';

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function ruleErrors(rules: unknown, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  records(rules).forEach((rule, i) => {
    const p = `rules[${i}]`;
    if (list(rule.verbs).length === 0) errs.push(field.required(`${p}.verbs`, 'verbs must contain at least one value'));
    const urls = list(rule.nonResourceURLs);
    if (urls.length > 0) {
      if (namespaced) errs.push(field.invalid(`${p}.nonResourceURLs`, urls, 'namespaced rules cannot apply to non-resource URLs'));
      if (list(rule.apiGroups).length > 0 || list(rule.resources).length > 0 || list(rule.resourceNames).length > 0) {
        errs.push(field.invalid(`${p}.nonResourceURLs`, urls, 'rules cannot apply to both regular resources and non-resource URLs'));
      }
      return;
    }
    if (list(rule.apiGroups).length === 0) errs.push(field.required(`${p}.apiGroups`, 'resource rules must supply at least one api group'));
    if (list(rule.resources).length === 0) errs.push(field.required(`${p}.resources`, 'resource rules must supply at least one resource'));
  });
  return errs;
}

function aggregationErrors(role: KObject): FieldError[] {
  if (!isRecord(role.aggregationRule)) return [];
  if (list(role.aggregationRule.clusterRoleSelectors).length === 0) {
    return [field.required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil')];
  }
  return [];
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

function bindingErrors(binding: KObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
  if (str(ref.apiGroup) !== RBAC_GROUP) errs.push(field.notSupported('roleRef.apiGroup', str(ref.apiGroup), [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(str(ref.kind))) errs.push(field.notSupported('roleRef.kind', str(ref.kind), kinds));
  if (!str(ref.name)) errs.push(field.required('roleRef.name', ''));
  else for (const msg of validatePathSegmentName(str(ref.name), false)) errs.push(field.invalid('roleRef.name', str(ref.name), msg));
  records(binding.subjects).forEach((s, i) => {
    const p = `subjects[${i}]`;
    const name = str(s.name);
    const apiGroup = str(s.apiGroup);
    if (!name) errs.push(field.required(`${p}.name`, ''));
    switch (s.kind) {
      case 'ServiceAccount':
        if (name) for (const msg of isDNS1123Subdomain(name)) errs.push(field.invalid(`${p}.name`, name, msg));
        if (apiGroup) errs.push(field.notSupported(`${p}.apiGroup`, apiGroup, ['']));
        if (!namespaced && !str(s.namespace)) errs.push(field.required(`${p}.namespace`, ''));
        break;
      case 'User':
      case 'Group':
        if (!name) errs.push(field.invalid(`${p}.name`, name, `${s.kind === 'User' ? 'user' : 'group'} name cannot be empty`));
        if (apiGroup !== RBAC_GROUP) errs.push(field.notSupported(`${p}.apiGroup`, apiGroup, [RBAC_GROUP]));
        break;
      default:
        errs.push(field.notSupported(`${p}.kind`, str(s.kind), ['ServiceAccount', 'User', 'Group']));
    }
  });
  return errs;
}

/** roleRef as upstream's internal RoleRef prints in "cannot change roleRef" (JSON of a struct without tags). */
function roleRefValue(ref: unknown): Record<string, string> {
  const r = isRecord(ref) ? ref : {};
  return { APIGroup: str(r.apiGroup), Kind: str(r.kind), Name: str(r.name) };
}

/** The strategy of one RBAC kind, on top of `base`. */
export function rbacStrategy(base: Strategy, kind: 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding'): Strategy {
  const namespaced = kind === 'Role' || kind === 'RoleBinding';
  const validate = (obj: KObject): FieldError[] =>
    kind === 'Role' || kind === 'ClusterRole' ? [...ruleErrors(obj.rules, namespaced), ...(kind === 'ClusterRole' ? aggregationErrors(obj) : [])] : bindingErrors(obj, namespaced);
  return {
    ...base,
    nameRule: validatePathSegmentName,
    validate,
    validateUpdate(obj, old) {
      const errs = validate(obj);
      if ((kind === 'RoleBinding' || kind === 'ClusterRoleBinding') && !deepEqual(roleRefValue(obj.roleRef), roleRefValue(old.roleRef))) {
        errs.push(field.invalid('roleRef', roleRefValue(obj.roleRef), 'cannot change roleRef'));
      }
      return errs;
    },
  };
}
