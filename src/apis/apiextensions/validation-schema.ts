/**
 * OpenAPI schema checks of CRD validation (validateCustomResourceDefinitionValidation
 * and ValidateCustomResourceDefinitionOpenAPISchema, 1.20): status-subresource root
 * restrictions (B-08), forbidden constructs (the cheap part of B-07), list and map
 * type extensions. The structural-schema checks (NewStructural, ValidateStructural,
 * ValidateDefaults) are delegated to a hook supplied by the schema package.
 */
import { childPath, field, indexPath, type FieldError } from '../../machinery/field-errors.js';
import { goItems, goSchema } from './go-values.js';
import { isObject } from './json-util.js';
import type { CustomResourceValidation, JSONSchemaProps, StructuralSchemaContext } from '../../api/apiextensions.js';


export type StructuralSchemaValidator = (schema: JSONSchemaProps, path: string, ctx: StructuralSchemaContext) => FieldError[];
/** Where a selectable field's JSON path leads in a schema (see CRDValidationOptions.selectableField). */
export type SelectableFieldResolver = (schema: JSONSchemaProps, jsonPath: string) => { path: string; type: string } | Error | undefined;

/** Upstream's validationOptions, computed per request. */
export interface SchemaOptions {
  allowDefaults: boolean;
  disallowDefaultsReason: string;
  requireRecognizedConversionReviewVersion: boolean;
  requireImmutableNames: boolean;
  requireOpenAPISchema: boolean;
  requireValidPropertyType: boolean;
  requireStructuralSchema: boolean;
  requirePrunedDefaults: boolean;
  requireAtomicSetType: boolean;
  requireMapListKeysMapSetValidation: boolean;
  validateStructural?: StructuralSchemaValidator;
  selectableField?: SelectableFieldResolver;
  /** Selectable field sets (by version name; '' top-level) that were over the limit before, and may stay so unchanged. */
  allowTooManySelectableFields?: Map<string, unknown>;
  /** On update: the versions whose schema (GetSchemaForVersion) is unchanged. */
  versionsWithUnchangedSchemas?: Set<string>;
  /** Set per version from versionsWithUnchangedSchemas: skip the per-expression CEL cost limit. */
  suppressPerExpressionCost?: boolean;
}

/** specStandardValidatorV3's state. */
interface StandardValidator {
  allowDefaults: boolean;
  disallowDefaultsReason: string;
  insideResourceMeta: boolean;
  requireValidPropertyType: boolean;
}

const withForbiddenDefaults = (v: StandardValidator, reason: string): StandardValidator => ({ ...v, allowDefaults: false, disallowDefaultsReason: reason });
const withInsideResourceMeta = (v: StandardValidator): StandardValidator => ({ ...v, insideResourceMeta: true });

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = ['metadata', 'kind', 'apiVersion'];

