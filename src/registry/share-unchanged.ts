/**
 * Structural sharing between an updated object and the cached object it replaces.
 *
 * An update builds its object from a deep copy of the cached one, so without
 * this every write would put a whole new object graph in the cache, although a
 * status update changes only `status` and a few metadata members. Pointing the
 * unchanged members back at the old object's values means the young generation
 * keeps far fewer objects alive at each scavenge, and the cache holds less.
 *
 * Safe because cached objects are never mutated (see Store.decode). The new
 * object itself and its `metadata` stay its own: the store sets
 * `metadata.resourceVersion` on them once the write commits.
 */
import { setOwn } from '../machinery/json-decoder.js';
import { deepEqual } from '../util/deep-equal.js';

type Json = Record<string, unknown>;

// Past this depth the rest of a subtree is compared, not shared (deepEqual).
const SHARE_DEPTH = 64;

/**
 * Gives `next`'s members that equal `prev`'s the values of `prev`, in place;
 * returns whether the two objects are equal (as deepEqual would say).
 */
export function shareUnchanged(next: Json, prev: Json): boolean {
  return shareMembers(next, prev, 0);
}

/** Compares next[k] (= v) with p, and when equal points next[k] at p. */
function share(next: Json | unknown[], k: string | number, v: unknown, p: unknown, depth: number): boolean {
  if (v === p) return true;
  let equal: boolean;
  // A frozen value (a shared fieldsV1 set) cannot take members: it is compared whole.
  if (typeof v !== 'object' || v === null || typeof p !== 'object' || p === null || depth > SHARE_DEPTH || Object.isFrozen(v)) equal = deepEqual(v, p);
  else if (Array.isArray(v)) equal = Array.isArray(p) && shareElements(v, p, depth);
  else equal = !Array.isArray(p) && shareMembers(v as Json, p as Json, depth);
  if (equal) {
    if (typeof k === 'number') (next as unknown[])[k] = p;
    else setOwn(next as Json, k, p);
  }
  return equal;
}

function shareMembers(v: Json, p: Json, depth: number): boolean {
  let equal = true;
  let defined = 0;
  for (const k in v) {
    const m = v[k];
    if (m === undefined) continue;
    defined++;
    if (!Object.prototype.hasOwnProperty.call(p, k)) equal = false;
    else if (depth === 0 && k === 'metadata' && isObject(m) && isObject(p[k])) {
      // Members of metadata may be shared, metadata itself not.
      if (!shareMembers(m, p[k] as Json, 1)) equal = false;
    } else if (!share(v, k, m, p[k], depth + 1)) equal = false;
  }
  return equal && defined === definedCount(p);
}

function shareElements(v: unknown[], p: unknown[], depth: number): boolean {
  // Lists of another length are not aligned: their items are compared as a whole.
  if (v.length !== p.length) return false;
  let equal = true;
  for (let i = 0; i < v.length; i++) if (!share(v, i, v[i], p[i], depth + 1)) equal = false;
  return equal;
}

function definedCount(o: Json): number {
  let n = 0;
  for (const k in o) if (o[k] !== undefined) n++;
  return n;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
