/**
 * CRD spec validation on the internal form (validateCustomResourceDefinitionSpec,
 * ...SpecUpdate, ...Version and validateCustomResourceConversion of 1.20):
 * group (B-01), scope (B-02), names (B-03), versions (B-04), schemas required
 * (B-05), per-version vs top-level fields, conversion (B-11), immutability.
 */
import { childPath, field, indexPath, type FieldError } from '../../machinery/field-errors.js';
import { goVersions } from './go-values.js';
import { deepEqual, isObject, str } from './json-util.js';
import { isDNS1035Label, isDNS1123Subdomain } from './names-validation.js';
import { specHasDefaults, specHasKubernetesExtensions } from './schema-predicates.js';
import type { CRDSpecV1beta1, CustomResourceConversionV1beta1, CustomResourceSubresources, InternalVersion, JSONSchemaProps } from '../../api/apiextensions.js';
import { deprecationWarningErrors, validateColumn, validateEnumStrings, validateNames, validateSubresources } from './validation-parts.js';
import { validateCustomResourceValidation, type SchemaOptions } from './validation-schema.js';
import { validateWebhookService, validateWebhookURL } from './webhook-validation.js';

const versionsOf = (spec: CRDSpecV1beta1): InternalVersion[] => (Array.isArray(spec.versions) ? spec.versions : []);
const hasStatus = (s: CustomResourceSubresources | undefined): boolean => isObject(s) && isObject(s.status);
const hasPerVersionSchema = (vs: InternalVersion[]): boolean => vs.some((v) => isObject(v.schema));
const hasPerVersionSubresources = (vs: InternalVersion[]): boolean => vs.some((v) => isObject(v.subresources));
const hasPerVersionColumns = (vs: InternalVersion[]): boolean => vs.some((v) => (v.additionalPrinterColumns?.length ?? 0) > 0);

function allIdentical(vs: InternalVersion[], get: (v: InternalVersion) => unknown, isSet: (x: unknown) => boolean): boolean {
  if (vs.length === 0) return false;
  const first = get(vs[0]);
  return vs.every((v) => isSet(get(v)) && deepEqual(get(v), first));
}

function subresourcesForVersion(spec: CRDSpecV1beta1, name: string | undefined): CustomResourceSubresources | undefined {
  const vs = versionsOf(spec);
  if (!hasPerVersionSubresources(vs)) return spec.subresources;
  return vs.find((v) => v.name === name)?.subresources;
}

function hasAnyStatusEnabled(spec: CRDSpecV1beta1): boolean {
  return hasStatus(spec.subresources) || versionsOf(spec).some((v) => hasStatus(v.subresources));
}

/** suppressExpressionCostForUnchangedSchema */
function forVersion(opts: SchemaOptions, version: unknown): SchemaOptions {
  return opts.versionsWithUnchangedSchemas?.has(str(version)) ? { ...opts, suppressPerExpressionCost: true } : opts;
}

function validateVersion(version: InternalVersion, path: string, statusEnabled: boolean, optsIn: SchemaOptions): FieldError[] {
  const opts = forVersion(optsIn, version.name);
  const errs: FieldError[] = [];
  const warning = typeof version.deprecationWarning === 'string' ? version.deprecationWarning : undefined;
  for (const e of deprecationWarningErrors(version.deprecated === true, warning)) {
    errs.push(field.invalid(childPath(path, 'deprecationWarning'), warning ?? null, e));
  }
  errs.push(...validateCustomResourceValidation(version.schema, statusEnabled, opts, childPath(path, 'schema')));
  errs.push(...validateSubresources(version.subresources, childPath(path, 'subresources')));
  (version.additionalPrinterColumns ?? []).forEach((c, i) => errs.push(...validateColumn(c, indexPath(childPath(path, 'additionalPrinterColumns'), i))));
  if ((version.selectableFields?.length ?? 0) > 0) {
    const schema = version.schema?.openAPIV3Schema;
    // (Upstream's message says "not included" where it means "included".)
    if (!isObject(schema)) errs.push(field.invalid(childPath(path, 'selectableFields'), '', 'may only be set when `version.schema.openAPIV3Schema` is not included'));
    else errs.push(...validateSelectableFields(version.selectableFields!, schema, childPath(path, 'selectableFields'), opts, str(version.name)));
  }
  return errs;
}

