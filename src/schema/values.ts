/**
 * JSON values as Go's unstructured decoding sees them: integers that fit int64 are
 * int64 (here: safe integers and bigint), other numbers float64; plus stack-safe
 * deep equality, deep copy and Go's json.Marshal (sorted keys) used for set keys.
 */
import { isRecord, type JsonRecord } from '../util/json-object.js';

export const enum Kind {
  Null,
  Bool,
  Int,
  Float,
  String,
  Array,
  Object,
}

/** A JSON object (one definition for the project, util/json-object.ts). */
export type JsonObject = JsonRecord;

export function kindOf(v: unknown): Kind {
  switch (typeof v) {
    case 'string':
      return Kind.String;
    case 'number':
      return Number.isSafeInteger(v) ? Kind.Int : Kind.Float;
    case 'bigint':
      return Kind.Int;
    case 'boolean':
      return Kind.Bool;
    case 'object':
      if (v === null) return Kind.Null;
      return Array.isArray(v) ? Kind.Array : Kind.Object;
    default:
      return Kind.Null;
  }
}

export const isObject = isRecord;

/** The OpenAPI type name of a value (kube-openapi's schemaInfoForType). */
export const TYPE_NAMES = ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object'];

/** Structural equality (a bigint equals the number it holds); iterative, so any depth is fine. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const stack: unknown[] = [a, b];
  while (stack.length) {
    const y = stack.pop();
    const x = stack.pop();
    if (x === y) continue;
    const tx = typeof x;
    const ty = typeof y;
    if ((tx === 'number' || tx === 'bigint') && (ty === 'number' || ty === 'bigint')) {
      if (tx === ty) return false;
      const [big, num] = tx === 'bigint' ? [x as bigint, y as number] : [y as bigint, x as number];
      if (!Number.isInteger(num) || BigInt(num) !== big) return false;
      continue;
    }
    if (tx !== 'object' || ty !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push(x[i], y[i]);
      continue;
    }
    if (Array.isArray(y)) return false;
    const ox = x as JsonObject;
    const oy = y as JsonObject;
    const kx = Object.keys(ox);
    if (kx.length !== Object.keys(oy).length) return false;
    for (const k of kx) {
      if (!Object.prototype.hasOwnProperty.call(oy, k)) return false;
      stack.push(ox[k], oy[k]);
    }
  }
  return true;
}

/** A deep copy of a JSON value, iterative. */
export function jsonClone<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  const root: unknown = Array.isArray(v) ? new Array(v.length) : {};
  const stack: [unknown, unknown][] = [[v, root]];
  while (stack.length) {
    const [src, dst] = stack.pop() as [JsonObject | unknown[], JsonObject | unknown[]];
    if (Array.isArray(src)) {
      const d = dst as unknown[];
      for (let i = 0; i < src.length; i++) d[i] = copyOne(src[i], stack);
    } else {
      const d = dst as JsonObject;
      for (const k of Object.keys(src)) setOwn(d, k, copyOne(src[k], stack));
    }
  }
  return root as T;
}

function copyOne(x: unknown, stack: [unknown, unknown][]): unknown {
  if (typeof x !== 'object' || x === null) return x;
  const c: unknown = Array.isArray(x) ? new Array(x.length) : {};
  stack.push([x, c]);
  return c;
}

/** Assigns an own property, even for "__proto__". */
export function setOwn(o: JsonObject, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

class Lit {
  constructor(readonly text: string) {}
}

/** Go's json.Marshal of an unstructured value: object keys sorted, no spaces. */
export function goJSON(v: unknown): string {
  const parts: string[] = [];
  const stack: unknown[] = [v];
  while (stack.length) {
    const x = stack.pop();
    if (x instanceof Lit) parts.push(x.text);
    else if (Array.isArray(x)) {
      const items: unknown[] = [new Lit('[')];
      x.forEach((e, i) => {
        if (i) items.push(new Lit(','));
        items.push(e);
      });
      items.push(new Lit(']'));
      for (let i = items.length - 1; i >= 0; i--) stack.push(items[i]);
    } else if (isObject(x)) {
      const items: unknown[] = [new Lit('{')];
      Object.keys(x)
        .sort()
        .forEach((k, i) => items.push(new Lit(`${i ? ',' : ''}${JSON.stringify(k)}:`), x[k]));
      items.push(new Lit('}'));
      for (let i = items.length - 1; i >= 0; i--) stack.push(items[i]);
    } else if (typeof x === 'bigint') parts.push(String(x));
    else parts.push(JSON.stringify(x) ?? 'null');
  }
  return parts.join('');
}

/** dst.push(...src) without the argument-count limit of a spread. */
export function append<T>(dst: T[], src: readonly T[]): void {
  for (let i = 0; i < src.length; i++) dst.push(src[i]);
}
