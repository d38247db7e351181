/**
 * CEL types of schema nodes (apiserver cel/common.SchemaDeclType): objects become
 * message types with their (escaped) properties as fields, additionalProperties
 * maps, arrays lists, int-or-string dyn, string formats byte/date/date-time/
 * duration bytes/timestamp/duration. The root of a resource and embedded resources
 * always have apiVersion, kind and metadata.name/generateName. Each object type is
 * a generated class whose fields convert the JSON value lazily on first access.
 */
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { parseGoDuration } from '../formats.js';
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
}

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
  int: { name: 'int', kind: 'int', convert: toInt },
  double: { name: 'double', kind: 'double', convert: toDouble },
  string: { name: 'string', kind: 'string', convert: identity },
  bool: { name: 'bool', kind: 'bool', convert: identity },
  bytes: { name: 'bytes', kind: 'bytes', convert: toBytes },
  timestamp: { name: 'google.protobuf.Timestamp', kind: 'timestamp', convert: toTimestamp },
  duration: { name: 'google.protobuf.Duration', kind: 'duration', convert: toDuration },
  dyn: { name: 'dyn', kind: 'dyn', convert: intOrString },
};

const STRING_PROP: Structural = blankStructural('string', { type: 'string' });

/** WithTypeAndObjectMeta: apiVersion, kind, metadata{name, generateName} always accessible at a resource root. */
function withTypeAndObjectMeta(s: Structural): Structural {
  const props = new Map(s.properties ?? []);
  props.set('kind', STRING_PROP);
  props.set('apiVersion', STRING_PROP);
  props.set('metadata', {
    ...STRING_PROP,
    raw: { type: 'object' },
    type: 'object',
    properties: new Map([
      ['name', STRING_PROP],
      ['generateName', STRING_PROP],
    ]),
  });
  return { ...s, properties: props };
}

/** SchemaDeclType; undefined when the node is not exposed to CEL. */
export function declOf(s: Structural | undefined, isResourceRoot: boolean, reg: TypeRegistry): Decl | undefined {
  if (!s) return undefined;
  if (s.intOrString) return SIMPLE.dyn;
  const node = isResourceRoot ? withTypeAndObjectMeta(s) : s;
  switch (node.type) {
    case 'array': {
      const elem = declOf(node.items, node.items?.embeddedResource ?? false, reg);
      if (!elem) return undefined;
      return { name: `list<${elem.name}>`, kind: 'list', elem, convert: (v) => (Array.isArray(v) ? v.map((x) => (x === null ? null : elem.convert(x))) : v) };
    }
    case 'object': {
      const ap = node.additionalProperties?.schema;
      if (ap) {
        const elem = declOf(ap, ap.embeddedResource, reg);
        if (!elem) return undefined;
        return {
          name: `map<string, ${elem.name}>`,
          kind: 'map',
          elem,
          convert: (v) => (isObject(v) ? new Map(Object.entries(v).map(([k, x]) => [k, x === null ? null : elem.convert(x)])) : v),
        };
      }
      return objectDecl(node, reg);
    }
    case 'string':
      switch (node.valueValidation.format) {
        case 'byte':
          return SIMPLE.bytes;
        case 'duration':
          return SIMPLE.duration;
        case 'date':
        case 'date-time':
          return SIMPLE.timestamp;
      }
      return SIMPLE.string;
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
  for (const [prop, sub] of s.properties ?? []) {
    const d = declOf(sub, sub.embeddedResource, reg);
    const name = escapeName(prop);
    if (d && name) fields.set(name, { prop, decl: d });
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
  const decl: Decl = { name: `${reg.prefix}${reg.next++}`, kind: 'object', fields, cls, convert: (v) => (isObject(v) ? new cls(v) : v) };
  reg.objects.push(decl);
  return decl;
}

/** Equality of two converted objects: their JSON values. */
export function objectsEqual(a: unknown, b: unknown): boolean {
  return jsonEqual((a as { r: unknown }).r, (b as { r: unknown }).r);
}
