/**
 * Defaulting (schema/defaulting): missing fields with a `default` get a deep copy
 * of it, and so do nulls where the schema is not nullable; defaults apply inside
 * array items and additionalProperties, recursively into defaulted values. Also
 * PruneDefaults: defaults are pruned once, when a schema is compiled, the way the
 * CRD handler prepares them (a default is placed in a surrounding object so that
 * metadata defaults are coerced and pruned like metadata).
 */
import { coerceMetadata } from './objectmeta.js';
import { pruneObject } from './prune.js';
import { HAS_DEFAULT, type Structural } from './types.js';
import { isObject, jsonClone, jsonEqual, setOwn, type JsonObject } from './values.js';

const isNonNullableNull = (x: unknown, s: Structural | undefined): boolean => x === null && s !== undefined && !s.nullable;

/** What defaulting has to look at in an object node: precomputed once per schema node. */
interface Plan {
  /** properties with a default */
  withDefault: [string, Structural][];
  /** properties with defaults below them */
  below: [string, Structural][];
  /** additionalProperties, when it has defaults */
  additional: Structural | undefined;
}

const plans = new WeakMap<Structural, Plan>();

function planOf(s: Structural): Plan {
  let p = plans.get(s);
  if (!p) {
    const props = [...(s.properties ?? [])];
    const ap = s.additionalProperties?.schema;
    p = {
      withDefault: props.filter(([, x]) => x.hasDefault),
      below: props.filter(([, x]) => x.subtree & HAS_DEFAULT),
      additional: ap && ap.subtree & HAS_DEFAULT ? ap : undefined,
    };
    plans.set(s, p);
  }
  return p;
}

/** Applies defaults of s to x in place; nodes without defaults below them are skipped. Returns whether anything changed. */
export function applyDefaults(x: unknown, s: Structural | undefined): boolean {
  if (!s || !(s.subtree & HAS_DEFAULT)) return false;
  let changed = false;
  if (Array.isArray(x)) {
    const items = s.items as Structural;
    for (let i = 0; i < x.length; i++) {
      if (isNonNullableNull(x[i], items)) {
        x[i] = jsonClone(items.default ?? null);
        changed = true;
      }
      if (applyDefaults(x[i], items)) changed = true;
    }
    return changed;
  }
  if (!isObject(x)) return false;
  const plan = planOf(s);
  for (const [k, prop] of plan.withDefault) {
    if (!Object.prototype.hasOwnProperty.call(x, k) || isNonNullableNull(x[k], prop)) {
      setOwn(x, k, jsonClone(prop.default));
      changed = true;
    }
  }
  for (const [k, prop] of plan.below) if (Object.prototype.hasOwnProperty.call(x, k) && applyDefaults(x[k], prop)) changed = true;
  const ap = plan.additional;
  if (ap) {
    for (const k of Object.keys(x)) {
      if (s.properties?.has(k)) continue;
      if (isNonNullableNull(x[k], ap)) {
        x[k] = jsonClone(ap.default ?? null);
        changed = true;
      }
      if (applyDefaults(x[k], ap)) changed = true;
    }
  }
  return changed;
}

/** Whether any node of s below (or at) it has a default; lets callers skip defaulting. */
export function hasDefaults(s: Structural | undefined): boolean {
  if (!s) return false;
  if (s.hasDefault) return true;
  if (hasDefaults(s.items) || hasDefaults(s.additionalProperties?.schema)) return true;
  for (const p of s.properties?.values() ?? []) if (hasDefaults(p)) return true;
  return false;
}

/** A surrounding object for a value at a path: Child(k) and Index() steps from the resource root. */
type Step = { key: string } | { index: true };

function surround(steps: Step[], value: unknown): JsonObject {
  let v = value;
  for (let i = steps.length - 1; i >= 0; i--) {
    const st = steps[i];
    v = 'key' in st ? { [st.key]: v } : [v];
  }
  return v as JsonObject;
}

function access(steps: Step[], root: unknown): { found: boolean; value?: unknown } {
  let v = root;
  for (const st of steps) {
    if ('key' in st) {
      if (!isObject(v) || !Object.prototype.hasOwnProperty.call(v, st.key)) return { found: false };
      v = v[st.key];
    } else {
      if (!Array.isArray(v) || v.length === 0) return { found: false };
      v = v[0];
    }
  }
  return { found: true, value: v };
}

/**
 * PruneDefaults: prunes every default against the schema of the resource it is part
 * of (with ObjectMeta coercion); mutates the schema. Returns whether anything changed.
 */
export function pruneDefaults(root: Structural): boolean {
  return walkDefaults(root, root, []);
}

function walkDefaults(s: Structural, root: Structural, steps: Step[]): boolean {
  let changed = false;
  if (s.hasDefault && isObjectRootable(steps, s.default)) {
    const orig = s.default;
    const obj = surround(steps, jsonClone(s.default));
    coerceMetadata(obj, '', undefined, true, false);
    pruneObject(obj, root, true, false);
    const acc = access(steps, obj);
    const next = acc.found ? acc.value : undefined;
    if (!jsonEqual(orig, next)) {
      s.default = next;
      s.hasDefault = next !== undefined && next !== null;
      changed = true;
    }
  }
  const ap = s.additionalProperties?.schema;
  if (ap && walkDefaults(ap, root, [...steps, { key: '*' }])) changed = true;
  if (s.items && walkDefaults(s.items, root, [...steps, { index: true }])) changed = true;
  for (const [k, p] of s.properties ?? []) if (walkDefaults(p, root, [...steps, { key: k }])) changed = true;
  return changed;
}

/** The root object func requires an object at the top: a non-object default at the root cannot be pruned. */
function isObjectRootable(steps: Step[], v: unknown): boolean {
  return steps.length > 0 || isObject(v);
}
