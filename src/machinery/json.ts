/**
 * Big-int-safe JSON that decodes the way kube-apiserver does (encoding/json
 * with int64-preserving numbers): integers beyond 2^53 that fit int64 become
 * BigInt, nesting is capped at Go's 10000 levels, and errors carry Go's texts
 * (`invalid character 'x' looking for beginning of value`, `unexpected end of
 * JSON input`). Stringifying and cloning are stack-safe for such values too.
 */
import { Decoder, MAX_JSON_DEPTH, NumberLiteral, setOwn } from './json-decoder.js';
import { renderTree, type TreeFormat } from '../util/tree-operation.js';
import { runSteps, type Steps } from '../util/turns.js';

export { JsonSyntaxError, MAX_INT64, MAX_JSON_DEPTH, MIN_INT64, NumberLiteral, jsonNumber } from './json-decoder.js';

// Texts the native parser may read differently from Go: long digit runs (precision),
// huge exponents (Go rejects out-of-range floats) and surrogate escapes (Go maps lone ones to U+FFFD).
const LONG_DIGITS = /\d{16}/;
const NEEDS_CARE = /[eE][+-]?\d{3}|\\u[dD][89a-fA-F]/;

export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  return runSteps(parsingJson(text, maxDepth));
}

/** parseJson in steps (util/turns.ts): the two scans of a large text and its parse each take one. */
export function* parsingJson(text: string, maxDepth = MAX_JSON_DEPTH): Steps<unknown> {
  if (parsesNatively(text)) {
    const large = text.length > maxDepth;
    if (large) yield;
    if (!(large && nestsTooDeep(text, maxDepth))) {
      if (large) yield;
      try {
        return JSON.parse(text);
      } catch {
        // Reparse below for Go's error text.
      }
    }
  }
  return new Decoder(text, false, maxDepth).decode();
}

/** Whether JSON.parse reads this (valid) JSON text as encoding/json does, nesting aside. */
export function parsesNatively(text: string): boolean {
  return !LONG_DIGITS.test(text) && !NEEDS_CARE.test(text);
}

/**
 * parseJson for JSON kapi wrote itself (stored objects): no limit on nesting. An object may
 * nest as deep as a request may (10,000 levels), and its managedFields a few levels deeper.
 */
export function parseStoredJson(text: string): unknown {
  return parseJson(text, Infinity);
}

/** Whether a value nests objects and arrays more than `limit` levels deep (iterative, stops early). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop() as object;
    const depth = depths.pop() as number;
    if (depth > limit) return true;
    const items = Array.isArray(v) ? v : Object.values(v);
    for (const x of items) {
      if (typeof x === 'object' && x !== null) {
        values.push(x);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/**
 * Like parseJson, but numbers come back as NumberLiteral holding their source text,
 * for callers that decode into typed fields the way Go does (`1e3` is not an int64 there).
 */
export function parseJsonLiterals(text: string): unknown {
  return new Decoder(text, true).decode();
}

/**
 * JSON.stringify, except that BigInt values print as bare integers and nesting as deep as
 * parseJson accepts does not overflow the stack.
 */
export function stringifyJson(value: unknown, indent?: number): string {
  try {
    return JSON.stringify(value, undefined, indent);
  } catch (e) {
    // BigInt ("Do not know how to serialize a BigInt") or deep nesting (stack overflow).
    const bigint = e instanceof TypeError && /BigInt/i.test(e.message);
    if (!bigint && !(e instanceof RangeError)) throw e;
  }
  return new Serializer(indent).run(value) as string;
}

/**
 * JSON as Go's json.Marshal writes a decoded value (map[string]interface{}): object keys sorted,
 * and <, >, &, U+2028 and U+2029 escaped.
 */
export function goMarshalJson(value: unknown): string {
  const sort = (_k: string, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v;
  let text: string;
  try {
    text = JSON.stringify(value, sort);
  } catch {
    // BigInt, or nesting deeper than JSON.stringify goes: the same text, from an explicit stack.
    text = renderTree(value, SORTED_JSON);
  }
  return text.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** JSON.stringify's text with object keys sorted (toJSON applied, undefined members left out). */
const SORTED_JSON: TreeFormat = {
  leaf: (v) => {
    if (typeof v === 'bigint') return String(v);
    if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
    return JSON.stringify(v) ?? 'null';
  },
  // An object with toJSON: JSON.stringify writes what it returns (here: its text, a leaf).
  isLeaf: (v) => typeof (v as { toJSON?: unknown }).toJSON === 'function',
  list: { open: '[', separator: ',', close: ']' },
  map: { open: '{', separator: ',', close: '}' },
  keys: (m) =>
    Object.keys(m)
      .filter((k) => m[k] !== undefined && typeof m[k] !== 'function' && typeof m[k] !== 'symbol')
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
  key: (k) => JSON.stringify(k) + ':',
};

/** The JSON type name encoding/json's errors use for a value (`array`, `bool`, `number`, `string`, `object`). */
export function goJsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number' || typeof v === 'bigint' || v instanceof NumberLiteral) return 'number';
  return typeof v === 'string' ? 'string' : 'object';
}

/** A deep copy of a JSON value (BigInt included), without recursion. */
export function deepClone<T>(value: T): T {
  return copyNested(value, 0, 0) as T;
}

/**
 * A deep copy with nothing shared, frozen objects included: for code that changes the
 * copy anywhere (a JSON patch may write into managedFields' fieldsV1 sets).
 */
export function deepCloneMutable<T>(value: T): T {
  return copyNested(value, COPY_FROZEN, 0) as T;
}

/**
 * A deep copy of a JSON value; with dropNullMembers, object members whose value is null are left out.
 * Frozen objects and arrays are immutable: the copy shares them (managedFields' fieldsV1 sets).
 */
export function copyJson<T>(value: T, dropNullMembers: boolean): T {
  return copyNested(value, dropNullMembers ? DROP_NULLS : 0, 0) as T;
}

const DROP_NULLS = 1;
const COPY_FROZEN = 2;

// Recursion is the fast path (no frames to allocate); past this depth the copy goes on with an explicit stack.
const RECURSION_LIMIT = 200;

function shared(v: unknown, flags: number): boolean {
  return typeof v !== 'object' || v === null || (!(flags & COPY_FROZEN) && Object.isFrozen(v));
}

function copyNested(v: unknown, flags: number, depth: number): unknown {
  if (shared(v, flags)) return v;
  if (depth > RECURSION_LIMIT) return copyDeep(v as object, flags);
  if (Array.isArray(v)) {
    const c = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) c[i] = copyNested(v[i], flags, depth + 1);
    return c;
  }
  if (!isPlainObject(v as object)) return structuredClone(v);
  const src = v as Record<string, unknown>;
  const c: Record<string, unknown> = {};
  // for-in on a plain object visits its own enumerable keys, without building a key array.
  for (const k in src) {
    const member = src[k];
    if (member === null && flags & DROP_NULLS) continue;
    setOwn(c, k, copyNested(member, flags, depth + 1));
  }
  return c;
}

