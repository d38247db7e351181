/**
 * OpenAPI schemas as plain JSON objects, with the helpers every part of the
 * publisher shares: reference prefixes of v2 and v3, the key order kube-openapi
 * writes, the v3 form of a v2 schema (component refs, refs with siblings
 * wrapped in allOf) and the set of definitions a schema refers to.
 */
import type { KObject } from '../api/object.js';

// A JSON schema object; kept loose on purpose (any JSON may appear in default, enum, example).
export type Schema = KObject;

export const V2_PREFIX = '#/definitions/';
export const V3_PREFIX = '#/components/schemas/';

export const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
export const LIST_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';
export const STATUS = 'io.k8s.apimachinery.pkg.apis.meta.v1.Status';
export const DELETE_OPTIONS = 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions';
export const PATCH = 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch';
export const SCALE = 'io.k8s.api.autoscaling.v1.Scale';

export const GVK_EXTENSION = 'x-kubernetes-group-version-kind';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export function ref(name: string, description?: string): Schema {
  return description ? { description, $ref: V2_PREFIX + name } : { $ref: V2_PREFIX + name };
}

/** The extension value kube-openapi writes (map keys sorted, as Go marshals maps). */
export function gvkExtension(gvk: GroupVersionKind): { group: string; kind: string; version: string }[] {
  return [{ group: gvk.group, kind: gvk.kind, version: gvk.version }];
}

/** The order of spec.Schema's JSON fields; vendor extensions come after, sorted. */
const SCHEMA_KEY_ORDER = [
  'id',
  '$ref',
  '$schema',
  'description',
  'type',
  'nullable',
  'format',
  'title',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'properties',
  'additionalProperties',
  'patternProperties',
  'dependencies',
  'additionalItems',
  'definitions',
  'discriminator',
  'readOnly',
  'xml',
  'externalDocs',
  'example',
];
const KEY_RANK = new Map(SCHEMA_KEY_ORDER.map((k, i) => [k, i]));

/** The schema's own keys in kube-openapi's order (properties sorted, extensions last and sorted); not recursive. */
export function orderKeys(s: Schema): Schema {
  const keys = Object.keys(s).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const out: Schema = {};
  for (const k of keys) out[k] = k === 'properties' ? sortedObject(s[k]) : s[k];
  return out;
}

function rank(k: string): number {
  return KEY_RANK.get(k) ?? (k.startsWith('x-') ? 1000 : 2000);
}

export function sortedObject<T>(o: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k];
  return out;
}

/** Visits every schema node under s (properties, items, additionalProperties, junctors, not). */
export function forEachSubschema(s: Schema, f: (child: Schema) => void): void {
  if (s.properties && typeof s.properties === 'object') for (const v of Object.values(s.properties)) f(v as Schema);
  if (s.items && typeof s.items === 'object' && !Array.isArray(s.items)) f(s.items);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') f(s.additionalProperties);
  for (const j of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[j])) for (const x of s[j]) f(x);
  if (s.not && typeof s.not === 'object') f(s.not);
}

/** The names of the definitions a schema refers to, directly. */
export function refsOf(s: Schema, out = new Set<string>()): Set<string> {
  const stack: Schema[] = [s];
  while (stack.length) {
    const cur = stack.pop() as Schema;
    if (typeof cur.$ref === 'string' && cur.$ref.startsWith(V2_PREFIX)) out.add(cur.$ref.slice(V2_PREFIX.length));
    forEachSubschema(cur, (c) => stack.push(c));
  }
  return out;
}

/** The transitive closure of refs from the given names, over the definitions lookup. */
export function refClosure(names: Iterable<string>, lookup: (name: string) => Schema | undefined): Set<string> {
  const seen = new Set<string>();
  const stack = [...names];
  while (stack.length) {
    const n = stack.pop() as string;
    if (seen.has(n)) continue;
    const def = lookup(n);
    if (!def) continue;
    seen.add(n);
    for (const r of refsOf(def)) if (!seen.has(r)) stack.push(r);
  }
  return seen;
}

/**
 * The OpenAPI v3 form of a v2-style schema: refs point into components/schemas, and a
 * ref with sibling fields is wrapped as `allOf: [{$ref}]` (kube-openapi's WrapRefs).
 */
export function toV3Schema(s: Schema): Schema {
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' && v && typeof v === 'object') {
      const props: Schema = {};
      for (const [pk, pv] of Object.entries(v)) props[pk] = toV3Schema(pv as Schema);
      out[k] = props;
    } else if ((k === 'items' || k === 'additionalProperties' || k === 'not') && v && typeof v === 'object' && !Array.isArray(v)) {
      out[k] = toV3Schema(v as Schema);
    } else if ((k === 'allOf' || k === 'anyOf' || k === 'oneOf') && Array.isArray(v)) {
      out[k] = v.map((x) => toV3Schema(x as Schema));
    } else out[k] = v;
  }
  if (typeof out.$ref === 'string') {
    const target = out.$ref.replace(V2_PREFIX, V3_PREFIX);
    if (Object.keys(out).length === 1) return { $ref: target };
    delete out.$ref;
    return orderKeys({ ...out, allOf: [{ $ref: target }, ...(Array.isArray(out.allOf) ? out.allOf : [])] });
  }
  return out;
}
