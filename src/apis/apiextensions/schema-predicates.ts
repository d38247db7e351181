/**
 * Whole-spec questions about CRD schemas that decide which checks apply
 * (validation.go's schemaHas family): are there defaults, Kubernetes extensions,
 * invalid types, non-atomic set items; does every version have a schema.
 */
import { isObject } from './json-util.js';
import type { CRDSpecV1beta1, JSONSchemaProps } from '../../api/apiextensions.js';
import { validateMapListKeysMapSet } from './validation-schema.js';

type Pred = (s: JSONSchemaProps) => boolean;

/**
 * Whether `pred` holds anywhere in the schema tree (upstream's schemaHas). Schemas nest as
 * deep as a request may before validation refuses them: an explicit stack, not recursion.
 */
export function schemaHas(root: unknown, pred: Pred): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const s = stack.pop();
    if (!isObject(s)) continue;
    const schema = s as JSONSchemaProps;
    if (pred(schema)) return true;
    // (Not push(...list): lists may be longer than a call takes arguments.)
    const push = (list: readonly unknown[] | undefined) => {
      for (const x of list ?? []) stack.push(x);
    };
    if (Array.isArray(schema.items)) push(schema.items);
    else stack.push(schema.items);
    push(schema.allOf);
    push(schema.anyOf);
    push(schema.oneOf);
    stack.push(schema.not, schema.additionalProperties, schema.additionalItems);
    for (const m of [schema.properties, schema.patternProperties, schema.definitions, schema.dependencies]) if (isObject(m)) push(Object.values(m));
  }
  return false;
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

const hasInvalidType = (x: JSONSchemaProps): boolean => typeof x.type === 'string' && x.type !== '' && !OPENAPI_V3_TYPES.includes(x.type);

export const schemaHasInvalidTypes = (s: JSONSchemaProps | undefined): boolean => schemaHas(s, hasInvalidType);

// (Upstream asks schemaHasInvalidTypes of every schema in the tree: the same as asking each schema's own type.)
export const specHasInvalidTypes = (spec: CRDSpecV1beta1): boolean => hasSchemaWith(spec, hasInvalidType);

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
