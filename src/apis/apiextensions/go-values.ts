/**
 * Bad values of field errors that upstream passes as internal Go structs
 * (`spec.versions`, a root schema, `items`). apimachinery renders them with
 * json.Marshal, and the internal apiextensions types have no json tags: every
 * field appears under its Go name, zero values included. These builders produce
 * JS objects whose JSON.stringify is that text.
 */
import { isObject, type JSONObject } from './json-util.js';
import type { InternalVersion, JSONSchemaProps } from '../../api/apiextensions.js';

const nil = (v: unknown): unknown => (v === undefined ? null : v);
const s = (v: unknown): unknown => (v === undefined || v === null ? '' : v);
const b = (v: unknown): unknown => (v === undefined || v === null ? false : v);
const n = (v: unknown): unknown => (v === undefined || v === null ? 0 : v);

function list<T>(v: T[] | undefined | null, f: (x: T) => unknown): unknown {
  return Array.isArray(v) ? v.map(f) : null;
}

function sortedMap<T>(v: Record<string, T> | undefined, f: (x: T) => unknown): unknown {
  if (!isObject(v)) return null;
  const out: JSONObject = {};
  for (const k of Object.keys(v).sort()) out[k] = f(v[k] as T);
  return out;
}

function ptrSchema(v: unknown): unknown {
  return isObject(v) ? goSchema(v as JSONSchemaProps) : null;
}

function orBool(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return { Allows: v, Schema: null };
  return { Allows: true, Schema: ptrSchema(v) };
}

export function goItems(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (Array.isArray(v)) return { Schema: null, JSONSchemas: v.map((x) => goSchema(x as JSONSchemaProps)) };
  return { Schema: ptrSchema(v), JSONSchemas: null };
}

/** An internal apiextensions.JSONSchemaProps. */
export function goSchema(x: JSONSchemaProps): JSONObject {
  return {
    ID: s(x.id),
    Schema: s(x.$schema),
    Ref: nil(x.$ref),
    Description: s(x.description),
    Type: s(x.type),
    Nullable: b(x.nullable),
    Format: s(x.format),
    Title: s(x.title),
    Default: nil(x.default),
    Maximum: nil(x.maximum),
    ExclusiveMaximum: b(x.exclusiveMaximum),
    Minimum: nil(x.minimum),
    ExclusiveMinimum: b(x.exclusiveMinimum),
    MaxLength: nil(x.maxLength),
    MinLength: nil(x.minLength),
    Pattern: s(x.pattern),
    MaxItems: nil(x.maxItems),
    MinItems: nil(x.minItems),
    UniqueItems: b(x.uniqueItems),
    MultipleOf: nil(x.multipleOf),
    Enum: list(x.enum, (e) => e),
    MaxProperties: nil(x.maxProperties),
    MinProperties: nil(x.minProperties),
    Required: list(x.required, (e) => e),
    Items: goItems(x.items),
    AllOf: list(x.allOf, goSchema),
    OneOf: list(x.oneOf, goSchema),
    AnyOf: list(x.anyOf, goSchema),
    Not: ptrSchema(x.not),
    Properties: sortedMap(x.properties, goSchema),
    AdditionalProperties: orBool(x.additionalProperties),
    PatternProperties: sortedMap(x.patternProperties, goSchema),
    Dependencies: sortedMap(x.dependencies, (d) => (Array.isArray(d) ? { Schema: null, Property: d } : { Schema: ptrSchema(d), Property: null })),
    AdditionalItems: orBool(x.additionalItems),
    Definitions: sortedMap(x.definitions, goSchema),
    ExternalDocs: isObject(x.externalDocs) ? { Description: s(x.externalDocs.description), URL: s(x.externalDocs.url) } : null,
    Example: nil(x.example),
    XPreserveUnknownFields: nil(x['x-kubernetes-preserve-unknown-fields']),
    XEmbeddedResource: b(x['x-kubernetes-embedded-resource']),
    XIntOrString: b(x['x-kubernetes-int-or-string']),
    XListMapKeys: list(x['x-kubernetes-list-map-keys'], (e) => e),
    XListType: nil(x['x-kubernetes-list-type']),
    XMapType: nil(x['x-kubernetes-map-type']),
    XValidations: list(x['x-kubernetes-validations'], (r) => ({
      Rule: s(r.rule),
      Message: s(r.message),
      MessageExpression: s(r.messageExpression),
      Reason: nil(r.reason),
      FieldPath: s(r.fieldPath),
      OptionalOldSelf: nil(r.optionalOldSelf),
    })),
  };
}

/** `spec.versions` as []apiextensions.CustomResourceDefinitionVersion. */
export function goVersions(versions: InternalVersion[] | undefined): unknown {
  return list(versions, (v) => ({
    Name: s(v.name),
    Served: b(v.served),
    Storage: b(v.storage),
    Deprecated: b(v.deprecated),
    DeprecationWarning: nil(v.deprecationWarning),
    Schema: isObject(v.schema) ? { OpenAPIV3Schema: ptrSchema(v.schema.openAPIV3Schema) } : null,
    Subresources: isObject(v.subresources)
      ? {
          Status: isObject(v.subresources.status) ? {} : null,
          Scale: isObject(v.subresources.scale)
            ? {
                SpecReplicasPath: s(v.subresources.scale.specReplicasPath),
                StatusReplicasPath: s(v.subresources.scale.statusReplicasPath),
                LabelSelectorPath: nil(v.subresources.scale.labelSelectorPath),
              }
            : null,
        }
      : null,
    AdditionalPrinterColumns: list(v.additionalPrinterColumns, (c) => ({
      Name: s(c.name),
      Type: s(c.type),
      Format: s(c.format),
      Description: s(c.description),
      Priority: n(c.priority),
      JSONPath: s(c.JSONPath),
    })),
    SelectableFields: list(v.selectableFields, (f) => ({ JSONPath: s(f.jsonPath) })),
  }));
}
