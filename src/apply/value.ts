/**
 * JSON values as structured-merge-diff's value package sees them: kinds, its
 * total order (numbers < strings < booleans < lists < maps < null), equality
 * (integers and floats compare numerically), Go's JSON encoding of key values
 * (sorted keys, HTML-safe escapes) and Go's %v rendering for messages.
 * Numbers may be `number` or `bigint` (int64 beyond 2^53).
 */
import { compareGoStrings, formatGoFloat } from '../machinery/go-text.js';

export type JsonMap = Record<string, unknown>;

export function isMap(v: unknown): v is JsonMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isScalar(v: unknown): v is string | number | bigint | boolean {
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'bigint' || t === 'boolean';
}

function isNumber(v: unknown): v is number | bigint {
  return typeof v === 'number' || typeof v === 'bigint';
}

/** The members of a map that are present (a JS `undefined` counts as absent). */
export function mapKeys(m: JsonMap): string[] {
  const keys = Object.keys(m);
  for (let i = 0; i < keys.length; i++) {
    if (m[keys[i]] === undefined) return keys.filter((k) => m[k] !== undefined);
  }
  return keys;
}

export function hasOwn(m: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(m, k);
}

/** A member of `m`, or undefined when absent (never an inherited property). */
export function getOwn(m: JsonMap, k: string): unknown {
  return hasOwn(m, k) ? m[k] : undefined;
}

export function setOwn(m: JsonMap, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(m, k, { value: v, writable: true, enumerable: true, configurable: true });
  else m[k] = v;
}

function rank(v: unknown): number {
  if (isNumber(v)) return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (isMap(v)) return 4;
  return 5; // null
}

/** value.Compare: a total order over JSON values. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 1:
      return Math.sign(compareGoStrings(a as string, b as string));
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const x = a as unknown[];
      const y = b as unknown[];
      for (let i = 0; ; i++) {
        if (i >= x.length && i >= y.length) return 0;
        if (i >= x.length) return -1;
        if (i >= y.length) return 1;
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
    }
    case 4:
      return compareMaps(a as JsonMap, b as JsonMap);
    default:
      return 0;
  }
}

// MapCompareUsing: zip the keys in lexical order, the shorter map first.
function compareMaps(a: JsonMap, b: JsonMap): number {
  const ka = mapKeys(a);
  const kb = mapKeys(b);
  if (ka.length === 0 && kb.length === 0) return 0;
  const keys = [...new Set([...ka, ...kb])].sort(compareGoStrings);
  let i = 0;
  for (const k of keys) {
    let c: number;
    if (i === ka.length) c = -1;
    else if (i === kb.length) c = 1;
    else if (!hasOwn(a, k) || a[k] === undefined) c = 1;
    else if (!hasOwn(b, k) || b[k] === undefined) c = -1;
    else c = compareValues(a[k], b[k]);
    i++;
    if (c !== 0) return c;
  }
  return 0;
}

/** value.Equals: deep equality, numbers compared by value whatever their representation. */
export function equalValues(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isNumber(a) && isNumber(b)) {
    if (typeof a === typeof b) return false;
    const [big, num] = typeof a === 'bigint' ? [a, b as number] : [b as bigint, a as number];
    return Number.isInteger(num) && BigInt(num) === big;
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equalValues(a[i], b[i])) return false;
    return true;
  }
  if (isMap(a)) {
    if (!isMap(b)) return false;
    const ka = mapKeys(a);
    if (ka.length !== mapKeys(b).length) return false;
    for (const k of ka) {
      const bv = getOwn(b, k);
      if (bv === undefined || !equalValues(a[k], bv)) return false;
    }
    return true;
  }
  return false;
}

/** encoding/json's string escaping: JSON.stringify plus the HTML-safe and line-separator escapes. */
export function goJsonString(s: string): string {
  const q = JSON.stringify(s);
  return /[<>&\u2028\u2029]/.test(q)
    ? q.replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))
    : q;
}

/** encoding/json's rendering of a value: map keys sorted, HTML-safe strings, Go's float format. */
export function goJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goJsonString(v);
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return goJsonNumber(v);
  if (Array.isArray(v)) return '[' + v.map(goJson).join(',') + ']';
  const m = v as JsonMap;
  const keys = mapKeys(m).sort(compareGoStrings);
  return '{' + keys.map((k) => goJsonString(k) + ':' + goJson(m[k])).join(',') + '}';
}

function goJsonNumber(n: number): string {
  if (!Number.isFinite(n)) return 'null';
  // JavaScript's shortest form uses the same exponent thresholds (1e21, 1e-7) as encoding/json.
  return String(n);
}

/** fmt's %v of an unstructured value: `[a b]`, `map[k:v]`, floats as %g. */
export function goFormatV(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : formatGoFloat(v);
  if (Array.isArray(v)) return '[' + v.map(goFormatV).join(' ') + ']';
  const m = v as JsonMap;
  return 'map[' + mapKeys(m).sort(compareGoStrings).map((k) => `${k}:${goFormatV(m[k])}`).join(' ') + ']';
}

/** fmt's %T of an unstructured value. */
export function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))) return 'int64';
  if (typeof v === 'number') return 'float64';
  return Array.isArray(v) ? '[]interface {}' : 'map[string]interface {}';
}
