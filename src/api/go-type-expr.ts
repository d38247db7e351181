/**
 * A field's Go type (go-types-model.ts's GoTypeExpr) parsed once: what the protobuf codec, strategic
 * merge patch and the typed decoders walk.
 */
import { GO_PACKAGES, GO_STRUCTS } from './go-types.js';
import type { GoField } from './go-types-model.js';

export type Scalar = 'string' | 'bool' | 'int32' | 'int64' | 'int' | 'uint32' | 'uint64' | 'float64' | 'byte';
export type Special = 'Time' | 'MicroTime' | 'Duration' | 'Quantity' | 'IntOrString' | 'RawExtension' | 'FieldsV1' | 'JSON';

/** A parsed field type (go-types-model.ts's GoTypeExpr). */
export type Type =
  | { k: 'scalar'; s: Scalar }
  | { k: 'bytes' }
  | { k: 'struct'; id: string }
  | { k: 'special'; name: Special }
  | { k: 'ptr'; elem: Type }
  | { k: 'slice'; elem: Type; items: boolean }
  | { k: 'map'; value: Type };

const SCALARS = new Set(['string', 'bool', 'int32', 'int64', 'int', 'uint32', 'uint64', 'float64', 'byte']);
const parsedTypes = new Map<string, Type>();

export function parseType(expr: string): Type {
  let t = parsedTypes.get(expr);
  if (!t) {
    t = parse(expr);
    parsedTypes.set(expr, t);
  }
  return t;
}

function parse(expr: string): Type {
  if (expr.startsWith('*')) return { k: 'ptr', elem: parseType(expr.slice(1)) };
  if (expr.startsWith('map[string]')) return { k: 'map', value: parseType(expr.slice('map[string]'.length)) };
  if (expr.endsWith('@items')) return { k: 'slice', elem: parseType(expr.slice(2, -'@items'.length)), items: true };
  if (expr.startsWith('[]')) return { k: 'slice', elem: parseType(expr.slice(2)), items: false };
  if (expr === 'bytes') return { k: 'bytes' };
  if (expr.startsWith('@')) return { k: 'special', name: expr.slice(1) as Special };
  if (SCALARS.has(expr)) return { k: 'scalar', s: expr as Scalar };
  if (!GO_STRUCTS[expr]) throw new Error(`unknown type ${expr}`);
  return { k: 'struct', id: expr };
}


/** A struct's field for a JSON key, the fields of inline (embedded) structs included. */
export interface FieldInfo {
  field: GoField;
  type: Type;
}

const fieldMaps = new Map<string, Map<string, FieldInfo>>();

export function fieldOf(structId: string, key: string): FieldInfo | undefined {
  let fields = fieldMaps.get(structId);
  if (!fields) {
    fields = new Map();
    collect(structId, fields);
    fieldMaps.set(structId, fields);
  }
  return fields.get(key);
}

function collect(structId: string, into: Map<string, FieldInfo>): void {
  for (const f of GO_STRUCTS[structId]?.fields ?? []) {
    const type = parseType(f.type);
    if (f.inline) {
      if (type.k === 'struct') collect(type.id, into);
    } else if (!into.has(f.json)) {
      into.set(f.json, { field: f, type });
    }
  }
}

/** A pointer's element; any other type as it is. */
export function deref(t: Type): Type {
  return t.k === 'ptr' ? t.elem : t;
}

/** The struct of a kind (`ConfigMap` in v1, `DeploymentList` in apps/v1), if kapi knows it. */
export function structOfKind(group: string, version: string, kind: string): string | undefined {
  const pkg = PACKAGE_BY_GROUP_VERSION.get(`${group}/${version}`);
  if (pkg === undefined) return undefined;
  const id = `${pkg}.${kind}`;
  return Object.prototype.hasOwnProperty.call(GO_STRUCTS, id) ? id : undefined;
}

const PACKAGE_BY_GROUP_VERSION = new Map(Object.entries(GO_PACKAGES).map(([pkg, gv]) => [`${gv.group}/${gv.version}`, pkg]));

