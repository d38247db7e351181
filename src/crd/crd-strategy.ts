/**
 * The strategy of the CustomResourceDefinition resource itself: v1 defaulting,
 * status initialization on create, storedVersions upkeep on update, the
 * validation of apiextensions-apiserver (rules depend on the request's version),
 * and on the first DELETE the cleanup finalizer and Terminating condition.
 */
import { toRfc3339 } from '../machinery/time.js';
import { prepareCRDForCreate, prepareCRDForUpdate, prepareCRDStatusForUpdate, defaultV1 } from '../apis/apiextensions/defaults.js';
import { validateCRD, validateCRDStatusUpdate, validateCRDUpdate } from '../apis/apiextensions/validation.js';
import { hasUnprunedDefaults, isNonStructural, selectableFieldTarget, validateStructuralSchema } from '../schema/crd-hook.js';
import { field, type FieldError } from '../machinery/field-errors.js';
import { validatePrinterColumnJSONPath } from '../machinery/jsonpath-columns.js';
import type { Strategy, WriteOptions } from '../registry/types.js';
import type { KObject } from '../api/object.js';
import { CLEANUP_FINALIZER, setCondition } from './naming.js';

/** The structural-schema checks of the schema engine, where CRD validation asks for them. */
const SCHEMA_HOOKS = { validateStructuralSchema, isNonStructural, hasUnprunedDefaults, selectableField: selectableFieldTarget };

const requestVersion = (ctx: WriteOptions) => (ctx.version === 'v1beta1' ? 'v1beta1' : 'v1');

/**
 * Printer column JSONPaths must parse. Identical columns on every version are
 * reported under spec.additionalPrinterColumns, as upstream's internal form does.
 */
function validateColumnPaths(crd: KObject): FieldError[] {
  const versions: KObject[] = crd.spec?.versions ?? [];
  const same = versions.length > 0 && versions.every((v) => JSON.stringify(v.additionalPrinterColumns) === JSON.stringify(versions[0].additionalPrinterColumns));
  const errs: FieldError[] = [];
  versions.forEach((v, i) => {
    if (same && i > 0) return;
    (v.additionalPrinterColumns ?? []).forEach((col: KObject, j: number) => {
      if (typeof col.jsonPath !== 'string' || !col.jsonPath.startsWith('.')) return; // the shape checks report these
      const why = validatePrinterColumnJSONPath(col.jsonPath);
      const base = same ? 'spec.additionalPrinterColumns' : `spec.versions[${i}].additionalPrinterColumns`;
      if (why) errs.push(field.invalid(`${base}[${j}].JSONPath`, col.jsonPath, why));
    });
  });
  return errs;
}

export const crdStrategy: Strategy = {
  generation: 'spec',
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
  // prepareForUpdate keeps the stored status (and records a new storage version in it).
  generationIgnores: ['status'],
  defaulting(obj) {
    Object.assign(obj, defaultV1(obj as never));
  },
  prepareForCreate(obj) {
    Object.assign(obj, prepareCRDForCreate(obj as never));
  },
  // validateCRD checks the name with the CRD's own rule (plural.group), instead of the generic one.
  validatesMetadata: 'names',
  validate(obj, ctx) {
    return [...validateCRD(obj as never, requestVersion(ctx), SCHEMA_HOOKS), ...validateColumnPaths(obj)];
  },
  // A /status write is shaped by prepareCRDStatusForUpdate alone (upstream's CRD status strategy: spec and
  // most metadata kept, finalizers changeable, as the CRD finalizer removes its own through /status).
  subresourceStrategies: { status: { prepareForUpdate: (obj) => obj } },
  prepareForUpdate(obj, old, ctx) {
    const next = ctx.subresource === 'status' ? prepareCRDStatusForUpdate(obj as never, old as never) : prepareCRDForUpdate(obj as never, old as never);
    Object.assign(obj, next);
  },
  validateUpdate(obj, old, ctx) {
    // /status: ValidateUpdateCustomResourceDefinitionStatus, which leaves spec and storedVersions alone.
    if (ctx.subresource === 'status') return validateCRDStatusUpdate(obj as never, old as never);
    return [...validateCRDUpdate(obj as never, old as never, requestVersion(ctx), SCHEMA_HOOKS), ...validateColumnPaths(obj)];
  },
  prepareForDelete(obj: KObject) {
    // As upstream's CRD REST Delete: the first DELETE marks the CRD itself (deletionTimestamp, finalizer,
    // condition), leaving generation and deletionGracePeriodSeconds as they are.
    obj.metadata.deletionTimestamp ??= toRfc3339(new Date());
    const finalizers: string[] = obj.metadata.finalizers ?? [];
    if (!finalizers.includes(CLEANUP_FINALIZER)) obj.metadata.finalizers = [...finalizers, CLEANUP_FINALIZER];
    obj.status ??= {};
    setCondition(obj as never, {
      type: 'Terminating',
      status: 'True',
      reason: 'InstanceDeletionPending',
      message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
    });
    return true;
  },
};
