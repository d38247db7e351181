/**
 * CustomResourceDefinition validation as apiextensions-apiserver 1.20 runs it on
 * create, update and status update (validation/validation.go): the object is
 * converted to the internal form first, so identical per-version values are
 * reported under spec.validation / spec.subresources / spec.additionalPrinterColumns.
 *
 * Pass objects as the request wrote them (v1 or v1beta1, told apart by apiVersion),
 * after the request version's defaults and prepareCRDForCreate/Update have run.
 */
import { field, indexPath, type FieldError } from '../../machinery/field-errors.js';
import { apiApprovalState, isProtectedCommunityGroup } from './api-approval.js';
import { toInternal } from './internal.js';
import { deepEqual, isObject, str } from './json-util.js';
import { nameIsDNSSubdomain } from './names-validation.js';
import { allVersionsSpecifyOpenAPISchema, hasSchemaWith, specHasDefaults, specHasInvalidMapListKeysMapSet, specHasInvalidTypes, specHasNonAtomicSetType } from './schema-predicates.js';
import {
  API_APPROVAL_ANNOTATION,
  type AnyCRD,
  type CRDStatus,
  type InternalCRD,
  type InternalVersion,
  type JSONSchemaProps,
  type ObjectMeta,
  type RequestVersion,
} from '../../api/apiextensions.js';
import { validateNames } from './validation-parts.js';
import { DESCRIPTORS, canonicalize } from './wire-codec.js';
import type { SchemaOptions, SelectableFieldResolver, StructuralSchemaValidator } from './validation-schema.js';
import { hasValidConversionReviewVersionOrEmpty, MAX_SELECTABLE_FIELDS, validateSpec, validateSpecUpdate } from './validation-spec.js';

export type { StructuralSchemaValidator } from './validation-schema.js';

/** Hooks for checks that live in other packages. All optional. */
export interface CRDValidationOptions {
  /**
   * Structural-schema checks (NewStructural, ValidateStructural, ValidateDefaults: B-07's
   * structural part, B-12, C-01), run wherever upstream requires a structural schema.
   */
  validateStructuralSchema?: StructuralSchemaValidator;
  /** Whether a persisted schema is non-structural; lets updates keep such old data (default: false). */
  isNonStructural?: (schema: JSONSchemaProps) => boolean;
  /** Whether a persisted schema has defaults that pruning would change (default: false). */
  hasUnprunedDefaults?: (schema: JSONSchemaProps) => boolean;
  /** Where a selectable field's JSON path leads in a schema: normalized path and type, upstream's error, or undefined (no structural schema). */
  selectableField?: SelectableFieldResolver;
  /** Generic ObjectMeta checks besides name/generateName/namespace: generation, labels, annotations, ownerReferences, finalizers, managedFields. */
  validateObjectMeta?: (meta: ObjectMeta, path: string) => FieldError[];
  /** Generic ObjectMeta update checks (resourceVersion, immutable name/uid/creationTimestamp, labels, ...). */
  validateObjectMetaUpdate?: (newMeta: ObjectMeta, oldMeta: ObjectMeta, path: string) => FieldError[];
}

const V1BETA1_DEFAULTS_REASON = '(cannot set default values in apiextensions.k8s.io/v1beta1 CRDs, must use apiextensions.k8s.io/v1)';

function createOptions(requestVersion: RequestVersion, hooks: CRDValidationOptions): SchemaOptions {
  const v1beta1 = requestVersion === 'v1beta1';
  return {
    allowDefaults: !v1beta1,
    disallowDefaultsReason: v1beta1 ? V1BETA1_DEFAULTS_REASON : '',
    requireRecognizedConversionReviewVersion: true,
    requireImmutableNames: false,
    requireOpenAPISchema: !v1beta1,
    requireValidPropertyType: !v1beta1,
    requireStructuralSchema: !v1beta1,
    requirePrunedDefaults: true,
    requireAtomicSetType: true,
    requireMapListKeysMapSetValidation: true,
    validateStructural: hooks.validateStructuralSchema,
    selectableField: hooks.selectableField,
  };
}

/** GetSchemaForVersion: the top-level schema, or the version's; undefined when malformed or not found. */
function schemaForVersion(spec: InternalCRD['spec'], version: string): { schema: unknown } | undefined {
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (!versions.some((v) => isObject(v.schema))) return { schema: spec.validation };
  if (isObject(spec.validation)) return undefined;
  const v = versions.find((x) => x.name === version);
  return v ? { schema: v.schema } : undefined;
}

/**
 * findVersionsWithUnchangedSchemas: versions whose schema an update leaves as it was; their CEL
 * expressions were accepted before and are not held to a per-expression cost limit again.
 */
