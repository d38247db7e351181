/**
 * CEL types of schema nodes (apiserver cel/common.SchemaDeclType): objects become
 * message types with their (escaped) properties as fields, additionalProperties
 * maps, arrays lists, int-or-string dyn, string formats byte/date/date-time/
 * duration bytes/timestamp/duration. The root of a resource and embedded resources
 * always have apiVersion, kind and metadata.name/generateName. Each object type is
 * a generated class whose fields convert the JSON value lazily on first access.
 *
 * Each type also carries DeclType's MaxElements and MinSerializedSize, which the
 * static cost estimator works with: maxLength (times 4 for strings: runes may take
 * 4 bytes), maxItems, maxProperties, or, when unbounded, the most that fits into a
 * request of celconfig.MaxRequestSizeBytes (3 MiB) given the smallest serialized
 * size of an element (apiserver cel/common/schemas.go).
 */
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { parseGoDuration } from '../../machinery/time.js';
import { blankStructural } from '../structural.js';
import type { Structural } from '../types.js';
import { isObject, jsonEqual, type JsonObject } from '../values.js';

const RESERVED = new Set([
  'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let',
  'loop', 'package', 'namespace', 'return', 'var', 'void', 'while',
]);

/** cel.Escape: a CEL identifier for a property name, or undefined when it cannot be expressed. */
export function escapeName(ident: string): string | undefined {
  if (ident.length === 0 || (ident[0] >= '0' && ident[0] <= '9')) return undefined;
  if (RESERVED.has(ident)) return `__${ident}__`;
  if (!/^[a-zA-Z0-9_./-]+$/.test(ident)) return undefined;
  if (/^[a-zA-Z0-9_]+$/.test(ident) && !ident.includes('__')) return ident;
  return ident.replace(/__|[-./]/g, (m) => (m === '__' ? '__underscores__' : m === '.' ? '__dot__' : m === '-' ? '__dash__' : '__slash__'));
}

export interface Decl {
  /** The type as cel-js spells it. */
  name: string;
  kind: 'int' | 'double' | 'string' | 'bool' | 'bytes' | 'timestamp' | 'duration' | 'dyn' | 'list' | 'map' | 'object';
  elem?: Decl;
  /** object: escaped field name → JSON property and type */
  fields?: Map<string, { prop: string; decl: Decl }>;
  /** object: the generated class */
  cls?: new (raw: JsonObject) => unknown;
  convert(v: unknown): unknown;
  /** DeclType.MaxElements: the largest size() a value can have (0 for scalars and objects). */
  maxElements: number;
  /** DeclType.MinSerializedSize: the fewest bytes a value takes in JSON. */
  minSize: number;
}

/** celconfig.MaxRequestSizeBytes */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;
/** apiserver cel limits: the longest duration and date-time strings, the shortest, a JSON date. */
const MAX_DURATION_SIZE_JSON = 32;
const MAX_DATETIME_SIZE_JSON = 32;
const MIN_DURATION_SIZE_JSON = 3;
const MIN_DATETIME_SIZE_JSON = 21;
const JSON_DATE_SIZE = 12;
/** validation.DNS1123SubdomainMaxLength: metadata.name's cap in WithTypeAndObjectMeta. */
const NAME_MAX_LENGTH = 253;

export interface TypeRegistry {
  /** object types in registration order (fields before the objects using them) */
  objects: Decl[];
  next: number;
  prefix: string;
}

const identity = (v: unknown): unknown => v;

function toInt(v: unknown): unknown {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return v;
}

function toDouble(v: unknown): unknown {
  return typeof v === 'bigint' ? Number(v) : v;
}

function toBytes(v: unknown): unknown {
  return typeof v === 'string' ? new Uint8Array(Buffer.from(v, 'base64')) : v;
}

function toTimestamp(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const d = new Date(v.length === 10 ? v + 'T00:00:00Z' : v);
  return Number.isNaN(d.getTime()) ? v : d;
}

function toDuration(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const ns = parseGoDuration(v);
  return ns === undefined ? v : Duration.fromMilliseconds(ns / 1e6);
}

function intOrString(v: unknown): unknown {
  return typeof v === 'number' || typeof v === 'bigint' ? toInt(v) : v;
}