export const MAX_SELECTABLE_FIELDS = 8;

/** ValidateCustomResourceSelectableFields: simple paths (no array notation) to string, boolean or integer fields outside metadata, unique, at most 8. */
function validateSelectableFields(fields: Array<{ jsonPath?: string }>, schema: JSONSchemaProps, path: string, opts: SchemaOptions, version: string): FieldError[] {
  const errs: FieldError[] = [];
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const p = childPath(indexPath(path, i), 'jsonPath');
    const jsonPath = str(f?.jsonPath);
    if (!jsonPath) {
      errs.push(field.required(p, ''));
      return;
    }
    const target = opts.selectableField?.(schema, jsonPath);
    if (target === undefined) return;
    if (target instanceof Error) {
      errs.push(field.invalid(p, jsonPath, `is an invalid path: ${target.message}`));
      return;
    }
    if (target.path.split(/[.[]/)[0] === 'metadata') errs.push(field.invalid(p, jsonPath, 'must not point to fields in metadata'));
    if (!['string', 'boolean', 'integer'].includes(target.type)) {
      errs.push(field.invalid(p, jsonPath, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'));
    }
    if (unique.has(target.path)) errs.push(field.duplicate(p, jsonPath));
    else unique.add(target.path);
  });
  const allowed = opts.allowTooManySelectableFields?.has(version) && deepEqual(opts.allowTooManySelectableFields.get(version), fields);
  if (unique.size > MAX_SELECTABLE_FIELDS && !allowed) errs.push(field.tooMany(path, unique.size, MAX_SELECTABLE_FIELDS));
  return errs;
}

const ACCEPTED_REVIEW_VERSIONS = ['v1', 'v1beta1'];

export function hasValidConversionReviewVersionOrEmpty(versions: string[] | undefined): boolean {
  return !versions?.length || versions.some((v) => ACCEPTED_REVIEW_VERSIONS.includes(v));
}

function validateConversionReviewVersions(versions: string[] | undefined, requireRecognized: boolean, path: string): FieldError[] {
  if (!versions?.length) return [field.required(path)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let hasAccepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(field.invalid(indexPath(path, i), v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const e of isDNS1035Label(str(v))) errs.push(field.invalid(indexPath(path, i), v, e));
    if (ACCEPTED_REVIEW_VERSIONS.includes(v)) hasAccepted = true;
  });
  if (requireRecognized && !hasAccepted) errs.push(field.invalid(path, versions, `must include at least one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`));
  return errs;
}

function validateConversion(conversion: CustomResourceConversionV1beta1 | undefined, requireRecognized: boolean, path: string): FieldError[] {
  if (!isObject(conversion)) return [];
  const errs = validateEnumStrings(childPath(path, 'strategy'), str(conversion.strategy), ['None', 'Webhook'], true);
  const ccPath = childPath(path, 'webhookClientConfig');
  const cc = conversion.webhookClientConfig;
  if (conversion.strategy === 'Webhook') {
    if (!isObject(cc)) {
      errs.push(field.required(ccPath, 'required when strategy is set to Webhook'));
    } else if ((cc.url === undefined) === (cc.service === undefined)) {
      errs.push(field.required(ccPath, 'exactly one of url or service is required'));
    } else if (cc.url !== undefined) {
      errs.push(...validateWebhookURL(childPath(ccPath, 'url'), str(cc.url), true));
    } else if (isObject(cc.service)) {
      const s = cc.service;
      const port = typeof s.port === 'number' ? s.port : 0;
      errs.push(...validateWebhookService(childPath(ccPath, 'service'), str(s.namespace), str(s.name), typeof s.path === 'string' ? s.path : undefined, port));
    }
    errs.push(...validateConversionReviewVersions(conversion.conversionReviewVersions, requireRecognized, childPath(path, 'conversionReviewVersions')));
  } else {
    const detail = 'should not be set when strategy is not set to Webhook';
    if (isObject(cc)) errs.push(field.forbidden(ccPath, detail));
    if (conversion.conversionReviewVersions?.length) errs.push(field.forbidden(childPath(path, 'conversionReviewVersions'), detail));
  }
  return errs;
}

/** validateCustomResourceDefinitionSpec. `opts` is copied: the tightening below is local, as in Go. */
export function validateSpec(spec: CRDSpecV1beta1, optsIn: SchemaOptions, path: string): FieldError[] {
  const opts = { ...optsIn };
  const errs: FieldError[] = [];
  const p = (...parts: string[]): string => parts.reduce((acc, x) => childPath(acc, x), path);
  const group = str(spec.group);
  if (!group) errs.push(field.required(p('group')));
  else if (isDNS1123Subdomain(group).length) errs.push(field.invalid(p('group'), group, isDNS1123Subdomain(group).join(',')));
  else if (group.split('.').length < 2) errs.push(field.invalid(p('group'), group, 'should be a domain with at least one dot'));

  errs.push(...validateEnumStrings(p('scope'), str(spec.scope), ['Cluster', 'Namespaced'], true));

  const puf = spec.preserveUnknownFields;
  if (puf !== true) opts.requireStructuralSchema = true;
  const versions = versionsOf(spec);
  const hasTopLevelSchema = isObject(spec.validation?.openAPIV3Schema);
  if (opts.requireOpenAPISchema) {
    if (!hasTopLevelSchema) {
      versions.forEach((v, i) => {
        if (!isObject(v.schema?.openAPIV3Schema)) errs.push(field.required(`${indexPath(p('versions'), i)}.schema.openAPIV3Schema`, 'schemas are required'));
      });
    }
  } else if (puf !== true && !hasTopLevelSchema) {
    versions.forEach((v, i) => {
      if (v.served === true && !isObject(v.schema?.openAPIV3Schema)) {
        errs.push(field.required(`${indexPath(p('versions'), i)}.schema.openAPIV3Schema`, 'because otherwise all fields are pruned'));
      }
    });
  }
  if (opts.allowDefaults && specHasDefaults(spec)) {
    opts.requireStructuralSchema = true;
    if (puf !== false) errs.push(field.invalid(p('preserveUnknownFields'), true, 'must be false in order to use defaults in the schema'));
  }
  if (specHasKubernetesExtensions(spec)) opts.requireStructuralSchema = true;

  let storageCount = 0;
  const names = new Set<string>();
  let unique = true;
  versions.forEach((v, i) => {
    const name = str(v.name);
    if (v.storage === true) storageCount++;
    if (names.has(name)) unique = false;
    else names.add(name);
    const nameErrs = isDNS1035Label(name);
    if (nameErrs.length) errs.push(field.invalid(childPath(indexPath(p('versions'), i), 'name'), name, nameErrs.join(',')));
    errs.push(...validateVersion(v, indexPath(p('versions'), i), hasStatus(subresourcesForVersion(spec, v.name)), opts));
  });

  if (isObject(spec.validation) && hasPerVersionSchema(versions)) errs.push(field.forbidden(p('validation'), 'top-level and per-version schemas are mutually exclusive'));
  if (isObject(spec.subresources) && hasPerVersionSubresources(versions)) {
    errs.push(field.forbidden(p('subresources'), 'top-level and per-version subresources are mutually exclusive'));
  }
  if ((spec.additionalPrinterColumns?.length ?? 0) > 0 && hasPerVersionColumns(versions)) {
    errs.push(field.forbidden(p('additionalPrinterColumns'), 'top-level and per-version additionalPrinterColumns are mutually exclusive'));
  }

  const versionsValue = (): unknown => goVersions(spec.versions);
  if (allIdentical(versions, (v) => v.schema, isObject)) {
    errs.push(field.invalid(p('versions'), versionsValue(), 'per-version schemas may not all be set to identical values (top-level validation should be used instead)'));
  }
  if (allIdentical(versions, (v) => v.subresources, isObject)) {
    errs.push(field.invalid(p('versions'), versionsValue(), 'per-version subresources may not all be set to identical values (top-level subresources should be used instead)'));
  }
  if (allIdentical(versions, (v) => v.additionalPrinterColumns, (x) => Array.isArray(x) && x.length > 0)) {
    errs.push(
      field.invalid(p('versions'), versionsValue(), 'per-version additionalPrinterColumns may not all be set to identical values (top-level additionalPrinterColumns should be used instead)'),
    );
  }
  if (!unique) errs.push(field.invalid(p('versions'), versionsValue(), 'must contain unique version names'));
  if (storageCount !== 1) errs.push(field.invalid(p('versions'), versionsValue(), 'must have exactly one version marked as storage version'));

  const version = str(spec.version);
  if (version) {
    const e = isDNS1035Label(version);
    if (e.length) errs.push(field.invalid(p('version'), version, e.join(',')));
    if (versions.length >= 1 && versions[0].name !== version) errs.push(field.invalid(p('version'), version, 'must match the first version in spec.versions'));
  }

  for (const key of ['plural', 'singular', 'kind', 'listKind'] as const) {
    if (!str(spec.names?.[key])) errs.push(field.required(p('names', key)));
  }
  errs.push(...validateNames(spec.names, p('names')));
  errs.push(...validateCustomResourceValidation(spec.validation, hasAnyStatusEnabled(spec), forVersion(opts, spec.version), p('validation')));
  errs.push(...validateSubresources(spec.subresources, p('subresources')));
  (spec.additionalPrinterColumns ?? []).forEach((c, i) => errs.push(...validateColumn(c, indexPath(p('additionalPrinterColumns'), i))));
  if ((spec.selectableFields?.length ?? 0) > 0) {
    const schema = spec.validation?.openAPIV3Schema;
    if (!isObject(spec.validation)) errs.push(field.invalid(p('selectableFields'), '', 'may only be set when validations.schema is included'));
    else if (isObject(schema)) errs.push(...validateSelectableFields(spec.selectableFields!, schema, p('selectableFields'), opts, ''));
  }

  const strategy = spec.conversion?.strategy;
  if (isObject(spec.conversion) && strategy !== 'None' && puf !== false) {
    errs.push(field.invalid(p('conversion', 'strategy'), str(strategy), 'must be None if spec.preserveUnknownFields is true'));
  }
  errs.push(...validateConversion(spec.conversion, opts.requireRecognizedConversionReviewVersion, p('conversion')));
  return errs;
}

function immutable(newValue: unknown, oldValue: unknown, path: string): FieldError[] {
  return deepEqual(newValue ?? '', oldValue ?? '') ? [] : [field.invalid(path, newValue ?? '', 'field is immutable')];
}

/** validateCustomResourceDefinitionSpecUpdate. */
export function validateSpecUpdate(spec: CRDSpecV1beta1, oldSpec: CRDSpecV1beta1, opts: SchemaOptions, path: string): FieldError[] {
  const errs = validateSpec(spec, opts, path);
  if (opts.requireImmutableNames) {
    errs.push(...immutable(spec.scope, oldSpec.scope, childPath(path, 'scope')));
    errs.push(...immutable(spec.names?.kind, oldSpec.names?.kind, childPath(path, 'names.kind')));
  }
  errs.push(...immutable(spec.group, oldSpec.group, childPath(path, 'group')));
  errs.push(...immutable(spec.names?.plural, oldSpec.names?.plural, childPath(path, 'names.plural')));
  return errs;
}
