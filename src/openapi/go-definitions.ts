/**
 * The OpenAPI definitions of the built-in types, made from kapi's one source of them
 * (api/go-types.ts and its documentation, go-type-docs.ts) as kube-openapi makes them
 * from the Go structs: definition names by Go package, descriptions, types and formats, `required`
 * (fields without omitempty that are not optional), list, map and patch extensions, and the
 * group-version-kind of kinds. The v3 form adds the zero defaults upstream publishes there
 * (non-pointer structs `{}`, required scalars their zero value).
 */
import { goTypeDocs } from '../api/go-type-docs.js';
import { deref, parseType, type Type } from '../api/go-type-expr.js';
import { GO_PACKAGES, GO_STRUCTS } from '../api/go-types.js';
import type { GoField } from '../api/go-types-model.js';
import { GVK_EXTENSION, orderKeys, ref, type Schema } from './schema-types.js';

/** Package id prefixes (`core/v1`) → definition name prefixes. */
function packagePrefix(pkg: string): string {
  if (pkg === 'meta/v1') return 'io.k8s.apimachinery.pkg.apis.meta.v1';
  if (pkg === 'apiextensions/v1') return 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1';
  return `io.k8s.api.${pkg.replace('/', '.')}`;
}

/** A struct id's definition name (`core/v1.Pod` → `io.k8s.api.core.v1.Pod`). */
export function goDefinitionName(structId: string): string {
  const dot = structId.lastIndexOf('.');
  return `${packagePrefix(structId.slice(0, dot))}.${structId.slice(dot + 1)}`;
}

let byName: Map<string, string> | undefined;

/** The struct id a definition name stands for, if it is one of go-types.ts's. */
export function structOfDefinition(name: string): string | undefined {
  byName ??= new Map(Object.keys(GO_STRUCTS).map((id) => [goDefinitionName(id), id]));
  return byName.get(name);
}

const SPECIAL_REFS: Record<string, string> = {
  Time: 'io.k8s.apimachinery.pkg.apis.meta.v1.Time',
  MicroTime: 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime',
  Quantity: 'io.k8s.apimachinery.pkg.api.resource.Quantity',
  IntOrString: 'io.k8s.apimachinery.pkg.util.intstr.IntOrString',
  RawExtension: 'io.k8s.apimachinery.pkg.runtime.RawExtension',
  FieldsV1: 'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1',
  JSON: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON',
};

/** Definitions of the specials that the hand-kept meta definitions do not hold. */
export const SPECIAL_DEFINITIONS: Record<string, Schema> = {
  'io.k8s.apimachinery.pkg.runtime.RawExtension': {
    description:
      'RawExtension is used to hold extensions in external versions.\n\nTo use this, make a field which has RawExtension as its type in your external, versioned struct, and Object in your internal struct. You also need to register your various plugin types.\n\n// Internal package:\n\n\ttype MyAPIObject struct {\n\t\truntime.TypeMeta `json:",inline"`\n\t\tMyPlugin runtime.Object `json:"myPlugin"`\n\t}\n\n\ttype PluginA struct {\n\t\tAOption string `json:"aOption"`\n\t}\n\n// External package:\n\n\ttype MyAPIObject struct {\n\t\truntime.TypeMeta `json:",inline"`\n\t\tMyPlugin runtime.RawExtension `json:"myPlugin"`\n\t}\n\n\ttype PluginA struct {\n\t\tAOption string `json:"aOption"`\n\t}\n\n// On the wire, the JSON will look something like this:\n\n\t{\n\t\t"kind":"MyAPIObject",\n\t\t"apiVersion":"v1",\n\t\t"myPlugin": {\n\t\t\t"kind":"PluginA",\n\t\t\t"aOption":"foo",\n\t\t},\n\t}\n\nSo what happens? Decode first uses json or yaml to unmarshal the serialized data into your external MyAPIObject. That causes the raw JSON to be stored, but not unpacked. The next step is to copy (using pkg/conversion) into the internal struct. The runtime package\'s DefaultScheme has conversion functions installed which will unpack the JSON stored in RawExtension, turning it into the correct object type, and storing it in the Object. (TODO: In the case where the object is of an unknown type, a runtime.Unknown object will be created and stored.)',
    type: 'object',
  },
};

const SCALAR_SCHEMAS: Record<string, Schema> = {
  string: { type: 'string' },
  bool: { type: 'boolean' },
  int32: { type: 'integer', format: 'int32' },
  int: { type: 'integer', format: 'int32' },
  byte: { type: 'integer', format: 'int32' },
  uint32: { type: 'integer', format: 'int64' },
  int64: { type: 'integer', format: 'int64' },
  uint64: { type: 'integer', format: 'int64' },
  float64: { type: 'number', format: 'double' },
};
const ZERO: Record<string, unknown> = { string: '', bool: false, int32: 0, int: 0, byte: 0, uint32: 0, int64: 0, uint64: 0, float64: 0 };