/** Root fields in internal struct order: Go name, JSON key, zero-test kind (s string, b bool, p pointer/collection). */
const ROOT_FIELDS: [string, keyof JSONSchemaProps, 's' | 'b' | 'p'][] = [
  ['ID', 'id', 's'],
  ['Schema', '$schema', 's'],
  ['Ref', '$ref', 'p'],
  ['Description', 'description', 's'],
  ['Type', 'type', 's'],
  ['Nullable', 'nullable', 'b'],
  ['Format', 'format', 's'],
  ['Title', 'title', 's'],
  ['Default', 'default', 'p'],
  ['Maximum', 'maximum', 'p'],
  ['ExclusiveMaximum', 'exclusiveMaximum', 'b'],
  ['Minimum', 'minimum', 'p'],
  ['ExclusiveMinimum', 'exclusiveMinimum', 'b'],
  ['MaxLength', 'maxLength', 'p'],
  ['MinLength', 'minLength', 'p'],
  ['Pattern', 'pattern', 's'],
  ['MaxItems', 'maxItems', 'p'],
  ['MinItems', 'minItems', 'p'],
  ['UniqueItems', 'uniqueItems', 'b'],
  ['MultipleOf', 'multipleOf', 'p'],
  ['Enum', 'enum', 'p'],
  ['MaxProperties', 'maxProperties', 'p'],
  ['MinProperties', 'minProperties', 'p'],
  ['Required', 'required', 'p'],
  ['Items', 'items', 'p'],
  ['AllOf', 'allOf', 'p'],
  ['OneOf', 'oneOf', 'p'],
  ['AnyOf', 'anyOf', 'p'],
  ['Not', 'not', 'p'],
  ['Properties', 'properties', 'p'],
  ['AdditionalProperties', 'additionalProperties', 'p'],
  ['PatternProperties', 'patternProperties', 'p'],
  ['Dependencies', 'dependencies', 'p'],
  ['AdditionalItems', 'additionalItems', 'p'],
  ['Definitions', 'definitions', 'p'],
  ['ExternalDocs', 'externalDocs', 'p'],
  ['Example', 'example', 'p'],
  ['XPreserveUnknownFields', 'x-kubernetes-preserve-unknown-fields', 'p'],
  ['XEmbeddedResource', 'x-kubernetes-embedded-resource', 'b'],
  ['XIntOrString', 'x-kubernetes-int-or-string', 'b'],
  ['XListMapKeys', 'x-kubernetes-list-map-keys', 'p'],
  ['XListType', 'x-kubernetes-list-type', 'p'],
  ['XMapType', 'x-kubernetes-map-type', 'p'],
  ['XValidations', 'x-kubernetes-validations', 'p'],
];

const ALLOWED_AT_ROOT = [
  'Description',
  'Type',
  'Format',
  'Title',
  'Maximum',
  'ExclusiveMaximum',
  'Minimum',
  'ExclusiveMinimum',
  'MaxLength',
  'MinLength',
  'Pattern',
  'MaxItems',
  'MinItems',
  'UniqueItems',
  'MultipleOf',
  'Required',
  'Items',
  'Properties',
  'ExternalDocs',
  'Example',
  'XPreserveUnknownFields',
  // HEAD: CEL rules are allowed at the root (1.20 had no x-kubernetes-validations)
  'XValidations',
];

function isZero(v: unknown, kind: 's' | 'b' | 'p'): boolean {
  if (kind === 's') return v === undefined || v === null || v === '';
  if (kind === 'b') return v !== true;
  return v === undefined || v === null;
}