function versionsWithUnchangedSchemas(crd: InternalCRD, old: InternalCRD): Set<string> {
  const unchanged = new Set<string>();
  for (const v of Array.isArray(crd.spec.versions) ? crd.spec.versions : []) {
    const name = str(v.name);
    const now = schemaForVersion(crd.spec, name);
    const before = schemaForVersion(old.spec, name);
    if (now && before && deepEqual(now.schema, before.schema)) unchanged.add(name);
  }
  return unchanged;
}

/** Checks are never tightened on data that is already persisted. */
function updateOptions(requestVersion: RequestVersion, crd: InternalCRD, old: InternalCRD, hooks: CRDValidationOptions): SchemaOptions {
  const v1beta1 = requestVersion === 'v1beta1';
  const oldSpec = old.spec;
  const oldDefaults = specHasDefaults(oldSpec);
  const allowDefaults = oldDefaults || !v1beta1;
  const schemaWith = (pred?: (s: JSONSchemaProps) => boolean): boolean => (pred ? hasSchemaWith(oldSpec, pred) : false);
  return {
    allowDefaults,
    disallowDefaultsReason: allowDefaults ? '' : V1BETA1_DEFAULTS_REASON,
    requireRecognizedConversionReviewVersion: !isObject(oldSpec.conversion) || hasValidConversionReviewVersionOrEmpty(oldSpec.conversion.conversionReviewVersions),
    requireImmutableNames: isConditionTrue(old.status, 'Established'),
    requireOpenAPISchema: !v1beta1 && allVersionsSpecifyOpenAPISchema(oldSpec),
    requireValidPropertyType: !v1beta1 && !specHasInvalidTypes(oldSpec),
    requireStructuralSchema: !v1beta1 && !schemaWith(hooks.isNonStructural),
    requirePrunedDefaults: !schemaWith(hooks.hasUnprunedDefaults),
    requireAtomicSetType: !specHasNonAtomicSetType(oldSpec),
    requireMapListKeysMapSetValidation: !specHasInvalidMapListKeysMapSet(oldSpec),
    validateStructural: hooks.validateStructuralSchema,
    selectableField: hooks.selectableField,
    allowTooManySelectableFields: tooManySelectableFieldsAllowed(oldSpec),
    versionsWithUnchangedSchemas: versionsWithUnchangedSchemas(crd, old),
  };
}

/**
 * findTooManySelectableFieldsAllowed: a set of selectable fields already over the limit may stay
 * (unchanged) on update; '' names the top-level set. The new set is compared where it is checked.
 */
function tooManySelectableFieldsAllowed(oldSpec: InternalCRD['spec']): Map<string, unknown> {
  const allowed = new Map<string, unknown>();
  if ((oldSpec.selectableFields?.length ?? 0) > MAX_SELECTABLE_FIELDS) allowed.set('', oldSpec.selectableFields);
  for (const v of oldSpec.versions ?? []) {
    if ((v.selectableFields?.length ?? 0) > MAX_SELECTABLE_FIELDS) allowed.set(str(v.name), v.selectableFields);
  }
  return allowed;
}

function isConditionTrue(status: CRDStatus | undefined, type: string): boolean {
  return (status?.conditions ?? []).some((c) => c?.type === type && c.status === 'True');
}

/** ValidateObjectMeta's name part, with the CRD's name function. */
function validateMetadata(crd: InternalCRD, hooks: CRDValidationOptions): FieldError[] {
  const meta: ObjectMeta = isObject(crd.metadata) ? crd.metadata : {};
  const required = `${str(crd.spec.names?.plural)}.${str(crd.spec.group)}`;
  const nameFn = (name: string, prefix: boolean): string[] => {
    const errs = nameIsDNSSubdomain(name, prefix);
    if (name !== required) errs.push('must be spec.names.plural+"."+spec.group');
    return errs;
  };
  const errs: FieldError[] = [];
  const generateName = str(meta.generateName);
  if (generateName) for (const msg of nameFn(generateName, true)) errs.push(field.invalid('metadata.generateName', generateName, msg));
  const name = str(meta.name);
  if (!name) errs.push(field.required('metadata.name', 'name or generateName is required'));
  else for (const msg of nameFn(name, false)) errs.push(field.invalid('metadata.name', name, msg));
  if (str(meta.namespace)) errs.push(field.forbidden('metadata.namespace', 'not allowed on this type'));
  if (hooks.validateObjectMeta) errs.push(...hooks.validateObjectMeta(meta, 'metadata'));
  return errs;
}

/** ValidateCustomResourceDefinitionStatus: accepted names must be valid names. */
function validateStatus(status: CRDStatus | undefined): FieldError[] {
  return validateNames(status?.acceptedNames, 'status.acceptedNames');
}

/**
 * ValidateCustomResourceDefinitionStoredVersions. Upstream reports stale
 * entries in map order; we report them in list order.
 */
