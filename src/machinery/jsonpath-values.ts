/**
 * How client-go's JSONPath sees and prints JSON values, mirroring the Go types
 * an unstructured object decodes into (map[string]interface{}, []interface{},
 * string, int64, float64, bool, nil): type names for error texts, text/template's
 * comparison functions for filters, fmt.Print for scalars and encoding/json's
 * Marshal (sorted keys, HTML-safe escapes) for maps and slices.
 */
import { compareGoStrings, formatGoFloat } from './go-text.js';
import { renderTree, type TreeFormat } from '../util/tree-operation.js';

/** A float literal from a template (`{1.5}`), kept apart from integers as Go keeps float64 apart from int. */
export class FloatLiteral {
  constructor(readonly value: number) {}
}

/** A byte of a string, as wildcards and recursive descent see strings (Go indexes strings by byte). */
export class ByteValue {
  constructor(readonly value: number) {}
}

export type GoKind = 'map' | 'slice' | 'string' | 'int' | 'float' | 'bool' | 'uint8' | 'nil';

/** Integral numbers within int64 decode as int64 in an unstructured object; the rest as float64. */
export function isGoInt(v: number): boolean {
  return Number.isInteger(v) && Math.abs(v) < 2 ** 63;
}

export function goKind(v: unknown): GoKind {
  if (v === null || v === undefined) return 'nil';
  if (Array.isArray(v)) return 'slice';
  if (v instanceof FloatLiteral) return 'float';
  if (v instanceof ByteValue) return 'uint8';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'int';
    case 'number':
      return isGoInt(v) ? 'int' : 'float';
    case 'object':
      return 'map';
  }
  return 'nil';
}

/** The Go type name reflect reports for a value (for `... is not array or slice`). */
export function goTypeName(v: unknown): string {
  switch (goKind(v)) {
    case 'map':
      return 'map[string]interface {}';
    case 'slice':
      return '[]interface {}';
    case 'string':
      return 'string';
    case 'int':
      return 'int64';
    case 'float':
      return 'float64';
    case 'bool':
      return 'bool';
    case 'uint8':
      return 'uint8';
  }
  return '<nil>';
}

export function numeric(v: unknown): number | bigint {
  if (v instanceof FloatLiteral || v instanceof ByteValue) return v.value;
  return v as number | bigint;
}

type BasicKind = 'bool' | 'int' | 'uint' | 'float' | 'string';

function basicKind(v: unknown): BasicKind {
  const k = goKind(v);
  switch (k) {
    case 'bool':
    case 'int':
    case 'float':
    case 'string':
      return k;
    case 'uint8':
      return 'uint';
  }
  throw new Error('invalid type for comparison');
}

function cmp(a: number | bigint | string, b: number | bigint | string): number {
  if (typeof a === 'string' && typeof b === 'string') return compareGoStrings(a, b);
  const x = numeric(a) as number | bigint;
  const y = numeric(b) as number | bigint;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** text/template's eq: an error for kinds that cannot be compared (integers of either sign compare). */
export function goEqual(a: unknown, b: unknown): boolean {
  const ka = basicKind(a);
  const kb = basicKind(b);
  if (ka !== kb) {
    if ((ka === 'int' && kb === 'uint') || (ka === 'uint' && kb === 'int')) return cmp(numeric(a), numeric(b)) === 0;
    throw new Error('incompatible types for comparison');
  }
  if (ka === 'bool') return a === b;
  if (ka === 'string') return a === b;
  return cmp(numeric(a), numeric(b)) === 0;
}

/** text/template's lt. */
export function goLess(a: unknown, b: unknown): boolean {
  const ka = basicKind(a);
  const kb = basicKind(b);
  if (ka !== kb) {
    if ((ka === 'int' && kb === 'uint') || (ka === 'uint' && kb === 'int')) return cmp(numeric(a), numeric(b)) < 0;
    throw new Error('incompatible types for comparison');
  }
  if (ka === 'bool') throw new Error('invalid type for comparison');
  if (ka === 'string') return compareGoStrings(a as string, b as string) < 0;
  return cmp(numeric(a), numeric(b)) < 0;
}

/** fmt.Print of a scalar value; maps and slices go through goJsonMarshal instead. */
export function goPrintScalar(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (v instanceof FloatLiteral) return formatGoFloat(v.value);
  if (v instanceof ByteValue) return String(v.value);
  switch (typeof v) {
    case 'string':
      return v;
    case 'boolean':
    case 'bigint':
      return String(v);
    case 'number':
      return isGoInt(v) ? BigInt(v).toString() : formatGoFloat(v);
  }
  return goJsonMarshal(v);
}

/**
 * encoding/json.Marshal of a decoded JSON value: map keys sorted, no spaces,
 * `<`, `>`, `&`, U+2028 and U+2029 escaped as \u sequences.
 */
export function goJsonMarshal(v: unknown): string {
  return renderTree(v, GO_JSON);
}

// Values nest as deep as objects may (10,000 levels): written from an explicit stack.
const GO_JSON: TreeFormat = {
  leaf: (v) => {
    if (v === null || v === undefined) return 'null';
    if (v instanceof FloatLiteral || v instanceof ByteValue) return JSON.stringify(v.value);
    switch (typeof v) {
      case 'string':
        return jsonString(v);
      case 'number':
        return Number.isFinite(v) ? JSON.stringify(v) : 'null';
      default:
        return String(v);
    }
  },
  isLeaf: (v) => v instanceof FloatLiteral || v instanceof ByteValue,
  list: { open: '[', separator: ',', close: ']' },
  map: { open: '{', separator: ',', close: '}' },
  keys: (m) => Object.keys(m).sort(compareGoStrings),
  key: (k) => jsonString(k) + ':',
};

const HTML_UNSAFE = /[<>&\u2028\u2029]/g;

function jsonString(s: string): string {
  return JSON.stringify(s).replace(HTML_UNSAFE, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** fmt's %v of a value inside an error text (`map[a:1 b:2]`, `[1 2]`, `<nil>`). */
export function goFormatValue(v: unknown): string {
  return renderTree(v, GO_FORMAT);
}

const GO_FORMAT: TreeFormat = {
  leaf: (v) => (v === null || v === undefined ? '<nil>' : goPrintScalar(v)),
  isLeaf: (v) => goKind(v) !== 'map' && !Array.isArray(v),
  list: { open: '[', separator: ' ', close: ']' },
  map: { open: 'map[', separator: ' ', close: ']' },
  keys: (m) => Object.keys(m).sort(compareGoStrings),
  key: (k) => `${k}:`,
};