/** B-08: with the status subresource only some fields may be set at the root; checks stop at the first offender. */
function validateStatusRoot(schema: JSONSchemaProps, path: string): FieldError[] {
  for (const [goName, key, kind] of ROOT_FIELDS) {
    if (isZero(schema[key], kind)) continue;
    if (goName === 'Type') {
      if (schema.type !== 'object') {
        return [field.invalid(childPath(path, 'openAPIV3Schema.type'), schema.type, 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled')];
      }
      continue;
    }
    if (!ALLOWED_AT_ROOT.includes(goName)) {
      const detail = `only [${ALLOWED_AT_ROOT.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`;
      return [field.invalid(childPath(path, 'openAPIV3Schema'), goSchema(schema), detail)];
    }
  }
  return [];
}

/** validateCustomResourceDefinitionValidation for spec.validation or spec.versions[i].schema. */
export function validateCustomResourceValidation(
  validation: CustomResourceValidation | undefined,
  statusEnabled: boolean,
  opts: SchemaOptions,
  path: string,
): FieldError[] {
  const schema = validation?.openAPIV3Schema;
  if (!isObject(schema)) return [];
  const errs: FieldError[] = [];
  if (statusEnabled) errs.push(...validateStatusRoot(schema, path));
  if (schema.nullable === true) errs.push(field.forbidden(childPath(path, 'openAPIV3Schema.nullable'), 'nullable cannot be true at the root'));
  const ssv: StandardValidator = {
    allowDefaults: opts.allowDefaults,
    disallowDefaultsReason: opts.disallowDefaultsReason,
    insideResourceMeta: false,
    requireValidPropertyType: opts.requireValidPropertyType,
  };
  const schemaPath = childPath(path, 'openAPIV3Schema');
  errs.push(...validateOpenAPISchema(schema, schemaPath, ssv, true, opts));
  if (opts.requireStructuralSchema && opts.validateStructural) {
    const ctx: StructuralSchemaContext = { hasOtherErrors: errs.length > 0, requirePrunedDefaults: opts.requirePrunedDefaults };
    if (opts.suppressPerExpressionCost) ctx.suppressPerExpressionCost = true;
    errs.push(...opts.validateStructural(schema, schemaPath, ctx));
  }
  return errs;
}

function standardChecks(schema: JSONSchemaProps, path: string, v: StandardValidator): FieldError[] {
  const errs: FieldError[] = [];
  const type = typeof schema.type === 'string' ? schema.type : '';
  if (v.requireValidPropertyType && type && !OPENAPI_V3_TYPES.includes(type)) errs.push(field.notSupported(childPath(path, 'type'), type, OPENAPI_V3_TYPES));
  if (schema.default !== undefined && schema.default !== null && !v.allowDefaults) {
    errs.push(field.forbidden(childPath(path, 'default'), 'must not be set' + (v.disallowDefaultsReason ? ' ' + v.disallowDefaultsReason : '')));
  }
  if (schema.id) errs.push(field.forbidden(childPath(path, 'id'), 'id is not supported'));
  if (schema.additionalItems !== undefined && schema.additionalItems !== null) errs.push(field.forbidden(childPath(path, 'additionalItems'), 'additionalItems is not supported'));
  if (isObject(schema.patternProperties) && Object.keys(schema.patternProperties).length) {
    errs.push(field.forbidden(childPath(path, 'patternProperties'), 'patternProperties is not supported'));
  }
  if (isObject(schema.definitions) && Object.keys(schema.definitions).length) errs.push(field.forbidden(childPath(path, 'definitions'), 'definitions is not supported'));
  if (schema.dependencies !== undefined && schema.dependencies !== null) errs.push(field.forbidden(childPath(path, 'dependencies'), 'dependencies is not supported'));
  if (schema.$ref !== undefined && schema.$ref !== null) errs.push(field.forbidden(childPath(path, '$ref'), '$ref is not supported'));
  if (type === 'null') errs.push(field.forbidden(childPath(path, 'type'), 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(schema.items) && schema.items.length) errs.push(field.forbidden(childPath(path, 'items'), 'items must be a schema object and not an array'));
  if (v.insideResourceMeta && schema['x-kubernetes-embedded-resource'] === true) {
    errs.push(field.forbidden(childPath(path, 'x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'));
  }
  return errs;
}

function sortedEntries<T>(m: Record<string, T> | undefined): [string, T][] {
  return isObject(m) ? Object.keys(m).sort().map((k) => [k, m[k] as T]) : [];
}

/**
 * The checks of each schema in the tree, in upstream's (recursive) order: a schema's own checks,
 * then each subschema's, then its extensions. Schemas nest as deep as a request may before
 * the structural checks refuse them, so the walk keeps its own stack: a schema to check, or
 * the extensions of one whose subschemas are done.
 */
function validateOpenAPISchema(root: JSONSchemaProps | undefined, rootPath: string, rootSsv: StandardValidator, rootIsRoot: boolean, opts: SchemaOptions): FieldError[] {
  const errs: FieldError[] = [];
  type Task = { schema: unknown; path: string; ssv: StandardValidator; isRoot: boolean; extensionsOf?: undefined } | { extensionsOf: JSONSchemaProps; path: string };
  const stack: Task[] = [{ schema: root, path: rootPath, ssv: rootSsv, isRoot: rootIsRoot }];
  while (stack.length > 0) {
    const task = stack.pop() as Task;
    if (task.extensionsOf) {
      for (const e of validateExtensions(task.extensionsOf, task.path, opts)) errs.push(e);
      continue;
    }
    const { path, ssv, isRoot } = task;
    const schema = task.schema as JSONSchemaProps | undefined;
    if (!isObject(schema)) continue;
    for (const e of standardChecks(schema, path, ssv)) errs.push(e);
    // The subschemas to check, in order; pushed in reverse below, after the extensions (checked last).
    const subs: Task[] = [];
    const recurse = (s: unknown, p: string, v: StandardValidator): void => {
      subs.push({ schema: s, path: p, ssv: v, isRoot: false });
    };
    if (schema.uniqueItems === true) {
      errs.push(field.forbidden(childPath(path, 'uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
    }
    const properties = sortedEntries(schema.properties);
    const additional = schema.additionalProperties;
    if (additional !== undefined && additional !== null) {
      if (properties.length && (additional === false || isObject(additional))) {
        errs.push(field.forbidden(childPath(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
      }
      const sub = ssv.insideResourceMeta ? withForbiddenDefaults(ssv, 'inside additionalProperties applying to object metadata') : ssv;
      if (isObject(additional)) recurse(additional, childPath(path, 'additionalProperties'), sub);
    }
    for (const [name, prop] of properties) {
      let sub = ssv;
      if ((isRoot || schema['x-kubernetes-embedded-resource'] === true) && META_FIELDS.includes(name)) {
        sub = withInsideResourceMeta(ssv);
        if (isRoot) sub = withForbiddenDefaults(sub, `in top-level ${name}`);
      }
      recurse(prop, `${childPath(path, 'properties')}[${name}]`, sub);
    }
    recurse(schema.not, childPath(path, 'not'), ssv);
    for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
      const list = schema[key];
      if (Array.isArray(list)) list.forEach((s, i) => recurse(s, indexPath(childPath(path, key), i), ssv));
    }
    for (const [name, def] of sortedEntries(schema.definitions)) recurse(def, `${childPath(path, 'definitions')}[${name}]`, ssv);
    if (Array.isArray(schema.items)) schema.items.forEach((s, i) => recurse(s, indexPath(childPath(path, 'items'), i), ssv));
    else recurse(schema.items, childPath(path, 'items'), ssv);
    for (const [name, dep] of sortedEntries(schema.dependencies)) {
      if (isObject(dep)) recurse(dep, `${childPath(path, 'dependencies')}[${name}]`, ssv);
    }
    stack.push({ extensionsOf: schema, path });
    for (let i = subs.length - 1; i >= 0; i--) stack.push(subs[i]);
  }
  return errs;
}

const pathOf = (path: string, ...parts: string[]): string => parts.reduce((p, x) => childPath(p, x), path);

/** x-kubernetes-preserve-unknown-fields, -map-type, -list-type and -list-map-keys. */
function validateExtensions(schema: JSONSchemaProps, path: string, opts: SchemaOptions): FieldError[] {
  const errs: FieldError[] = [];
  const type = typeof schema.type === 'string' ? schema.type : '';
  const mapType = schema['x-kubernetes-map-type'];
  const listType = schema['x-kubernetes-list-type'];
  const mapKeys = Array.isArray(schema['x-kubernetes-list-map-keys']) ? schema['x-kubernetes-list-map-keys'] : [];
  const items = schema.items;
  const itemSchema = isObject(items) ? (items as JSONSchemaProps) : undefined;
  const hasItems = items !== undefined && items !== null;

  if (schema['x-kubernetes-preserve-unknown-fields'] === false) {
    errs.push(field.invalid(pathOf(path, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  }
  const typeMustBe = (want: string, ext: string): void => {
    const detail = `must be ${want} if ${ext} is specified`;
    errs.push(type === '' ? field.required(pathOf(path, 'type'), detail) : field.invalid(pathOf(path, 'type'), type, detail));
  };
  if (mapType !== undefined && mapType !== null && type !== 'object') typeMustBe('object', 'x-kubernetes-map-type');
  if (mapType !== undefined && mapType !== null && mapType !== 'atomic' && mapType !== 'granular') {
    errs.push(field.notSupported(pathOf(path, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
  }
  const setItemDetail = 'must be atomic as item of a list with x-kubernetes-list-type=set';
  if (listType !== undefined && listType !== null && type !== 'array') {
    typeMustBe('array', 'x-kubernetes-list-type');
  } else if (opts.requireAtomicSetType && listType === 'set' && itemSchema) {
    const itemListType = itemSchema['x-kubernetes-list-type'] ?? null;
    if (itemSchema.type === 'array' && itemListType !== null && itemListType !== 'atomic') {
      errs.push(field.invalid(pathOf(path, 'items', 'x-kubernetes-list-type'), itemListType, setItemDetail));
    } else if (itemSchema.type === 'object' && itemSchema['x-kubernetes-map-type'] !== 'atomic') {
      // upstream reports the item's list type as the bad value here
      errs.push(field.invalid(pathOf(path, 'items', 'x-kubernetes-map-type'), itemListType, setItemDetail));
    }
  }
  if (listType !== undefined && listType !== null && !['atomic', 'set', 'map'].includes(listType)) {
    errs.push(field.notSupported(pathOf(path, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  }
  if (mapKeys.length) {
    const detail = 'must be map if x-kubernetes-list-map-keys is non-empty';
    if (listType === undefined || listType === null) errs.push(field.required(pathOf(path, 'x-kubernetes-list-type'), detail));
    else if (listType !== 'map') errs.push(field.invalid(pathOf(path, 'x-kubernetes-list-type'), listType, detail));
  }
  if (listType === 'map') {
    if (!mapKeys.length) errs.push(field.required(pathOf(path, 'x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
    if (!hasItems) errs.push(field.required(pathOf(path, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
    if (hasItems && !itemSchema) errs.push(field.invalid(pathOf(path, 'items'), goItems(items), 'must only have a single schema if x-kubernetes-list-type is map'));
    if (itemSchema && itemSchema.type !== 'object') {
      errs.push(field.invalid(pathOf(path, 'items', 'type'), itemSchema.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    }
    if (itemSchema && itemSchema.type === 'object') {
      const seen = new Set<string>();
      for (const k of mapKeys) {
        const prop = isObject(itemSchema.properties) ? itemSchema.properties[k] : undefined;
        if (isObject(prop)) {
          if (prop.type === 'array' || prop.type === 'object') {
            errs.push(field.invalid(`${pathOf(path, 'items', 'properties')}[${k}].type`, itemSchema.type, "must be a scalar type if parent array's x-kubernetes-list-type is map"));
          }
        } else {
          errs.push(field.invalid(pathOf(path, 'x-kubernetes-list-map-keys'), mapKeys, 'entries must all be names of item properties'));
        }
        if (seen.has(k)) errs.push(field.invalid(pathOf(path, 'x-kubernetes-list-map-keys'), mapKeys, 'must not contain duplicate entries'));
        seen.add(k);
      }
    }
  }
  if (opts.requireMapListKeysMapSetValidation) errs.push(...validateMapListKeysMapSet(schema, path));
  return errs;
}

/** validateMapListKeysMapSet: list items of set/map lists and map keys may not be nullable; keys need a default or must be required. */
export function validateMapListKeysMapSet(schema: JSONSchemaProps, path: string): FieldError[] {
  const items = schema.items;
  const listType = schema['x-kubernetes-list-type'];
  if (!isObject(items) || (listType !== 'set' && listType !== 'map')) return [];
  const itemSchema = items as JSONSchemaProps;
  const errs: FieldError[] = [];
  if (itemSchema.nullable === true) errs.push(field.forbidden(pathOf(path, 'items', 'nullable'), `cannot be nullable when x-kubernetes-list-type is ${listType}`));
  if (listType === 'map') {
    const required = new Set(Array.isArray(itemSchema.required) ? itemSchema.required : []);
    for (const k of schema['x-kubernetes-list-map-keys'] ?? []) {
      const prop = isObject(itemSchema.properties) ? itemSchema.properties[k] : undefined;
      if (!isObject(prop)) continue;
      const propPath = `${pathOf(path, 'items', 'properties')}[${k}]`;
      if (!required.has(k) && (prop.default === undefined || prop.default === null)) {
        errs.push(field.required(`${propPath}.default`, 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'));
      }
      if (prop.nullable === true) errs.push(field.forbidden(`${propPath}.nullable`, 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
    }
  }
  return errs;
}
