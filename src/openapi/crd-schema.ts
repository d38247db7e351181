/**
 * A CRD version's schema as apiextensions-apiserver publishes it (openapi
 * builder): the structural part of the schema, x-kubernetes-int-or-string
 * unfolded, the v2 simplifications (junctors dropped, nullable and
 * preserve-unknown-fields nodes untyped, defaults pruned), apiVersion, kind and
 * metadata added at the root and in embedded resources, and the
 * x-kubernetes-group-version-kind extension; plus the `<Kind>List` schema.
 */
import type { JSONSchemaProps, ValidationRule } from '../api/apiextensions.js';
import { GVK_EXTENSION, gvkExtension, LIST_META, OBJECT_META, orderKeys, ref, type GroupVersionKind, type Schema } from './schema-types.js';

const TYPE_META_API_VERSION =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const TYPE_META_KIND =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const EMBEDDED_API_VERSION =
  'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const EMBEDDED_KIND =
  'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const OBJECT_METADATA = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA = 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

/** Fields a structural schema keeps (id, $schema, $ref, patternProperties, dependencies, additionalItems and definitions go). */
const SCALAR_FIELDS = [
  'description',
  'type',
  'title',
  'format',
  'maximum',
  'minimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'multipleOf',
  'maxProperties',
  'minProperties',
] as const;
const TRUE_ONLY_FIELDS = ['nullable', 'exclusiveMaximum', 'exclusiveMinimum', 'uniqueItems', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string'] as const;

export interface PublishOptions {
  /** OpenAPI v2 (simplified for kubectl) rather than v3. */
  v2: boolean;
}

/**
 * The structural copy of a CRD schema node: what NewStructural keeps and
 * ToKubeOpenAPI writes back, in kube-openapi's key order.
 */
export function structuralSchema(p: JSONSchemaProps): Schema {
  const s: Schema = {};
  for (const k of SCALAR_FIELDS) if (p[k] !== undefined && p[k] !== null && p[k] !== '') s[k] = p[k];
  for (const k of TRUE_ONLY_FIELDS) if (p[k] === true) s[k] = true;
  if (p.default !== undefined) s.default = p.default;
  if (p.example !== undefined) s.example = p.example;
  if (p.enum && p.enum.length) s.enum = p.enum;
  if (p.required && p.required.length) s.required = [...p.required];
  if (p.externalDocs && (p.externalDocs.description || p.externalDocs.url)) s.externalDocs = { ...p.externalDocs };
  if (p.items && !Array.isArray(p.items)) s.items = structuralSchema(p.items);
  if (p.properties) {
    const props: Schema = {};
    for (const [k, v] of Object.entries(p.properties)) props[k] = structuralSchema(v);
    s.properties = props;
  }
  if (typeof p.additionalProperties === 'boolean') s.additionalProperties = p.additionalProperties;
  else if (p.additionalProperties) s.additionalProperties = structuralSchema(p.additionalProperties);
  for (const j of ['allOf', 'anyOf', 'oneOf'] as const) if (p[j]?.length) s[j] = (p[j] as JSONSchemaProps[]).map(structuralSchema);
  if (p.not) s.not = structuralSchema(p.not);
  if (p['x-kubernetes-list-map-keys']?.length) s['x-kubernetes-list-map-keys'] = [...p['x-kubernetes-list-map-keys']];
  if (p['x-kubernetes-list-type'] !== undefined) s['x-kubernetes-list-type'] = p['x-kubernetes-list-type'];
  if (p['x-kubernetes-map-type'] !== undefined) s['x-kubernetes-map-type'] = p['x-kubernetes-map-type'];
  if (p['x-kubernetes-validations']?.length) s['x-kubernetes-validations'] = p['x-kubernetes-validations'].map(validationRule);
  return orderKeys(s);
}

function validationRule(rule: ValidationRule): Record<string, unknown> {
  const r = rule as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of ['rule', 'message', 'messageExpression', 'reason', 'fieldPath', 'optionalOldSelf']) {
    if (r[k] !== undefined && r[k] !== '' && r[k] !== false && r[k] !== null) out[k] = r[k];
  }
  return out;
}

/** Unfold: an int-or-string node without the accepted anyOf patterns gets `anyOf: [integer, string]`. */
export function unfoldIntOrString(s: Schema): Schema {
  visit(s, (node) => {
    if (node['x-kubernetes-int-or-string'] !== true) return;
    if (isIntOrStringAnyOf(node.anyOf) || (Array.isArray(node.allOf) && isIntOrStringAnyOf(node.allOf[0]?.anyOf))) return;
    const anyOf = [{ type: 'integer' }, { type: 'string' }];
    if (!node.anyOf) node.anyOf = anyOf;
    else node.allOf = [{ anyOf }, ...(node.allOf ?? [])];
    reorderInPlace(node);
  });
  return s;
}

function isIntOrStringAnyOf(anyOf: unknown): boolean {
  return Array.isArray(anyOf) && anyOf.length === 2 && anyOf[0]?.type === 'integer' && anyOf[1]?.type === 'string' && Object.keys(anyOf[0]).length === 1 && Object.keys(anyOf[1]).length === 1;
}

