/**
 * The schema engine of custom resources: structural schemas, validation with
 * Kubernetes' messages, pruning, defaulting, list types, embedded resources and
 * CEL rules. Pure: no I/O. Compile once per CRD version, when the CRD changes:
 *
 *   const cs = compileSchema(version.schema?.openAPIV3Schema, {
 *     kind, apiVersion: `${group}/${version}`, namespaced, scale, preserveUnknownFields });
 *
 * Custom resource strategy (defaulting → prune → validate):
 * - create:  const { unknownFields, error } = cs.admit(obj)   // 400 if error; Warn/Strict texts: `unknown field "<path>"`
 *            errs = cs.validate(obj)                          // 422 Invalid with these causes
 *   (admit sees metadata as sent, so that unknown metadata fields are reported as `metadata.x`)
 * - update / patch (after applying the patch to the old object):
 *            cs.admit(obj); errs = cs.validateUpdate(obj, old) // ratcheting: unchanged invalid fields pass
 * - /status: cs.admit(obj); errs = cs.validateStatusUpdate(obj, old)
 * - read from storage (get, list, watch; not written back): cs.read(obj)
 * Duplicate keys for fieldValidation: findDuplicateFields(rawJsonText) → `duplicate field "x"`.
 *
 * CRD validation: pass validateStructuralSchema, isNonStructural and hasUnprunedDefaults
 * as CRDValidationOptions.validateStructuralSchema / isNonStructural / hasUnprunedDefaults.
 */
import { validateObjectMeta, validateObjectMetaUpdate } from '../machinery/object-meta.js';
import { Correlation } from './correlation.js';
import { RUNTIME_CEL_COST_BUDGET } from './cel/env.js';
import { compileRules, type CelNode } from './cel/rules.js';
import { validateRules } from './cel/validate.js';
import { applyDefaults, hasDefaults, pruneDefaults } from './defaulting.js';
import { childPath, fe, fieldErrorString, type FieldError } from './errors.js';
import { validateListSetsAndMaps } from './listtype.js';
import { coerceEmbedded, coerceMetadata, validateEmbeddedResources } from './objectmeta.js';
import { pruneObject } from './prune.js';
import { Budget, BudgetExceeded } from './regex/index.js';
import { validateScaleSpec, validateScaleStatus, type ScaleSpec } from './scale.js';
import { StructuralError, toStructural } from './structural.js';
import { validateStructural } from './structural-validation.js';
import type { JSONSchemaProps, Structural } from './types.js';
import { compileValidator, type Validator } from './validate/compile.js';
import { toFieldErrors, type VErr } from './validate/result.js';
import { append, isObject, type JsonObject } from './values.js';
import { schemaBoundsErrors } from './crd-hook.js';

export { validateStructuralSchema, isNonStructural, hasUnprunedDefaults } from './crd-hook.js';
export { findDuplicateFields } from './duplicates.js';
export { toStructural, StructuralError } from './structural.js';
export { validateStructural } from './structural-validation.js';
export { compileRegex, regexError } from './regex/index.js';
export type { Structural } from './types.js';
export type { ScaleSpec } from './scale.js';

export interface CompileSchemaOptions {
  /** Objects must have this kind and apiVersion (TypeMeta check); omit to skip the check. */
  kind?: string;
  apiVersion?: string;
  /** Namespaced resources require metadata.namespace. */
  namespaced?: boolean;
  /** spec.preserveUnknownFields of legacy CRDs: nothing is pruned. */
  preserveUnknownFields?: boolean;
  /** The /scale subresource paths, checked on writes. */
  scale?: ScaleSpec;
  /** Work units one validation may spend on the OpenAPI schema and patterns (default 20M). */
  validationBudget?: number;
}

export interface PruneResult {
  /** Pruned fields (when tracked): `metadata.x`, `spec.unknown1`, `spec.ports[0].y`, in upstream's order. */
  unknownFields: string[];
  /** A malformed metadata/apiVersion/kind (the request is a 400 BadRequest with this text). */
  error?: string;
}