/** The schema of a value of type t; v3: with the `{}` default of struct items, as kube-openapi writes. */
function typeSchema(t: Type, v3: boolean): Schema {
  switch (t.k) {
    case 'ptr':
      return typeSchema(t.elem, v3);
    case 'scalar':
      return { ...SCALAR_SCHEMAS[t.s] };
    case 'bytes':
      return { type: 'string', format: 'byte' };
    case 'special':
      return t.name === 'Duration' ? { type: 'string' } : ref(SPECIAL_REFS[t.name]);
    case 'struct':
      return ref(goDefinitionName(t.id));
    case 'slice':
      return { type: 'array', items: withZeroDefault(typeSchema(t.elem, v3), t.elem, v3) };
    case 'map':
      return { type: 'object', additionalProperties: withZeroDefault(typeSchema(t.value, v3), t.value, v3) };
  }
}

/** v3: a non-pointer struct value defaults to `{}`. */
function withZeroDefault(s: Schema, t: Type, v3: boolean): Schema {
  return v3 && t.k === 'struct' ? { ...s, default: {} } : s;
}

function fieldSchema(f: GoField, doc: string | undefined, v3: boolean): Schema {
  const t = parseType(f.type);
  const s = typeSchema(t, v3);
  if (doc) s.description = doc;
  const marked = f.default === undefined ? undefined : parseDefault(f.default);
  if (marked !== undefined) s.default = marked;
  else if (v3 && t.k === 'struct') s.default = {};
  else if (v3 && t.k === 'scalar' && !f.omitempty && !f.omitzero) s.default = ZERO[t.s];
  if (f.listType) s['x-kubernetes-list-type'] = f.listType;
  if (f.listMapKeys) s['x-kubernetes-list-map-keys'] = f.listMapKeys;
  if (f.mapType) s['x-kubernetes-map-type'] = f.mapType;
  if (f.structType) s['x-kubernetes-map-type'] = f.structType;
  if (f.patchStrategy) s['x-kubernetes-patch-strategy'] = f.patchStrategy;
  if (f.patchMergeKey) s['x-kubernetes-patch-merge-key'] = f.patchMergeKey;
  return orderKeys(s);
}

/** A `+default=` marker's JSON value; markers naming a Go constant (`ref(...)`) are left out. */
function parseDefault(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A struct's fields as properties, those of inline (embedded) structs included, with their documentation. */
function collectProperties(structId: string, v3: boolean, properties: Schema, required: string[]): void {
  const docs = goTypeDocs()[structId] ?? {};
  for (const f of GO_STRUCTS[structId]?.fields ?? []) {
    if (f.inline) {
      const t = deref(parseType(f.type));
      if (t.k === 'struct') collectProperties(t.id, v3, properties, required);
      continue;
    }
    if (f.json in properties) continue;
    properties[f.json] = fieldSchema(f, docs[f.json], v3);
    if (f.required || (!f.optional && !f.omitempty && !f.omitzero)) required.push(f.json);
  }
}

const TYPE_META_PROPERTIES = {
  apiVersion: {
    description:
      'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
    type: 'string',
  },
  kind: {
    description:
      'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
    type: 'string',
  },
};

const cache = { v2: new Map<string, Schema>(), v3: new Map<string, Schema>() };

/** The definition of a go-types.ts struct by its definition name, in the v2 form or with v3's defaults. */
export function goDefinition(name: string, v3 = false): Schema | undefined {
  const memo = v3 ? cache.v3 : cache.v2;
  const hit = memo.get(name);
  if (hit) return hit;
  const id = structOfDefinition(name);
  if (!id) return undefined;
  const struct = GO_STRUCTS[id];
  const properties: Schema = struct.typeMeta ? { ...TYPE_META_PROPERTIES } : {};
  const required: string[] = [];
  collectProperties(id, v3, properties, required);
  const def: Schema = { type: 'object' };
  const doc = goTypeDocs()[id]?.[''];
  if (doc) def.description = doc;
  if (Object.keys(properties).length > 0) def.properties = properties;
  if (required.length > 0) def.required = required;
  if (struct.structType) def['x-kubernetes-map-type'] = struct.structType;
  if (struct.mapType) def['x-kubernetes-map-type'] = struct.mapType;
  if (struct.typeMeta) {
    const pkg = GO_PACKAGES[id.slice(0, id.lastIndexOf('.'))];
    def[GVK_EXTENSION] = [{ group: pkg.group, kind: id.slice(id.lastIndexOf('.') + 1), version: pkg.version }];
  }
  const out = orderKeys(def);
  memo.set(name, out);
  return out;
}
