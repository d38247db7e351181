/**
 * Small helpers over plain JSON values: deep copy, deep equality (bigint-aware),
 * and a typed "is this a JSON object" guard.
 */

import { deepCloneMutable } from '../../machinery/json.js';

export type JSONObject = Record<string, unknown>;

/** A non-null, non-array object; keeps the static type of typed values, JSONObject for unknown ones. */
export function isObject<T>(v: T): v is unknown extends T ? T & JSONObject : Extract<NonNullable<T>, object> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A deep copy that shares nothing (CRDs nest as deep as a request may: no recursion). */
export function clone<T>(v: T): T {
  return deepCloneMutable(v);
}

export { deepEqual } from '../../util/deep-equal.js';

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
