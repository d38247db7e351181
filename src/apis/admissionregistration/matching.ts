/**
 * What webhooks and admission policies share: a rule's match of a write (operations, groups, versions,
 * resources and subresources with `*` forms, resource names, scope), a label selector's match of an
 * object, and CEL over admission's variables (`object`, `oldObject`, `request`, `params`,
 * `namespaceObject`, `variables`), compiled once per expression and metered.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { selectorFromLabelSelector, type LabelSelectorSpec } from '../../machinery/labels.js';
import type { AdmissionAttributes } from '../../registry/admission.js';
import type { KObject } from '../../registry/types.js';
import { baseEnvironment, formatIssue, metered, PER_CALL_LIMIT, rewriteSource, runtimeMessage } from '../../schema/cel/env.js';
import { isRecord, type JsonRecord } from '../../util/json-object.js';
import { ESCAPE_KEY_FUNCTION, escapeKey, rewriteConstructions } from './cel-objects.js';

/** A list of strings from JSON (anything else: none). */
export const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** A RuleWithOperations (or NamedRuleWithOperations, with `name`) matching the write. */
export function ruleMatches(rule: JsonRecord, a: AdmissionAttributes, name?: string): boolean {
  const ops = strings(rule.operations);
  if (!ops.includes('*') && !ops.includes(a.operation)) return false;
  const groups = strings(rule.apiGroups);
  if (!groups.includes('*') && !groups.includes(a.resource.group)) return false;
  const versions = strings(rule.apiVersions);
  if (!versions.includes('*') && !versions.includes(a.resource.version)) return false;
  const resource = a.resource.resource;
  const sub = a.subresource;
  const resourceOk = strings(rule.resources).some((r) =>
    r === '*/*' ? true : sub === '' ? r === '*' || r === resource : r === `${resource}/${sub}` || r === `*/${sub}` || r === `${resource}/*`,
  );
  if (!resourceOk) return false;
  const names = strings(rule.resourceNames);
  if (name !== undefined && names.length > 0 && !names.includes(name)) return false;
  const scope = typeof rule.scope === 'string' ? rule.scope : '*';
  if (scope === 'Namespaced') return a.namespace !== '';
  if (scope === 'Cluster') return a.namespace === '';
  return true;
}

/** A label selector's match: the empty one matches everything, any other no missing object. */
export function selectsObject(selector: unknown, obj: KObject | undefined): boolean {
  if (!isRecord(selector) || Object.keys(selector).length === 0) return true;
  if (!obj) return false;
  try {
    return selectorFromLabelSelector(selector as LabelSelectorSpec).matches((isRecord(obj.metadata?.labels) ? obj.metadata.labels : {}) as Record<string, string>);
  } catch {
    return false;
  }
}

type Program = ((ctx?: Record<string, unknown>) => unknown) & { check(): { valid: boolean; type?: string; error?: unknown } };

let env: Environment | undefined;
const programs = new Map<string, { program?: Program; type?: string; error?: string }>();

function environment(): Environment {
  env ??= baseEnvironment()
    .clone()
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('request', 'dyn')
    .registerVariable('params', 'dyn')
    .registerVariable('namespaceObject', 'dyn')
    .registerVariable('variables', 'dyn')
    .registerFunction(`${ESCAPE_KEY_FUNCTION}(string): string`, escapeKey);
  return env;
}

/**
 * An expression checked: its program and result type, or cel-go's issues text. Kept per expression (bounded).
 * A mutating policy's expressions (`mutation`) may construct objects.
 */
export function compileExpression(expression: string, mutation = false): { program?: Program; type?: string; error?: string } {
  const key = mutation ? `\0${expression}` : expression;
  let compiled = programs.get(key);
  if (compiled) return compiled;
  try {
    const p = environment().parse(rewriteSource(mutation ? rewriteConstructions(expression) : expression).src) as unknown as Program;
    const r = p.check();
    compiled = r.valid ? { program: p, type: r.type } : { error: `compilation failed: ${formatIssue(expression, r.error)}` };
  } catch (err) {
    compiled = { error: `compilation failed: ${formatIssue(expression, err)}` };
  }
  if (programs.size >= 10_000) programs.clear();
  programs.set(key, compiled);
  return compiled;
}

/** An expression's value, or what went wrong (cel-go's words), within upstream's per-call cost limit. */
export function evaluateExpression(expression: string, ctx: Record<string, unknown>, mutation = false): { value?: unknown; error?: string } {
  const { program, error } = compileExpression(expression, mutation);
  if (!program) return { error };
  const r = metered(PER_CALL_LIMIT, () => program(ctx));
  if (r.error !== undefined) return { error: runtimeMessage(r.error) };
  return { value: r.value };
}

/** JSON as CEL sees it: whole numbers are ints. */
export function celValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(celValue);
  if (isRecord(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = celValue(x);
    return out;
  }
  return v;
}

/** A mutated object's members as the target's own (defined, never assigned: no key reaches a setter). */
export function replaceContents(target: KObject, source: KObject): void {
  for (const k of Object.keys(target)) delete (target as JsonRecord)[k];
  for (const [k, v] of Object.entries(source)) Object.defineProperty(target, k, { value: v, writable: true, enumerable: true, configurable: true });
}
