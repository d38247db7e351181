/**
 * ValidatingAdmissionPolicy type checking, as upstream's TypeChecker: each validation's expression and
 * messageExpression is compiled once per kind the policy's matchConstraints name explicitly (groups and
 * versions without wildcards, resources without wildcards or subresources), with `object` and `oldObject`
 * typed by that kind's schema. What does not check (a field the kind does not have, a comparison of the
 * wrong types) becomes a warning in `status.typeChecking.expressionWarnings`, as
 * `<group>/<version>, Kind=<kind>: <cel-go issues>`.
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { ApiRegistry, Endpoint } from '../../registry/registry.js';
import { declOf, objectsEqual, type TypeRegistry } from '../../schema/cel/decl.js';
import { baseEnvironment, formatIssue, rewriteSource } from '../../schema/cel/env.js';
import { records, type JsonRecord } from '../../util/json-object.js';
import { registerAuthorizerLibrary } from './cel-authorizer.js';
import { strings } from './matching.js';

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

interface Target {
  group: string;
  version: string;
  kind: string;
  endpoint: Endpoint;
}

/** upstream's maxTypesToCheck. */
const MAX_TYPES_TO_CHECK = 10;
let registries = 0;
const environments = new WeakMap<Endpoint, Environment | null>();

/** The admission variables with `object` and `oldObject` of the endpoint's kind (null: its schema cannot be typed). */
function typedEnvironment(endpoint: Endpoint): Environment | null {
  if (environments.has(endpoint)) return environments.get(endpoint)!;
  let env: Environment | null = null;
  const schema = endpoint.celSchema?.();
  if (schema) {
    const reg: TypeRegistry = { objects: [], next: 0, prefix: `${endpoint.names.kind}${++registries}_` };
    const decl = declOf(schema, true, reg);
    if (decl) {
      const e = baseEnvironment().clone();
      for (const d of reg.objects) {
        e.registerType(d.name, { ctor: d.cls as new (...a: unknown[]) => unknown, fields: Object.fromEntries([...(d.fields ?? [])].map(([n, f]) => [n, f.decl.name])) });
      }
      for (const d of reg.objects) e.registerOperator(`${d.name} == ${d.name}`, objectsEqual);
      registerAuthorizerLibrary(e);
      e.registerVariable('object', decl.name).registerVariable('oldObject', decl.name);
      for (const v of ['request', 'params', 'namespaceObject', 'variables']) e.registerVariable(v, 'dyn');
      env = e;
    }
  }
  environments.set(endpoint, env);
  return env;
}

/** The kinds a policy's rules name explicitly, sorted by group, version and kind. */
function typesToCheck(spec: JsonRecord, registry: ApiRegistry): Target[] {
  const found = new Map<string, Target>();
  for (const rule of records((spec.matchConstraints as JsonRecord | undefined)?.resourceRules)) {
    const groups = strings(rule.apiGroups);
    const versions = strings(rule.apiVersions);
    if (groups.length === 0 || versions.length === 0 || groups.some((g) => g.includes('*')) || versions.some((v) => v.includes('*'))) continue;
    const resources = strings(rule.resources).filter((r) => !/[*/]/.test(r));
    for (const group of groups) {
      for (const version of versions) {
        for (const resource of resources) {
          const endpoint = registry.lookup(group, version, resource);
          if (endpoint) found.set(`${group}/${version}/${endpoint.names.kind}`, { group, version, kind: endpoint.names.kind, endpoint });
        }
      }
    }
  }
  // As upstream: a policy naming more kinds than this is not type checked at all.
  if (found.size > MAX_TYPES_TO_CHECK) return [];
  const key = (t: Target) => [t.group, t.version, t.kind];
  return [...found.values()].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
  });
}

/** The issues of one expression checked against one kind (undefined: none, or the kind cannot be typed). */
function issues(expression: string, target: Target): string | undefined {
  const env = typedEnvironment(target.endpoint);
  if (!env) return undefined;
  try {
    const r = (env.parse(rewriteSource(expression).src) as unknown as { check(): { valid: boolean; error?: unknown } }).check();
    return r.valid ? undefined : formatIssue(expression, r.error);
  } catch (err) {
    return formatIssue(expression, err);
  }
}

/** The warnings of a ValidatingAdmissionPolicy's spec, in upstream's order and words. */
export function typeCheckPolicy(spec: JsonRecord, registry: ApiRegistry): ExpressionWarning[] {
  const targets = typesToCheck(spec, registry);
  if (targets.length === 0) return [];
  const warnings: ExpressionWarning[] = [];
  records(spec.validations).forEach((v, i) => {
    for (const field of ['expression', 'messageExpression'] as const) {
      const expression = v[field];
      if (typeof expression !== 'string' || expression === '') continue;
      const found = targets.flatMap((t) => {
        const issue = issues(expression, t);
        return issue ? [`${t.group}/${t.version}, Kind=${t.kind}: ${issue}\n`] : [];
      });
      if (found.length > 0) warnings.push({ fieldRef: `spec.validations[${i}].${field}`, warning: found.join('\n') });
    }
  });
  return warnings;
}