const SIMPLE: Record<string, Decl> = {
  int: { name: 'int', kind: 'int', convert: toInt, maxElements: 0, minSize: 1 },
  double: { name: 'double', kind: 'double', convert: toDouble, maxElements: 0, minSize: 1 },
  string: { name: 'string', kind: 'string', convert: identity, maxElements: 0, minSize: 2 },
  bool: { name: 'bool', kind: 'bool', convert: identity, maxElements: 0, minSize: 4 },
  bytes: { name: 'bytes', kind: 'bytes', convert: toBytes, maxElements: 0, minSize: 2 },
  timestamp: { name: 'google.protobuf.Timestamp', kind: 'timestamp', convert: toTimestamp, maxElements: 0, minSize: JSON_DATE_SIZE },
  duration: { name: 'google.protobuf.Duration', kind: 'duration', convert: toDuration, maxElements: 0, minSize: MIN_DURATION_SIZE_JSON },
  dyn: { name: 'dyn', kind: 'dyn', convert: intOrString, maxElements: 0, minSize: 1 },
};

/** The key type of maps (apiserver's shared StringType, whose MaxElements is 0). */
export const MAP_KEY_DECL: Decl = SIMPLE.string;

const sized = (d: Decl, maxElements: number, minSize = d.minSize): Decl => ({ ...d, maxElements, minSize });
const zeroIfNegative = (n: number): number => (n < 0 ? 0 : n);
/** estimateMaxStringLengthPerRequest for plain strings and int-or-string: the request less the quotes. */
const UNBOUNDED_STRING = MAX_REQUEST_SIZE_BYTES - 2;

/** estimateMaxElementsFromMaxLength: maxLength counts runes, of up to 4 bytes each. */
function stringMaxElements(s: Structural): number {
  const vv = s.valueValidation;
  if (vv.maxLength !== undefined) return zeroIfNegative(vv.maxLength) * 4;
  if (vv.enum?.length) {
    let longest = 0;
    for (const e of vv.enum) if (typeof e === 'string') longest = Math.max(longest, Buffer.byteLength(e));
    return longest;
  }
  return UNBOUNDED_STRING;
}

const stringProp = (maxLength?: number): Structural => {
  const s = blankStructural('string', maxLength === undefined ? { type: 'string' } : { type: 'string', maxLength });
  if (maxLength !== undefined) s.valueValidation = { ...s.valueValidation, maxLength };
  return s;
};
const STRING_PROP: Structural = stringProp();

/** cappedLengthStringType: metadata.name and generateName at most as long as names may be. */
function cappedString(existing: Structural | undefined, maxLength: number): Structural {
  const m = existing?.valueValidation.maxLength;
  return stringProp(m !== undefined && m < maxLength ? m : maxLength);
}

/**
 * WithTypeAndObjectMeta: apiVersion, kind and metadata.name/generateName are always accessible at a
 * resource root; a schema that declares all of them as strings is used as it is.
 */
function withTypeAndObjectMeta(s: Structural): Structural {
  const p = s.properties;
  const meta = p?.get('metadata');
  if (
    p?.get('kind')?.type === 'string' &&
    p.get('apiVersion')?.type === 'string' &&
    meta?.type === 'object' &&
    meta.properties &&
    meta.properties.get('name')?.type === 'string' &&
    meta.properties.get('generateName')?.type === 'string'
  ) {
    return s;
  }
  const props = new Map(p ?? []);
  props.set('kind', STRING_PROP);
  props.set('apiVersion', STRING_PROP);
  props.set('metadata', {
    ...STRING_PROP,
    raw: { type: 'object' },
    type: 'object',
    properties: new Map([
      ['name', cappedString(meta?.properties?.get('name'), NAME_MAX_LENGTH)],
      // the generated suffix is at least one byte
      ['generateName', cappedString(meta?.properties?.get('generateName'), NAME_MAX_LENGTH - 1)],
    ]),
  });
  return { ...s, properties: props };
}