export function validateStoredVersions(storedVersions: string[] | null | undefined, versions: InternalVersion[] | undefined, path = 'status.storedVersions'): FieldError[] {
  if (!storedVersions?.length) return [field.invalid(path, storedVersions ?? null, 'must have at least one stored version')];
  const errs: FieldError[] = [];
  const remaining = new Map<string, number>();
  storedVersions.forEach((v, i) => remaining.set(v, i));
  for (const v of versions ?? []) {
    const name = str(v.name);
    const stored = remaining.has(name);
    if (v.storage === true && !stored) errs.push(field.invalid(path, storedVersions, `must have the storage version ${name}`));
    if (stored) remaining.delete(name);
  }
  for (const [v, i] of [...remaining].sort((a, b) => a[1] - b[1])) errs.push(field.invalid(indexPath(path, i), v, 'must appear in spec.versions'));
  return errs;
}

const APPROVAL_PATH = `metadata.annotations[${API_APPROVAL_ANNOTATION}]`;

function approvalAnnotation(crd: AnyCRD): string {
  const annotations = crd.metadata?.annotations;
  return isObject(annotations) ? str(annotations[API_APPROVAL_ANNOTATION]) : '';
}

/** validateAPIApproval: v1 requests on protected groups need a valid approval annotation. */
export function validateAPIApproval(crd: InternalCRD, old: InternalCRD | undefined, requestVersion: RequestVersion): FieldError[] {
  if (requestVersion === 'v1beta1' || !isProtectedCommunityGroup(str(crd.spec.group))) return [];
  const value = approvalAnnotation(crd);
  const next = apiApprovalState(value);
  if (old && apiApprovalState(approvalAnnotation(old)).state === next.state) return [];
  switch (next.state) {
    case 'Missing':
      return [field.required(APPROVAL_PATH, next.reason)];
    case 'Invalid':
      return [field.invalid(APPROVAL_PATH, value, next.reason)];
    default:
      return [];
  }
}

/** validatePreserveUnknownFields (B-06): v1 may not turn pruning off, but pre-existing `true` may stay. */
export function validatePreserveUnknownFields(crd: InternalCRD, old: InternalCRD | undefined, requestVersion: RequestVersion): FieldError[] {
  if (requestVersion === 'v1beta1' || old?.spec.preserveUnknownFields === true) return [];
  if (crd.spec.preserveUnknownFields === true) {
    return [field.invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead')];
  }
  return [];
}

/** ValidateCustomResourceDefinition (create). */
export function validateCRD(crd: AnyCRD, requestVersion: RequestVersion, hooks: CRDValidationOptions = {}): FieldError[] {
  const internal = toInternal(crd, requestVersion);
  return [
    ...validateMetadata(internal, hooks),
    ...validateSpec(internal.spec, createOptions(requestVersion, hooks), 'spec'),
    ...validateStatus(internal.status),
    ...validateStoredVersions(internal.status?.storedVersions, internal.spec.versions),
    ...validateAPIApproval(internal, undefined, requestVersion),
    ...validatePreserveUnknownFields(internal, undefined, requestVersion),
  ];
}

/** ValidateCustomResourceDefinitionUpdate. `oldCrd` is the stored object. */
export function validateCRDUpdate(newCrd: AnyCRD, oldCrd: AnyCRD, requestVersion: RequestVersion, hooks: CRDValidationOptions = {}): FieldError[] {
  const internal = toInternal(newCrd, requestVersion);
  const old = toInternal(oldCrd, 'v1');
  const meta = hooks.validateObjectMetaUpdate ? hooks.validateObjectMetaUpdate(internal.metadata ?? {}, old.metadata ?? {}, 'metadata') : [];
  return [
    ...meta,
    ...validateSpecUpdate(internal.spec, old.spec, updateOptions(requestVersion, internal, old, hooks), 'spec'),
    ...validateStatus(internal.status),
    ...validateStoredVersions(internal.status?.storedVersions, internal.spec.versions),
    ...validateAPIApproval(internal, old, requestVersion),
    ...validatePreserveUnknownFields(internal, old, requestVersion),
  ];
}

/**
 * ValidateUpdateCustomResourceDefinitionStatus (the /status subresource): metadata
 * and accepted names only; upstream does not check storedVersions here.
 */
export function validateCRDStatusUpdate(newCrd: AnyCRD, oldCrd: AnyCRD, hooks: CRDValidationOptions = {}): FieldError[] {
  const meta = hooks.validateObjectMetaUpdate ? hooks.validateObjectMetaUpdate(newCrd.metadata ?? {}, oldCrd.metadata ?? {}, 'metadata') : [];
  return [...meta, ...validateStatus(toInternal(newCrd).status)];
}

/** Kept for callers that only want the status part. */
export function validateCRDStatus(status: CRDStatus | undefined): FieldError[] {
  return validateStatus(canonicalize<CRDStatus>(status, DESCRIPTORS.status));
}
