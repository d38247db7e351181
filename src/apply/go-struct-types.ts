/**
 * TypeInfo of a built-in kind from the Go types (go-types.ts), as kube-openapi's schemaconv reads the
 * schemas upstream generates from them: a struct is a map of its declared fields (inline structs'
 * fields included; `+structType=atomic` makes it atomic), a Go map has typed values (`+mapType`),
 * a list takes `+listType`/`+listMapKey`, else its patch strategy (merge by a key: an associative
 * list; merge without one: a set), else it is atomic. Cached per struct; recursive types resolve.
 */
import { GO_STRUCTS } from '../api/go-types.js';
import type { GoField } from '../api/go-types-model.js';
import { parseType, structOfKind, type Type } from '../api/go-type-expr.js';
import { ATOMIC_ANY, BOOLEAN, BUILTIN_OBJECT, DEDUCED, NUMERIC, OBJECT_META, STRING, UNTYPED_SCALAR, type ListType, type MapType, type TypeInfo } from './types.js';

const structs = new Map<string, TypeInfo>();
const roots = new Map<string, TypeInfo>();

/** The merge type of a built-in kind's object: its struct's fields plus apiVersion and kind. */
export function typeFromGoStruct(id: string): TypeInfo {
  let root = roots.get(id);
  if (!root) {
    const t = structType(id);
    root = t.kind === 'map' ? { ...t, fields: new Map([...(t.fields ?? []), ['apiVersion', STRING], ['kind', STRING]]) } : t;
    roots.set(id, root);
  }
  return root;
}

function structType(id: string): TypeInfo {
  if (id === 'meta/v1.ObjectMeta') return OBJECT_META;
  const known = structs.get(id);
  if (known) return known;
  // A shell filled once converted, so that recursive types (JSONSchemaProps) resolve to it.
  const shell = {} as MapType;
  structs.set(id, shell);
  const fields = new Map<string, TypeInfo>();
  collect(id, fields);
  // An object of its own kind inside another (a StatefulSet's claim templates): TypeMeta's fields, as the OpenAPI schema has them.
  if (GO_STRUCTS[id]?.typeMeta) {
    fields.set('apiVersion', STRING);
    fields.set('kind', STRING);
  }
  const filled: MapType = {
    kind: 'map',
    fields: fields.size ? fields : undefined,
    elements: fields.size ? undefined : DEDUCED,
    atomic: GO_STRUCTS[id]?.structType === 'atomic',
  };
  Object.assign(shell, filled);
  return shell;
}

function collect(id: string, into: Map<string, TypeInfo>): void {
  for (const f of GO_STRUCTS[id]?.fields ?? []) {
    const type = parseType(f.type);
    if (f.inline) {
      if (type.k === 'struct') collect(type.id, into);
      continue;
    }
    into.set(f.json, fieldType(type, f));
  }
}

function fieldType(t: Type, f: GoField | undefined): TypeInfo {
  switch (t.k) {
    case 'ptr':
      return fieldType(t.elem, f);
    case 'scalar':
      return t.s === 'string' ? STRING : t.s === 'bool' ? BOOLEAN : NUMERIC;
    case 'bytes':
      return STRING;
    case 'struct': {
      // A struct with a JSON form of its own (a schema or a list, a boolean or a schema): any value.
      if (GO_STRUCTS[t.id]?.jsonForm) return DEDUCED;
      const s = structType(t.id);
      return f?.structType === 'atomic' && s.kind === 'map' ? { ...s, atomic: true } : s;
    }
    case 'map':
      return { kind: 'map', elements: fieldType(t.value, undefined), atomic: f?.mapType === 'atomic' };
    case 'slice':
      return listType(t.elem, f);
    case 'special':
      switch (t.name) {
        case 'Duration':
          return STRING;
        case 'RawExtension':
        case 'FieldsV1':
          return ATOMIC_ANY;
        case 'JSON':
          return DEDUCED;
        default:
          // Time and MicroTime (strings with a format), Quantity and IntOrString: untyped scalars.
          return UNTYPED_SCALAR;
      }
  }
}

function listType(elem: Type, f: GoField | undefined): ListType {
  const elements = fieldType(elem, undefined);
  if (f?.listType === 'map') return { kind: 'list', listType: 'map', keys: f.listMapKeys ?? [], elements };
  if (f?.listType === 'set') return { kind: 'list', listType: 'set', keys: [], elements };
  if (f?.listType === 'atomic') return { kind: 'list', listType: 'atomic', keys: [], elements };
  const strategy = (f?.patchStrategy ?? '').split(',');
  if (strategy.includes('merge')) {
    return f?.patchMergeKey ? { kind: 'list', listType: 'map', keys: [f.patchMergeKey], elements } : { kind: 'list', listType: 'set', keys: [], elements };
  }
  return { kind: 'list', listType: 'atomic', keys: [], elements };
}

/**
 * The merge type of a built-in kind, made on first use: from its Go struct (go-types.ts), else upstream's deduced object.
 */
export function builtinApplyType(group: string, version: string, kind: string): () => TypeInfo {
  let type: TypeInfo | undefined;
  return () => {
    if (type) return type;
    const struct = structOfKind(group, version, kind);
    type = struct ? typeFromGoStruct(struct) : BUILTIN_OBJECT;
    return type;
  };
}
