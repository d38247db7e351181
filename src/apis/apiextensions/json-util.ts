/**
 * Small helpers over plain JSON values: deep copy, deep equality (bigint-aware),
 * and a typed "is this a JSON object" guard.
 */

export type JSONObject = Record<string, unknown>;

/** A non-null, non-array object; keeps the static type of typed values, JSONObject for unknown ones. */
export function isObject<T>(v: T): v is unknown extends T ? T & JSONObject : Extract<NonNullable<T>, object> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function clone<T>(v: T): T {
  if (Array.isArray(v)) return v.map((x) => clone(x)) as T;
  if (isObject(v)) {
    const out: JSONObject = {};
    for (const [k, x] of Object.entries(v)) out[k] = clone(x);
    return out as T;
  }
  return v;
}

export { deepEqual } from '../../util/deep-equal.js';

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
