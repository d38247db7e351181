/**
 * What webhooks and admission policies share: a rule's match of a write (operations, groups, versions,
 * resources and subresources with `*` forms, resource names, scope), a label selector's match of an
 * object, and CEL over admission's variables (`object`, `oldObject`, `request`, `params`,
 * `namespaceObject`, `variables`), compiled once per expression and metered.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { selectorFromLabelSelector, type LabelSelectorSpec } from '../../machinery/labels.js';
import type { AdmissionAttributes } from '../../registry/admission.js';
import type { ApiRegistry, Endpoint } from '../../registry/registry.js';
import type { KObject } from '../../api/object.js';
import { baseEnvironment, formatIssue, metered, PER_CALL_LIMIT, rewriteSource, runtimeMessage } from '../../schema/cel/env.js';
import { isRecord, type JsonRecord } from '../../util/json-object.js';
import { treeOperation } from '../../util/tree-operation.js';
import { CONSTRUCT_FUNCTION, ConstructedObject, ESCAPE_KEY_FUNCTION, escapeKey, lengthError, OPTIONAL_FIELD_FUNCTION, OptionalField, rewriteConstructions } from './cel-objects.js';
import { registerAuthorizerLibrary } from './cel-authorizer.js';

/** A list of strings from JSON (anything else: none). */
export const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** A RuleWithOperations (or NamedRuleWithOperations, with `name`) matching the write (in `resource`'s version). */
export function ruleMatches(rule: JsonRecord, a: AdmissionAttributes, name?: string, target: AdmissionAttributes['resource'] = a.resource): boolean {
  const ops = strings(rule.operations);
  if (!ops.includes('*') && !ops.includes(a.operation)) return false;
  const groups = strings(rule.apiGroups);
  if (!groups.includes('*') && !groups.includes(target.group)) return false;
  const versions = strings(rule.apiVersions);
  if (!versions.includes('*') && !versions.includes(target.version)) return false;
  const resource = target.resource;
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
  env ??= registerAuthorizerLibrary(baseEnvironment().clone())
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('request', 'dyn')
    .registerVariable('params', 'dyn')
    .registerVariable('namespaceObject', 'dyn')
    .registerVariable('variables', 'dyn')
    .registerFunction(`${ESCAPE_KEY_FUNCTION}(string): string`, escapeKey)
    .registerType('kapi.ConstructedObject', ConstructedObject)
    .registerType('kapi.OptionalField', OptionalField)
    .registerFunction(`${OPTIONAL_FIELD_FUNCTION}(optional<dyn>): kapi.OptionalField`, (o: never) => new OptionalField(o))
    .registerFunction(`${CONSTRUCT_FUNCTION}(string, map<string, dyn>): kapi.ConstructedObject`, (type: string, fields: Record<string, unknown>) => new ConstructedObject(type, fields));
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
  const tooLong = lengthError(expression);
  if (tooLong) return { error: `compilation failed: ${tooLong}` };
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
  return celValueOf(v, undefined, undefined);
}

// Objects nest as deep as a request may: a tree operation, not recursion.
const celValueOf = treeOperation<unknown, undefined, undefined, unknown>((v, _y, _z, sub, depth) => {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map((x) => sub(x, undefined, undefined, depth + 1));
  if (isRecord(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = sub(x, undefined, undefined, depth + 1);
    return out;
  }
  return v;
}, undefined);

/** A mutated object's members as the target's own (defined, never assigned: no key reaches a setter). */
export function replaceContents(target: KObject, source: KObject): void {
  for (const k of Object.keys(target)) delete (target as JsonRecord)[k];
  for (const [k, v] of Object.entries(source)) Object.defineProperty(target, k, { value: v, writable: true, enumerable: true, configurable: true });
}

/** A write as one webhook or policy sees it: in the version its rules matched, with the request's own kind. */
export interface VersionedAttributes extends AdmissionAttributes {
  requestKind: AdmissionAttributes['kind'];
  requestResource: AdmissionAttributes['resource'];
  /** A mutated object of this version in the write's (storage) version. */
  toWrite(obj: KObject): KObject | Promise<KObject>;
}

/** The version a rule set matched a write in: the request's own, or another of the same stored resource. */
export interface MatchedVersion {
  resource: AdmissionAttributes['resource'];
  kind: AdmissionAttributes['kind'];
}

/** The other versions (and groups) serving what a write's resource stores, cached until the served resources change. */
const equivalentsCache = new WeakMap<ApiRegistry, { generation: number; byResource: Map<string, Endpoint[]> }>();
function equivalents(a: AdmissionAttributes, registry: ApiRegistry): Endpoint[] {
  let cache = equivalentsCache.get(registry);
  if (!cache || cache.generation !== registry.generation) equivalentsCache.set(registry, (cache = { generation: registry.generation, byResource: new Map() }));
  const key = `${a.resource.group}/${a.resource.version}/${a.resource.resource}`;
  let found = cache.byResource.get(key);
  if (!found) {
    const own = registry.lookup(a.resource.group, a.resource.version, a.resource.resource);
    found = own ? registry.all().filter((e) => e.store === own.store && e !== own) : [];
    cache.byResource.set(key, found);
  }
  return found;
}

/**
 * upstream's matchPolicy: the request's version when a rule matches it; with `Equivalent` (the default), the
 * first other version of the same stored resource a rule matches (its kind, as the webhook will see it).
 */
export function matchedVersion(rules: JsonRecord[], matchPolicy: unknown, a: AdmissionAttributes, registry: ApiRegistry | undefined, name?: string): MatchedVersion | undefined {
  if (rules.some((r) => ruleMatches(r, a, name))) return { resource: a.resource, kind: a.kind };
  if (matchPolicy === 'Exact' || !registry) return undefined;
  for (const e of equivalents(a, registry)) {
    const resource = { group: e.group, version: e.version, resource: e.names.resource };
    if (!rules.some((r) => ruleMatches(r, a, name, resource))) continue;
    // A subresource's own kind (Scale, Binding, Eviction) is the same whichever version of its resource is asked.
    const ownKind = a.subresource === '' || a.subresource === 'status';
    return { resource, kind: ownKind ? { group: e.group, version: e.version, kind: e.names.kind } : a.kind };
  }
  return undefined;
}

const asWritten = new WeakMap<AdmissionAttributes, VersionedAttributes>();

/**
 * The write in a matched version: its objects converted from the stored version when the version differs (the
 * conversions a CRD's webhook needs run first), and the way back for a mutated object.
 */
export async function versionedAttributes(a: AdmissionAttributes, matched: MatchedVersion, registry: ApiRegistry | undefined): Promise<VersionedAttributes> {
  const own = matched.resource === a.resource;
  // The write in its own version, as most webhooks and policies see it: made once per write.
  if (own) {
    const known = asWritten.get(a);
    if (known) return known;
  }
  const apiVersion = matched.kind.group ? `${matched.kind.group}/${matched.kind.version}` : matched.kind.version;
  const endpoint = registry?.lookup(matched.resource.group, matched.resource.version, matched.resource.resource);
  const converts = (o: KObject | undefined): o is KObject => !!o && !!endpoint && o.kind === matched.kind.kind && o.apiVersion !== apiVersion;
  const base = { ...a, kind: matched.kind, resource: matched.resource, requestKind: a.kind, requestResource: a.resource };
  if (!endpoint || (!converts(a.object) && !converts(a.oldObject))) {
    const same: VersionedAttributes = { ...base, toWrite: (o) => o };
    if (own) asWritten.set(a, same);
    return same;
  }
  const objects = [a.object, a.oldObject].filter(converts);
  await endpoint.prepare?.(objects);
  return {
    ...base,
    object: converts(a.object) ? endpoint.toVersion(a.object) : a.object,
    oldObject: converts(a.oldObject) ? endpoint.toVersion(a.oldObject) : a.oldObject,
    toWrite: (o) => endpoint.toStorage(o),
  };
}
