/**
 * RBAC's policy rules as upstream's rbac/v1 helpers read them: whether a rule allows a request's
 * attributes (RuleAllows), whether a binding's subject is a user (appliesTo), whether one set of
 * rules covers another (the escalation check's Covers, on rules broken down to one verb, group,
 * resource and name each), and the compact text of a rule in escalation messages.
 */
import { goQuote } from '../../machinery/go-text.js';
import type { UserInfo } from '../../api/authentication.js';
import type { Attributes } from '../../api/authorization.js';
import { isRecord, records } from '../../util/json-object.js';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

const ALL = '*';
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

// Stored objects are shared and never changed: what is read from one is kept with it.
const parsedRules = new WeakMap<object, PolicyRule[]>();
const parsedSubjects = new WeakMap<object, Subject[]>();

/** The rules of a stored Role or ClusterRole (malformed entries dropped). */
export function rulesOf(role: unknown): PolicyRule[] {
  if (!isRecord(role)) return [];
  let rules = parsedRules.get(role);
  if (!rules) parsedRules.set(role, (rules = parseRules(role)));
  return rules;
}

function parseRules(role: Record<string, unknown>): PolicyRule[] {
  return records(role.rules).map((r) => {
    const rule: PolicyRule = { verbs: strings(r.verbs) };
    for (const key of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) if (Array.isArray(r[key])) rule[key] = strings(r[key]);
    return rule;
  });
}

/** The subjects of a stored binding. */
export function subjectsOf(binding: unknown): Subject[] {
  if (!isRecord(binding)) return [];
  let subjects = parsedSubjects.get(binding);
  if (!subjects) parsedSubjects.set(binding, (subjects = parseSubjects(binding)));
  return subjects;
}

function parseSubjects(binding: Record<string, unknown>): Subject[] {
  return records(binding.subjects).map((s) => ({
    kind: typeof s.kind === 'string' ? s.kind : '',
    name: typeof s.name === 'string' ? s.name : '',
    namespace: typeof s.namespace === 'string' ? s.namespace : undefined,
    apiGroup: typeof s.apiGroup === 'string' ? s.apiGroup : undefined,
  }));
}

const has = (list: readonly string[] | undefined, v: string) => list !== undefined && list.includes(v);

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === ALL || r === combined) return true;
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === ALL || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
}

/** RuleAllows: the rule grants the request. */
export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  const verbs = rule.verbs;
  if (!has(verbs, ALL) && !has(verbs, a.verb)) return false;
  if (!a.resourceRequest) return nonResourceURLMatches(rule, a.path);
  if (!has(rule.apiGroups, ALL) && !has(rule.apiGroups, a.apiGroup)) return false;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  if (!resourceMatches(rule, combined, a.subresource)) return false;
  return !rule.resourceNames?.length || rule.resourceNames.includes(a.name);
}

export const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** appliesTo: the subject is this user (a ServiceAccount without a namespace is in the binding's). */
export function subjectIs(user: UserInfo, s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.name === s.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return ns !== '' && user.name === `${SERVICE_ACCOUNT_PREFIX}${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

/** BreakdownRule: one rule per group, resource, verb and name (or URL and verb). */
function breakdown(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        if (rule.resourceNames?.length) for (const name of rule.resourceNames) out.push({ apiGroups: [group], resources: [resource], resourceNames: [name], verbs: [verb] });
        else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

function resourcesCover(owner: readonly string[], wanted: readonly string[]): boolean {
  if (owner.includes(ALL) || wanted.every((r) => owner.includes(r))) return true;
  return wanted.every((r) => owner.includes(r) || (r.includes('/') && owner.includes(`*/${r.slice(r.indexOf('/') + 1)}`)));
}

function urlsCover(owner: readonly string[], wanted: readonly string[]): boolean {
  return wanted.every((u) => owner.some((o) => o === ALL || o === u || (o.endsWith('*') && u.startsWith(o.slice(0, -1)))));
}

function ruleCovers(owner: PolicyRule, wanted: PolicyRule): boolean {
  if (!owner.verbs.includes(ALL) && !wanted.verbs.every((v) => owner.verbs.includes(v))) return false;
  const groups = owner.apiGroups ?? [];
  if (!groups.includes(ALL) && !(wanted.apiGroups ?? []).every((g) => groups.includes(g))) return false;
  if (!resourcesCover(owner.resources ?? [], wanted.resources ?? [])) return false;
  if (!urlsCover(owner.nonResourceURLs ?? [], wanted.nonResourceURLs ?? [])) return false;
  // A rule for every name is covered only by one for every name.
  if (!wanted.resourceNames?.length) return !owner.resourceNames?.length;
  return !owner.resourceNames?.length || wanted.resourceNames.every((n) => owner.resourceNames!.includes(n));
}

/** Beyond this many broken-down rules, a rule no single held rule covers is reported whole (its expansion is the writer's to pay). */
const MAX_BREAKDOWN = 10_000;

/** Covers: the broken-down rules of `wanted` that no rule of `owner` covers (none: owner holds them all). */
export function uncovered(owner: readonly PolicyRule[], wanted: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const rule of wanted) {
    // Covered whole by one held rule: nothing to break down.
    if (owner.some((o) => ruleCovers(o, rule))) continue;
    const size =
      (rule.apiGroups?.length ?? 0) * (rule.resources?.length ?? 0) * rule.verbs.length * Math.max(1, rule.resourceNames?.length ?? 0) + (rule.nonResourceURLs?.length ?? 0) * rule.verbs.length;
    if (size > MAX_BREAKDOWN) {
      out.push(rule);
      continue;
    }
    for (const r of breakdown(rule)) if (!owner.some((o) => ruleCovers(o, r))) out.push(r);
  }
  return out;
}

/** CompactRules: rules of one group and resource (no names or URLs) that differ only in verbs become one. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const single = r.apiGroups?.length === 1 && r.resources?.length === 1 && !r.resourceNames?.length && !r.nonResourceURLs?.length;
    if (!single) {
      out.push(r);
      continue;
    }
    const key = `${r.apiGroups![0]}\u0000${r.resources![0]}`;
    const existing = simple.get(key);
    if (existing) existing.verbs.push(...r.verbs.filter((v) => !existing.verbs.includes(v)));
    else {
      const copy = { apiGroups: [...r.apiGroups!], resources: [...r.resources!], verbs: [...r.verbs] };
      simple.set(key, copy);
      out.push(copy);
    }
  }
  return out;
}

const quoted = (list: readonly string[]) => `[${list.map(goQuote).join(' ')}]`;

/** CompactString: `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${quoted(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${quoted(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${quoted(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${quoted(r.resourceNames)}`);
  if (r.verbs.length) parts.push(`Verbs:${quoted(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** Go's %q of a []string, as messages print a user's groups. */
export const goStrings = quoted;