/** SchemaDeclType; undefined when the node is not exposed to CEL. */
export function declOf(s: Structural | undefined, isResourceRoot: boolean, reg: TypeRegistry): Decl | undefined {
  if (!s) return undefined;
  if (s.intOrString) return sized(SIMPLE.dyn, s.valueValidation.maxLength !== undefined ? zeroIfNegative(s.valueValidation.maxLength) * 4 : UNBOUNDED_STRING);
  const node = isResourceRoot ? withTypeAndObjectMeta(s) : s;
  switch (node.type) {
    case 'array': {
      const elem = declOf(node.items, node.items?.embeddedResource ?? false, reg);
      if (!elem) return undefined;
      const maxItems = node.valueValidation.maxItems;
      // estimateMaxArrayItemsFromMinSize: the brackets, and a comma per element
      const maxElements = maxItems !== undefined ? zeroIfNegative(maxItems) : Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (elem.minSize + 1));
      return {
        name: `list<${elem.name}>`,
        kind: 'list',
        elem,
        convert: (v) => (Array.isArray(v) ? v.map((x) => (x === null ? null : elem.convert(x))) : v),
        maxElements,
        minSize: 2,
      };
    }
    case 'object': {
      const ap = node.additionalProperties?.schema;
      if (ap) {
        const elem = declOf(ap, ap.embeddedResource, reg);
        if (!elem) return undefined;
        const maxProps = node.valueValidation.maxProperties;
        // estimateMaxAdditionalPropertiesFromMinSize: quotes, colon and comma around each key
        const maxElements = maxProps !== undefined ? zeroIfNegative(maxProps) : Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (elem.minSize + 6));
        return {
          name: `map<string, ${elem.name}>`,
          kind: 'map',
          elem,
          convert: (v) => (isObject(v) ? new Map(Object.entries(v).map(([k, x]) => [k, x === null ? null : elem.convert(x)])) : v),
          maxElements,
          minSize: 2,
        };
      }
      return objectDecl(node, reg);
    }
    case 'string':
      switch (node.valueValidation.format) {
        case 'byte':
          return sized(SIMPLE.bytes, node.valueValidation.maxLength !== undefined ? zeroIfNegative(node.valueValidation.maxLength) : UNBOUNDED_STRING);
        case 'duration':
          return sized(SIMPLE.duration, MAX_DURATION_SIZE_JSON);
        case 'date':
          return sized(SIMPLE.timestamp, JSON_DATE_SIZE, JSON_DATE_SIZE);
        case 'date-time':
          return sized(SIMPLE.timestamp, MAX_DATETIME_SIZE_JSON, MIN_DATETIME_SIZE_JSON);
      }
      return sized(SIMPLE.string, stringMaxElements(node));
    case 'boolean':
      return SIMPLE.bool;
    case 'number':
      return SIMPLE.double;
    case 'integer':
      return SIMPLE.int;
  }
  return undefined;
}

function objectDecl(s: Structural, reg: TypeRegistry): Decl {
  const fields = new Map<string, { prop: string; decl: Decl }>();
  const required = new Set(s.valueValidation.required ?? []);
  // {} plus each required property without a default: "name":value and a comma
  let minSize = 2;
  for (const [prop, sub] of s.properties ?? []) {
    const d = declOf(sub, sub.embeddedResource, reg);
    const name = escapeName(prop);
    if (d && name) fields.set(name, { prop, decl: d });
    if (d && required.has(prop) && !sub.hasDefault) minSize += Buffer.byteLength(prop) + d.minSize + 4;
  }
  const cls = class {
    c: Record<string, unknown> | undefined;
    constructor(readonly r: JsonObject) {}
  };
  for (const [name, { prop, decl }] of fields) {
    Object.defineProperty(cls.prototype, name, {
      get(this: InstanceType<typeof cls>) {
        const c = (this.c ??= Object.create(null) as Record<string, unknown>);
        if (name in c) return c[name];
        const raw = Object.prototype.hasOwnProperty.call(this.r, prop) ? this.r[prop] : undefined;
        return (c[name] = raw === undefined ? undefined : raw === null ? null : decl.convert(raw));
      },
    });
  }
  const decl: Decl = { name: `${reg.prefix}${reg.next++}`, kind: 'object', fields, cls, convert: (v) => (isObject(v) ? new cls(v) : v), maxElements: 0, minSize };
  reg.objects.push(decl);
  return decl;
}

/** Equality of two converted objects: their JSON values. */
export function objectsEqual(a: unknown, b: unknown): boolean {
  return jsonEqual((a as { r: unknown }).r, (b as { r: unknown }).r);
}
