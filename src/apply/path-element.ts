/**
 * Path elements of structured-merge-diff's fieldpath package: a field name
 * (`f:name`), the key of an associative-list item (`k:{"name":"x"}`, key
 * fields sorted by name), the value of a set item (`v:"x"`) or a list index
 * (`i:0`). Each carries its fieldsV1 key, which is also its identity, and is
 * printed as upstream prints paths: `.spec`, `[name="x"]`, `[=5]`, `[0]`.
 */
import { compareGoStrings, formatGoFloat, goQuote } from '../machinery/go-text.js';
import { parseJson } from '../machinery/json.js';
import { compareValues, goJson, goJsonString, isMap, mapKeys } from './value.js';
import { renderTree, type TreeFormat } from '../util/tree-operation.js';

export interface KeyField {
  readonly name: string;
  readonly value: unknown;
}

interface Base {
  /** The fieldsV1 key: `f:name`, `k:{...}`, `v:...` or `i:n`. Equal keys are equal elements. */
  readonly key: string;
  /** Numbers came from parsing fieldsV1, where Go reads them as float64 (this only changes how they print). */
  readonly floats?: boolean;
}

export interface FieldElement extends Base {
  readonly type: 'f';
  readonly name: string;
}
export interface KeyElement extends Base {
  readonly type: 'k';
  readonly fields: readonly KeyField[];
}
export interface ValueElement extends Base {
  readonly type: 'v';
  readonly value: unknown;
}
export interface IndexElement extends Base {
  readonly type: 'i';
  readonly index: number;
}
export type PathElement = FieldElement | KeyElement | ValueElement | IndexElement;
export type Path = readonly PathElement[];

/** Field elements by name: the same few names come back on every write. Bounded; cleared when full. */
const fieldElements = new Map<string, FieldElement>();

export function fieldElement(name: string): FieldElement {
  let pe = fieldElements.get(name);
  if (pe === undefined) {
    if (fieldElements.size >= 8192) fieldElements.clear();
    pe = Object.freeze({ type: 'f', key: 'f:' + name, name });
    fieldElements.set(name, pe);
  }
  return pe;
}

/** A key element; `fields` need not be sorted. */
export function keyElement(fields: KeyField[], floats = false): KeyElement {
  const sorted = fields.length > 1 ? [...fields].sort((a, b) => compareGoStrings(a.name, b.name)) : fields;
  const key = 'k:{' + sorted.map((f) => goJsonString(f.name) + ':' + goJson(f.value)).join(',') + '}';
  return floats ? { type: 'k', key, fields: sorted, floats } : { type: 'k', key, fields: sorted };
}

export function valueElement(value: unknown, floats = false): ValueElement {
  const key = 'v:' + goJson(value);
  return floats ? { type: 'v', key, value, floats } : { type: 'v', key, value };
}

export function indexElement(index: number): IndexElement {
  return { type: 'i', key: 'i:' + index, index };
}

const TYPE_ORDER = { f: 0, k: 1, v: 2, i: 3 } as const;

/** PathElement.Compare: field names, then keys, then values, then indexes. */
export function compareElements(a: PathElement, b: PathElement): number {
  if (a.type !== b.type) return TYPE_ORDER[a.type] < TYPE_ORDER[b.type] ? -1 : 1;
  switch (a.type) {
    case 'f':
      return Math.sign(compareGoStrings(a.name, (b as FieldElement).name));
    case 'k': {
      const x = a.fields;
      const y = (b as KeyElement).fields;
      for (let i = 0; ; i++) {
        if (i >= x.length && i >= y.length) return 0;
        if (i >= x.length) return -1;
        if (i >= y.length) return 1;
        const c = compareGoStrings(x[i].name, y[i].name) || compareValues(x[i].value, y[i].value);
        if (c !== 0) return Math.sign(c);
      }
    }
    case 'v':
      return compareValues(a.value, (b as ValueElement).value);
    case 'i':
      return Math.sign(a.index - (b as IndexElement).index);
  }
}

/** PathElement.String(). */
export function elementString(pe: PathElement): string {
  switch (pe.type) {
    case 'f':
      return '.' + pe.name;
    case 'k':
      return '[' + pe.fields.map((f) => `${f.name}=${valueString(f.value, pe.floats)}`).join(',') + ']';
    case 'v':
      return `[=${valueString(pe.value, pe.floats)}]`;
    case 'i':
      return `[${pe.index}]`;
  }
}

/** Path.String(): `.spec.containers[name="nginx"].image`. */
export function pathString(path: Path): string {
  let s = '';
  for (const pe of path) s += elementString(pe);
  return s;
}

/** value.ToString. */
function valueString(v: unknown, floats?: boolean): string {
  const format = floats ? FLOAT_STRINGS : STRINGS;
  return typeof v === 'object' && v !== null ? renderTree(v, format) : format.leaf(v);
}

function valueFormat(floats: boolean): TreeFormat {
  return {
    leaf: (v) => {
      if (v === null || v === undefined) return 'null';
      if (typeof v === 'number') return floats || !Number.isInteger(v) ? formatGoFloat(v) : String(v);
      if (typeof v === 'bigint') return floats ? formatGoFloat(Number(v)) : String(v);
      if (typeof v === 'string') return goQuote(v);
      return String(v);
    },
    list: { open: '[', separator: ',', close: ']' },
    map: { open: '', separator: '', close: '' },
    keys: (m) => mapKeys(m).sort(compareGoStrings),
    key: (k) => `${k}=`,
  };
}

const STRINGS = valueFormat(false);
const FLOAT_STRINGS = valueFormat(true);

/** Raised for a fieldsV1 key that is not a path element. */
export class PathElementError extends Error {}

/** Unknown element types (a future format) are skipped by readers, as upstream does. */
export const UNKNOWN_ELEMENT = Symbol('unknown path element type');

/** DeserializePathElement. */
export function parseElement(s: string): PathElement | typeof UNKNOWN_ELEMENT {
  if (s.length < 2) throw new PathElementError('key must be 2 characters long:');
  if (s[1] !== ':') throw new PathElementError(`missing colon: ${s}`);
  const body = s.slice(2);
  switch (s[0]) {
    case 'f':
      return { type: 'f', key: s, name: body };
    case 'v':
      return valueElement(parseValue(body), true);
    case 'k': {
      const obj = parseValue(body);
      if (!isMap(obj)) throw new PathElementError(`key element is not a JSON object: ${body}`);
      return keyElement(
        mapKeys(obj).map((name) => ({ name, value: obj[name] })),
        true,
      );
    }
    case 'i': {
      if (!/^[+-]?[0-9]+$/.test(body)) throw new PathElementError(`strconv.Atoi: parsing ${goQuote(body)}: invalid syntax`);
      return indexElement(Number(body));
    }
    default:
      return UNKNOWN_ELEMENT;
  }
}

function parseValue(text: string): unknown {
  try {
    return parseJson(text);
  } catch (e) {
    throw new PathElementError((e as Error).message);
  }
}