/** copyNested without recursion, for values nested deeper than the stack should go. */
function copyDeep(value: object, flags: number): unknown {
  const stack: [unknown, unknown][] = [];
  const copy = (v: unknown): unknown => {
    if (shared(v, flags)) return v;
    if (!Array.isArray(v) && !isPlainObject(v as object)) return structuredClone(v);
    const c = Array.isArray(v) ? new Array<unknown>(v.length) : {};
    stack.push([v, c]);
    return c;
  };
  const root = copy(value);
  while (stack.length) {
    const [src, dst] = stack.pop() as [Record<string, unknown>, Record<string, unknown>];
    if (Array.isArray(src)) {
      for (let i = 0; i < src.length; i++) (dst as unknown as unknown[])[i] = copy(src[i]);
    } else {
      for (const k of Object.keys(src)) {
        const v = src[k];
        if (v === null && flags & DROP_NULLS) continue;
        setOwn(dst, k, copy(v));
      }
    }
  }
  return root;
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

interface SerializerFrame {
  node: Record<string, unknown> | unknown[];
  keys: string[] | undefined;
  i: number;
  written: number;
}

/** JSON.stringify's algorithm with an explicit stack, printing BigInt as integers. */
class Serializer {
  private readonly gap: string;
  private readonly out: string[] = [];
  private readonly stack: SerializerFrame[] = [];
  private readonly ancestors = new Set<object>();

  constructor(indent?: number) {
    this.gap = indent && indent > 0 ? ' '.repeat(Math.min(10, Math.floor(indent))) : '';
  }

  run(value: unknown): string | undefined {
    const v = prepare(value, '');
    if (!this.write(v)) return undefined;
    while (this.stack.length) {
      const f = this.stack[this.stack.length - 1];
      const nl = this.gap ? '\n' + this.gap.repeat(this.stack.length) : '';
      if (f.keys === undefined) {
        const arr = f.node as unknown[];
        if (f.i >= arr.length) {
          this.close(f, ']');
          continue;
        }
        this.out.push((f.i > 0 ? ',' : '') + nl);
        const item = prepare(arr[f.i], String(f.i));
        f.i++;
        f.written++;
        if (!this.write(item)) this.out.push('null');
        continue;
      }
      const obj = f.node as Record<string, unknown>;
      let done = true;
      while (f.i < f.keys.length) {
        const k = f.keys[f.i++];
        const item = prepare(obj[k], k);
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
        this.out.push((f.written > 0 ? ',' : '') + nl + JSON.stringify(k) + (this.gap ? ': ' : ':'));
        f.written++;
        this.write(item);
        done = false;
        break;
      }
      if (done) this.close(f, '}');
    }
    return this.out.join('');
  }

  private close(f: SerializerFrame, bracket: string): void {
    this.stack.pop();
    this.ancestors.delete(f.node);
    const nl = f.written > 0 && this.gap ? '\n' + this.gap.repeat(this.stack.length) : '';
    this.out.push(nl + bracket);
  }

  /** Writes a primitive, or opens a container; false for values JSON leaves out. */
  private write(v: unknown): boolean {
    switch (typeof v) {
      case 'string':
        this.out.push(JSON.stringify(v));
        return true;
      case 'number':
        this.out.push(Number.isFinite(v) ? String(v) : 'null');
        return true;
      case 'bigint':
      case 'boolean':
        this.out.push(String(v));
        return true;
      case 'object':
        if (v === null) {
          this.out.push('null');
          return true;
        }
        if (this.ancestors.has(v)) throw new TypeError('Converting circular structure to JSON');
        this.ancestors.add(v);
        this.out.push(Array.isArray(v) ? '[' : '{');
        this.stack.push({ node: v as SerializerFrame['node'], keys: Array.isArray(v) ? undefined : Object.keys(v), i: 0, written: 0 });
        return true;
      default:
        return false;
    }
  }
}

function prepare(v: unknown, key: string): unknown {
  if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    return (v as { toJSON: (k: string) => unknown }).toJSON(key);
  }
  return v;
}

function nestsTooDeep(s: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 34 /* " */) {
      for (i++; i < s.length; i++) {
        const d = s.charCodeAt(i);
        if (d === 92 /* \ */) i++;
        else if (d === 34) break;
      }
    } else if (c === 91 || c === 123) {
      if (++depth > maxDepth) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}
