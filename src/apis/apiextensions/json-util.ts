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

/** Structural equality of JSON values; key order does not matter, `1n` equals `1`. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    if (typeof a === typeof b) return false;
    const [big, num] = typeof a === 'bigint' ? [a, b as number] : [b as bigint, a as number];
    return Number.isInteger(num) && BigInt(num) === big;
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