function reorderInPlace(node: Schema): void {
  const ordered = orderKeys(node);
  for (const k of Object.keys(node)) delete node[k];
  Object.assign(node, ordered);
}

/** Pre-order visit of properties, items and additionalProperties (not junctors), as the structural Visitor walks. */
function visit(s: Schema, f: (node: Schema) => void): void {
  const stack: Schema[] = [s];
  while (stack.length) {
    const node = stack.pop() as Schema;
    f(node);
    const kids: Schema[] = [];
    if (node.items && typeof node.items === 'object') kids.push(node.items);
    if (node.properties) kids.push(...(Object.values(node.properties) as Schema[]));
    if (node.additionalProperties && typeof node.additionalProperties === 'object') kids.push(node.additionalProperties);
    stack.push(...kids.reverse());
  }
}

/** ToStructuralOpenAPIV2 followed by PruneDefaults, in place. */
export function toOpenAPIV2(s: Schema): Schema {
  visit(s, (node) => {
    delete node.allOf;
    delete node.oneOf;
    delete node.anyOf;
    delete node.not;
    delete node.default;
    if (node.nullable) {
      delete node.type;
      delete node.nullable;
      delete node.items;
      delete node.properties;
    }
    if (node['x-kubernetes-preserve-unknown-fields']) {
      delete node.items;
      delete node.properties;
    }
    if (node.items === undefined && node.type === 'array') delete node.type;
    if (node['x-kubernetes-preserve-unknown-fields'] && node.type === 'object') delete node.type;
    if (node.properties && Array.isArray(node.required)) {
      const nullable = new Set(Object.entries(node.properties as Record<string, Schema>).filter(([, v]) => v.nullable).map(([k]) => k));
      node.required = node.required.filter((r: string) => !nullable.has(r));
      if (node.required.length === 0) delete node.required;
    }
    if (node.additionalProperties && typeof node.additionalProperties === 'object' && node.additionalProperties.nullable) delete node.required;
  });
  return s;
}

/** addEmbeddedProperties: apiVersion, kind and metadata in every x-kubernetes-embedded-resource node. */
function addEmbeddedProperties(s: Schema, opts: PublishOptions): void {
  const post: Schema[] = [];
  visit(s, (node) => post.push(node));
  for (const node of post) {
    if (opts.v2 && node['x-kubernetes-preserve-unknown-fields']) continue;
    if (!node['x-kubernetes-embedded-resource']) continue;
    node.properties = {
      ...(node.properties ?? {}),
      apiVersion: { description: EMBEDDED_API_VERSION, type: 'string' },
      kind: { description: EMBEDDED_KIND, type: 'string' },
      metadata: ref(OBJECT_META, OBJECT_METADATA),
    };
    const required: string[] = Array.isArray(node.required) ? [...node.required] : [];
    const had = new Set(required);
    if (!had.has('kind')) required.push('kind');
    if (!had.has('apiVersion')) required.push('apiVersion');
    node.required = required;
    reorderInPlace(node);
  }
}

export interface KindSchemaInput {
  gvk: GroupVersionKind;
  /** The version's openAPIV3Schema when it is published (structural), else undefined. */
  schema: JSONSchemaProps | undefined;
  /** spec.preserveUnknownFields of the CRD. */
  preserveUnknownFields?: boolean;
  /** The version's selectableFields (published as x-kubernetes-selectable-fields). */
  selectableFields?: readonly string[];
}

/** buildKubeNative: the published definition of a custom resource kind. */
export function kindSchema(input: KindSchemaInput, opts: PublishOptions): Schema {
  let ret: Schema;
  const root = input.schema;
  if (!root || (opts.v2 && (root['x-kubernetes-preserve-unknown-fields'] === true || input.preserveUnknownFields))) {
    ret = { type: 'object' };
  } else {
    let s = unfoldIntOrString(structuralSchema(root));
    if (opts.v2) s = toOpenAPIV2(s);
    s.properties = {
      ...(s.properties ?? {}),
      apiVersion: { description: TYPE_META_API_VERSION, type: 'string' },
      kind: { description: TYPE_META_KIND, type: 'string' },
      metadata: ref(OBJECT_META, OBJECT_METADATA),
    };
    addEmbeddedProperties(s, opts);
    ret = s;
  }
  ret[GVK_EXTENSION] = gvkExtension(input.gvk);
  if (input.selectableFields?.length) ret['x-kubernetes-selectable-fields'] = input.selectableFields.map((fieldPath) => ({ fieldPath }));
  return orderKeys(ret);
}

/** buildListSchema: `<ListKind>` with items of the kind's definition. */
export function listSchema(gvk: GroupVersionKind, listKind: string, plural: string, kindDefinition: string): Schema {
  return orderKeys({
    description: `${listKind} is a list of ${gvk.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { description: TYPE_META_API_VERSION, type: 'string' },
      items: {
        description: `List of ${plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        type: 'array',
        items: ref(kindDefinition),
      },
      kind: { description: TYPE_META_KIND, type: 'string' },
      metadata: ref(LIST_META, LIST_METADATA),
    },
    [GVK_EXTENSION]: gvkExtension({ ...gvk, kind: listKind }),
  });
}

/** gvkToModelName: `<reversed group>.<version>.<Kind>` (`com.example.stable.v1.CronTab`). */
export function definitionName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}