export interface CompiledSchema {
  /** The structural schema; undefined for a legacy non-structural schema (then nothing is pruned or defaulted). */
  readonly structural: Structural | undefined;
  /** Whether defaulting can change anything (reads may skip defaulting otherwise). */
  readonly hasDefaults: boolean;
  validate(obj: unknown): FieldError[];
  validateUpdate(obj: unknown, old: unknown): FieldError[];
  validateStatusUpdate(obj: unknown, old: unknown): FieldError[];
  prune(obj: unknown, opts?: { trackUnknownFields?: boolean; dropInvalidMetadata?: boolean }): PruneResult;
  default(obj: unknown): void;
  /** Request decoding: prune (tracking unknown fields), default, prune what defaults added. */
  admit(obj: unknown): PruneResult;
  /** Reading from storage: prune (malformed metadata dropped) and default; whether that changed the object. */
  read(obj: unknown): boolean;
}

const BLOCKING = new Set(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);
const NOT_CHECKED = 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

/** For a schema too large or deep to evaluate (only reachable with data persisted before the limits). */
function refusing(): CompiledSchema {
  const refuse = (): FieldError[] => [fe.internal('', 'the schema of this resource is too large or too deeply nested to be evaluated')];
  const none = (): PruneResult => ({ unknownFields: [] });
  return { structural: undefined, hasDefaults: false, validate: refuse, validateUpdate: refuse, validateStatusUpdate: refuse, prune: none, default: () => {}, admit: none, read: () => false };
}

function structuralOf(schema: JSONSchemaProps | undefined): Structural | undefined {
  if (!isObject(schema)) return undefined;
  try {
    const s = toStructural(schema);
    if (validateStructural(s, '').length) return undefined;
    return s;
  } catch (e) {
    if (e instanceof StructuralError) return undefined;
    throw e;
  }
}

