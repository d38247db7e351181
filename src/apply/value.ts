/**
 * JSON values as structured-merge-diff's value package sees them: kinds, its
 * total order (numbers < strings < booleans < lists < maps < null), equality
 * (integers and floats compare numerically), Go's JSON encoding of key values
 * (sorted keys, HTML-safe escapes) and Go's %v rendering for messages.
 * Numbers may be `number` or `bigint` (int64 beyond 2^53). Values may nest
 * 10,000 levels deep: nothing here recurses.
 */
import { compareGoStrings, formatGoFloat } from '../machinery/go-text.js';
import { renderTree, type TreeFormat } from '../util/tree-operation.js';

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
  // Pairs still to compare, in order (the next on top), and where a list or map decides by its
  // shape (lengths, missing keys) once the pairs before that point are equal: a number instead.
  const stack: unknown[] = [a, b];
  while (stack.length > 0) {
    const y = stack.pop();
    const x = stack.pop();
    if (x === DECIDED) {
      const c = y as number;
      if (c !== 0) return c;
      continue;
    }
    const rx = rank(x);
    const ry = rank(y);
    if (rx !== ry) return rx < ry ? -1 : 1;
    let c = 0;
    switch (rx) {
      case 0:
        c = (x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0;
        break;
      case 1:
        c = Math.sign(compareGoStrings(x as string, y as string));
        break;
      case 2:
        c = x === y ? 0 : x ? 1 : -1;
        break;
      case 3: {
        const l = x as unknown[];
        const r = y as unknown[];
        const n = Math.min(l.length, r.length);
        if (l.length !== r.length) stack.push(DECIDED, l.length < r.length ? -1 : 1);
        for (let i = n - 1; i >= 0; i--) stack.push(l[i], r[i]);
        break;
      }
      case 4:
        pushMapComparison(x as JsonMap, y as JsonMap, stack);
        break;
    }
    if (c !== 0) return c;
  }
  return 0;
}

/** A stack entry of compareValues standing for a decided comparison (the number that follows it). */
const DECIDED = Symbol('decided');

// MapCompareUsing: zip the keys in lexical order, the shorter map first. Pushes the member pairs
// to compare up to the first key that decides by itself, in reverse (the first on top).
function pushMapComparison(a: JsonMap, b: JsonMap, stack: unknown[]): void {
  const ka = mapKeys(a);
  const kb = mapKeys(b);
  if (ka.length === 0 && kb.length === 0) return;
  const keys = [...new Set([...ka, ...kb])].sort(compareGoStrings);
  const entries: unknown[] = [];
  let i = 0;
  for (const k of keys) {
    let c = 0;
    if (i === ka.length) c = -1;
    else if (i === kb.length) c = 1;
    else if (!hasOwn(a, k) || a[k] === undefined) c = 1;
    else if (!hasOwn(b, k) || b[k] === undefined) c = -1;
    i++;
    if (c !== 0) {
      entries.push(DECIDED, c);
      break;
    }
    entries.push(a[k], b[k]);
  }
  for (let j = entries.length - 2; j >= 0; j -= 2) stack.push(entries[j], entries[j + 1]);
}

/** value.Equals: deep equality, numbers compared by value whatever their representation. */
export function equalValues(a: unknown, b: unknown): boolean {
  const stack: unknown[] = [a, b];
  while (stack.length > 0) {
    const y = stack.pop();
    const x = stack.pop();
    if (x === y) continue;
    if (isNumber(x) && isNumber(y)) {
      if (typeof x === typeof y) return false;
      const [big, num] = typeof x === 'bigint' ? [x, y as number] : [y as bigint, x as number];
      if (!Number.isInteger(num) || BigInt(num) !== big) return false;
      continue;
    }
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = x.length - 1; i >= 0; i--) stack.push(x[i], y[i]);
      continue;
    }
    if (!isMap(x) || !isMap(y)) return false;
    const kx = mapKeys(x);
    if (kx.length !== mapKeys(y).length) return false;
    for (let i = kx.length - 1; i >= 0; i--) {
      const k = kx[i];
      const w = getOwn(y, k);
      if (w === undefined) return false;
      stack.push(x[k], w);
    }
  }
  return true;
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
  return typeof v === 'object' && v !== null ? renderTree(v, GO_JSON) : GO_JSON.leaf(v);
}

const sortedKeys = (m: JsonMap): string[] => mapKeys(m).sort(compareGoStrings);

const GO_JSON: TreeFormat = {
  leaf: (v) => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'string') return goJsonString(v);
    if (typeof v === 'number') return goJsonNumber(v);
    return String(v);
  },
  list: { open: '[', separator: ',', close: ']' },
  map: { open: '{', separator: ',', close: '}' },
  keys: sortedKeys,
  key: (k) => goJsonString(k) + ':',
};

function goJsonNumber(n: number): string {
  if (!Number.isFinite(n)) return 'null';
  // JavaScript's shortest form uses the same exponent thresholds (1e21, 1e-7) as encoding/json.
  return String(n);
}

/** fmt's %v of an unstructured value: `[a b]`, `map[k:v]`, floats as %g. */
export function goFormatV(v: unknown): string {
  return typeof v === 'object' && v !== null ? renderTree(v, GO_FORMAT_V) : GO_FORMAT_V.leaf(v);
}

const GO_FORMAT_V: TreeFormat = {
  leaf: (v) => {
    if (v === null || v === undefined) return '<nil>';
    if (typeof v === 'number') return Number.isInteger(v) ? String(v) : formatGoFloat(v);
    return String(v);
  },
  list: { open: '[', separator: ' ', close: ']' },
  map: { open: 'map[', separator: ' ', close: ']' },
  keys: sortedKeys,
  key: (k) => `${k}:`,
};

/** fmt's %T of an unstructured value. */
export function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))) return 'int64';
  if (typeof v === 'number') return 'float64';
  return Array.isArray(v) ? '[]interface {}' : 'map[string]interface {}';
}
