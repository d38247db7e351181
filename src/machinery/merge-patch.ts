/**
 * JSON merge patch (RFC 7386) as kube-apiserver applies it (evanphx/json-patch
 * v4 MergePatch), including its quirk of pruning nulls inside objects nested
 * in arrays that replace a non-object; plus CreateMergePatch's diff. Inputs
 * are never mutated, results share no structure with them (but for
 * applyMergePatchSharing's), and nothing
 * recurses (documents may nest 10000 levels deep).
 */
import { copyJson, deepClone } from './json.js';

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The apiserver's 400 text for a patch body that is not an object or array (`null`, `"x"`, `1`). */
export const INVALID_MERGE_PATCH = 'Invalid JSON Patch';

/**
 * The reason the apiserver refuses this merge patch outright, if it does: only objects
 * and arrays are accepted as the top-level patch document.
 */
export function mergePatchError(patch: unknown): string | undefined {
  return typeof patch === 'object' && patch !== null ? undefined : INVALID_MERGE_PATCH;
}

/** Applies `patch` to `target`: null deletes a key, objects merge, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return copyJson(patch, true);
  return mergeInto(isObject(target) ? deepClone(target) : {}, patch, false);
}

/**
 * applyMergePatch that copies only the objects along the patch's paths: every member the
 * patch does not reach is `target`'s own value, shared. For callers that change nothing
 * in the result but what the patch put there (or copy it first).
 */
export function applyMergePatchSharing(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return copyJson(patch, true);
  return mergeInto(isObject(target) ? { ...target } : {}, patch, true);
}

/** Merges `patch` into `doc` in place; with copyOnDescend, objects of `doc` the patch enters are copied first. */
function mergeInto(doc: Obj, patch: Obj, copyOnDescend: boolean): Obj {
  // An explicit stack instead of recursion: patches may nest 10000 levels deep.
  const stack: [Obj, Obj][] = [[doc, patch]];
  while (stack.length) {
    const [d, p] = stack.pop() as [Obj, Obj];
    for (const [k, v] of Object.entries(p)) {
      if (v === null) {
        delete d[k];
        continue;
      }
      const cur = hasOwn(d, k) ? d[k] : undefined;
      if (!isObject(cur)) setOwn(d, k, copyJson(v, true));
      else if (isObject(v)) {
        const into = copyOnDescend ? { ...cur } : cur;
        if (into !== cur) setOwn(d, k, into);
        stack.push([into, v]);
      } else setOwn(d, k, deepClone(v)); // an object replaced by a non-object: the patch value verbatim
    }
  }
  return doc;
}

function hasOwn(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

function setOwn(obj: Obj, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/**
 * The merge patch that turns `original` into `modified` (CreateMergePatch): changed and
 * added members, null for removed ones; `{}` when they are equal. Non-object documents
 * are replaced whole.
 */
export function createMergePatch(original: unknown, modified: unknown): unknown {
  if (!isObject(original) || !isObject(modified)) return deepClone(modified);
  const root: Obj = {};
  // Pre-order frames; nested diffs are attached in place and dropped afterwards if empty.
  const frames: { a: Obj; b: Obj; into: Obj; parent?: Obj; key?: string }[] = [];
  const stack = [{ a: original, b: modified, into: root } as (typeof frames)[number]];
  while (stack.length) {
    const f = stack.pop() as (typeof frames)[number];
    frames.push(f);
    for (const [k, bv] of Object.entries(f.b)) {
      if (!hasOwn(f.a, k)) {
        setOwn(f.into, k, deepClone(bv));
        continue;
      }
      const av = f.a[k];
      if (isObject(av) && isObject(bv)) {
        const into: Obj = {};
        setOwn(f.into, k, into);
        stack.push({ a: av, b: bv, into, parent: f.into, key: k });
      } else if (!jsonEqual(av, bv)) setOwn(f.into, k, deepClone(bv));
    }
    for (const k of Object.keys(f.a)) if (!hasOwn(f.b, k)) setOwn(f.into, k, null);
  }
  for (let i = frames.length - 1; i > 0; i--) {
    const f = frames[i];
    if (Object.keys(f.into).length === 0 && f.parent && f.key !== undefined) delete f.parent[f.key];
  }
  return root;
}

/** Deep equality of JSON values; numbers and BigInts compare by value. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length) {
    const [x, y] = stack.pop() as [unknown, unknown];
    if (x === y) continue;
    if (isNumeric(x) && isNumeric(y)) {
      if (typeof x === typeof y || !Number.isInteger(Number(x)) || !Number.isInteger(Number(y)) || BigInt(x) !== BigInt(y)) return false;
      continue;
    }
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      x.forEach((v, i) => stack.push([v, y[i]]));
      continue;
    }
    if (!isObject(x) || !isObject(y)) return false;
    const keys = Object.keys(x);
    if (keys.length !== Object.keys(y).length) return false;
    for (const k of keys) {
      if (!hasOwn(y, k)) return false;
      stack.push([x[k], y[k]]);
    }
  }
  return true;
}

function isNumeric(v: unknown): v is number | bigint {
  return typeof v === 'number' || typeof v === 'bigint';
}
