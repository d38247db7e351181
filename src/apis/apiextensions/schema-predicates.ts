/**
 * Whole-spec questions about CRD schemas that decide which checks apply
 * (validation.go's schemaHas family): are there defaults, Kubernetes extensions,
 * invalid types, non-atomic set items; does every version have a schema.
 */
import { isObject } from './json-util.js';
import type { CRDSpecV1beta1, JSONSchemaProps } from './types.js';
import { validateMapListKeysMapSet } from './validation-schema.js';

type Pred = (s: JSONSchemaProps) => boolean;

/** Whether `pred` holds anywhere in the schema tree (upstream's schemaHas). */
export function schemaHas(s: unknown, pred: Pred): boolean {
  if (!isObject(s)) return false;
  const schema = s as JSONSchemaProps;
  if (pred(schema)) return true;
  const children: unknown[] = [];
  if (Array.isArray(schema.items)) children.push(...schema.items);
  else children.push(schema.items);
  children.push(...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? []), schema.not);
  children.push(...Object.values(schema.properties ?? {}), schema.additionalProperties, ...Object.values(schema.patternProperties ?? {}));
  children.push(schema.additionalItems, ...Object.values(schema.definitions ?? {}), ...Object.values(schema.dependencies ?? {}));
  return children.some((c) => schemaHas(c, pred));
}

export function hasSchemaWith(spec: CRDSpecV1beta1, pred: Pred): boolean {
  if (schemaHas(spec.validation?.openAPIV3Schema, pred)) return true;
  return (spec.versions ?? []).some((v) => schemaHas(v.schema?.openAPIV3Schema, pred));
}

const present = (v: unknown): boolean => v !== undefined && v !== null;

export const specHasDefaults = (spec: CRDSpecV1beta1): boolean => hasSchemaWith(spec, (s) => present(s.default));

export const specHasKubernetesExtensions = (spec: CRDSpecV1beta1): boolean =>
  hasSchemaWith(
    spec,
    (s) =>
      s['x-kubernetes-embedded-resource'] === true ||
      present(s['x-kubernetes-preserve-unknown-fields']) ||
      s['x-kubernetes-int-or-string'] === true ||
      (s['x-kubernetes-list-map-keys']?.length ?? 0) > 0 ||
      present(s['x-kubernetes-list-type']),
  );

const OPENAPI_V3_TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'];

export const schemaHasInvalidTypes = (s: JSONSchemaProps | undefined): boolean =>
  schemaHas(s, (x) => typeof x.type === 'string' && x.type !== '' && !OPENAPI_V3_TYPES.includes(x.type));

export const specHasInvalidTypes = (spec: CRDSpecV1beta1): boolean => hasSchemaWith(spec, (s) => schemaHasInvalidTypes(s));

/** A set list whose items are non-atomic lists or maps (allowed only on data persisted before the check existed). */
export const specHasNonAtomicSetType = (spec: CRDSpecV1beta1): boolean =>
  hasSchemaWith(spec, (s) => {
    if (s['x-kubernetes-list-type'] !== 'set' || !isObject(s.items)) return false;
    const is = s.items as JSONSchemaProps;
    if (is.type === 'array') return present(is['x-kubernetes-list-type']) && is['x-kubernetes-list-type'] !== 'atomic';
    if (is.type === 'object') return is['x-kubernetes-map-type'] !== 'atomic';
    return false;
  });

export const specHasInvalidMapListKeysMapSet = (spec: CRDSpecV1beta1): boolean =>
  hasSchemaWith(spec, (s) => validateMapListKeysMapSet(s, '').length > 0);

export function allVersionsSpecifyOpenAPISchema(spec: CRDSpecV1beta1): boolean {
  if (isObject(spec.validation?.openAPIV3Schema)) return true;
  return (spec.versions ?? []).every((v) => isObject(v.schema?.openAPIV3Schema));
}