/** Compiles a version's openAPIV3Schema; never throws for a schema CRD validation accepted. */
export function compileSchema(openAPIV3Schema: JSONSchemaProps | undefined, opts: CompileSchemaOptions = {}): CompiledSchema {
  if (schemaBoundsErrors(openAPIV3Schema, 'x').length) return refusing();
  const structural = structuralOf(openAPIV3Schema);
  if (structural) pruneDefaults(structural);
  const validator: Validator | undefined = isObject(openAPIV3Schema) ? compileValidator(openAPIV3Schema) : undefined;
  const statusSchema = isObject(openAPIV3Schema) && isObject(openAPIV3Schema.properties) ? openAPIV3Schema.properties.status : undefined;
  let statusValidator: Validator | undefined;
  const cel: CelNode | undefined = structural ? compileRules(structural).root : undefined;
  const defaults = hasDefaults(structural);
  const budgetUnits = opts.validationBudget ?? 20_000_000;
  const pruning = structural !== undefined && !opts.preserveUnknownFields;

  function typeMeta(obj: unknown): FieldError[] {
    const errs: FieldError[] = [];
    const o = isObject(obj) ? obj : {};
    const kind = typeof o.kind === 'string' ? o.kind : '';
    const apiVersion = typeof o.apiVersion === 'string' ? o.apiVersion : '';
    if (opts.kind !== undefined && kind !== opts.kind) errs.push(fe.invalid('kind', kind, `must be ${opts.kind}`));
    if (opts.apiVersion !== undefined && apiVersion !== opts.apiVersion) errs.push(fe.invalid('apiVersion', apiVersion, `must be ${opts.apiVersion}`));
    return errs;
  }

  function runSchema(v: Validator | undefined, value: unknown, corr: Correlation | undefined, fldPath: string): FieldError[] {
    if (!v) return [];
    const errs: VErr[] = [];
    try {
      v(value, '', { errs, budget: new Budget(budgetUnits) }, corr);
    } catch (e) {
      if (!(e instanceof BudgetExceeded)) throw e;
      return [...toFieldErrors(errs, fldPath), fe.invalid(fldPath, '', 'validation failed due to running out of cost budget, no further validation rules will be run')];
    }
    return toFieldErrors(errs, fldPath);
  }

  function runCEL(errs: FieldError[], obj: unknown, old: unknown, corr: Correlation | undefined): void {
    if (!cel) return;
    if (errs.some((e) => BLOCKING.has(e.type))) {
      errs.push(fe.invalid('', null, NOT_CHECKED));
      return;
    }
    append(errs, validateRules(cel, obj, old, RUNTIME_CEL_COST_BUDGET, corr).errors);
  }

  const meta = (o: unknown): JsonObject => (isObject(o) && isObject(o.metadata) ? o.metadata : {});

  function prune(obj: unknown, o: { trackUnknownFields?: boolean; dropInvalidMetadata?: boolean } = {}): PruneResult {
    const track = o.trackUnknownFields ?? false;
    const drop = o.dropInvalidMetadata ?? false;
    const unknown: string[] = [];
    if (!isObject(obj)) return { unknownFields: unknown };
    const metaErr = coerceMetadata(obj, '', track ? unknown : undefined, drop, true);
    if (metaErr) return { unknownFields: unknown, error: metaErr };
    if (pruning) {
      append(unknown, pruneObject(obj, structural, true, track, true));
    }
    if (structural) {
      const embedded: string[] = [];
      const err = coerceEmbedded('', obj, structural, track ? embedded : undefined, drop);
      append(unknown, embedded.sort());
      if (err) return { unknownFields: unknown, error: fieldErrorString(err) };
    }
    return { unknownFields: unknown };
  }

  function applyDefaultsTo(obj: unknown): boolean {
    return defaults ? applyDefaults(obj, structural) : false;
  }

  return {
    structural,
    hasDefaults: defaults,
    validate(obj) {
      const tm = typeMeta(obj);
      if (tm.length) return tm;
      const errs = validateObjectMeta(meta(obj), { namespaced: opts.namespaced ?? false });
      append(errs, runSchema(validator, obj, undefined, ''));
      append(errs, validateScaleSpec(obj, opts.scale));
      append(errs, validateScaleStatus(obj, opts.scale));
      if (structural) {
        append(errs, validateEmbeddedResources('', obj, structural));
        append(errs, validateListSetsAndMaps('', structural, obj));
      }
      runCEL(errs, obj, undefined, undefined);
      return errs;
    },
    validateUpdate(obj, old) {
      const tm = typeMeta(obj);
      if (tm.length) return tm;
      const corr = new Correlation(obj, old, structural);
      const errs = validateObjectMetaUpdate(meta(obj), meta(old));
      append(errs, runSchema(validator, obj, corr, ''));
      append(errs, validateScaleSpec(obj, opts.scale));
      append(errs, validateScaleStatus(obj, opts.scale));
      if (structural) {
        append(errs, validateEmbeddedResources('', obj, structural));
        if (validateListSetsAndMaps('', structural, old).length === 0) append(errs, validateListSetsAndMaps('', structural, obj));
      }
      runCEL(errs, obj, old, corr);
      return errs;
    },
    validateStatusUpdate(obj, old) {
      const tm = typeMeta(obj);
      if (tm.length) return tm;
      const corr = new Correlation(obj, old, structural);
      const errs = validateObjectMetaUpdate(meta(obj), meta(old));
      if (isObject(obj) && Object.prototype.hasOwnProperty.call(obj, 'status') && isObject(statusSchema)) {
        statusValidator ??= compileValidator(statusSchema as JSONSchemaProps);
        append(errs, runSchema(statusValidator, obj.status, corr.key('status'), childPath('', 'status')));
      }
      append(errs, validateScaleStatus(obj, opts.scale));
      if (structural) {
        const newErrs = validateListSetsAndMaps('', structural, obj);
        if (newErrs.length && validateListSetsAndMaps('', structural, old).length === 0) append(errs, newErrs);
      }
      runCEL(errs, obj, old, corr);
      return errs;
    },
    prune,
    default: applyDefaultsTo,
    admit(obj) {
      const r = prune(obj, { trackUnknownFields: true });
      if (r.error) return r;
      applyDefaultsTo(obj);
      if (defaults && structural && isObject(obj)) coerceEmbedded('', obj, structural, undefined, true);
      return r;
    },
    read(obj) {
      const pruned = prune(obj, { dropInvalidMetadata: true, trackUnknownFields: true }).unknownFields.length > 0;
      return applyDefaultsTo(obj) || pruned;
    },
  };
}
