/**
 * The schema checks CRD validation delegates to this package (the hook
 * CRDValidationOptions.validateStructuralSchema of apis/apiextensions), run
 * wherever upstream requires a structural schema: NewStructural, ValidateStructural,
 * ValidateDefaults, the static checks of x-kubernetes-validations and the
 * compilation of their CEL rules; plus the predicates isNonStructural and
 * hasUnprunedDefaults used on updates of persisted CRDs.
 */
import type { StructuralSchemaContext } from '../api/apiextensions.js';
import { compileRules } from './cel/rules.js';
import { validFieldPath } from './cel/fieldpath.js';
import { validateDefaults } from './default-validation.js';
import { pruneDefaults } from './defaulting.js';
import { childPath, fe, indexPath, keyPath, type FieldError } from './errors.js';
import { MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, measureSchema, someSchemaNode, StructuralError, toStructural } from './structural.js';
import { validateStructural } from './structural-validation.js';
import type { JSONSchemaProps, Structural } from './types.js';
import { append } from './values.js';

const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const NEWLINES = /[\n\r]+/;

/** Refuses schemas too deep or too large to be walked safely. */
export function schemaBoundsErrors(schema: unknown, path: string): FieldError[] {
  const m = measureSchema(schema);
  if (m.depth > MAX_SCHEMA_DEPTH) return [fe.forbidden(path, `must not be nested more than ${MAX_SCHEMA_DEPTH} levels deep`)];
  if (m.nodes > MAX_SCHEMA_NODES) return [fe.forbidden(path, `must not have more than ${MAX_SCHEMA_NODES} schema nodes`)];
  return [];
}

/**
 * CRDValidationOptions.validateStructuralSchema: schema is a version's openAPIV3Schema,
 * path its field path (e.g. spec.validation.openAPIV3Schema).
 */
export function validateStructuralSchema(schema: JSONSchemaProps, path: string, ctx: StructuralSchemaContext): FieldError[] {
  const bounds = schemaBoundsErrors(schema, path);
  if (bounds.length) return bounds;
  let ss: Structural;
  try {
    ss = toStructural(schema);
  } catch (e) {
    if (!(e instanceof StructuralError)) throw e;
    return ctx.hasOtherErrors ? [] : [fe.invalid(path, '', e.message)];
  }
  const errs = validateStructural(ss, path);
  let celOK = errs.length === 0;
  if (celOK) {
    append(errs, validateDefaults(path, ss, ctx.requirePrunedDefaults));
    celOK = errs.length === 0;
  }
  const staticErrs = ruleChecks(ss, path);
  append(errs, staticErrs);
  if (celOK && staticErrs.length === 0 && !ctx.hasOtherErrors) {
    const opts = { estimateCost: ctx.skipCelCost !== true, suppressPerExpressionCost: ctx.suppressPerExpressionCost === true };
    for (const e of compileRules(ss, true, opts).errors) errs.push(e.error(e.relPath ? `${path}.${e.relPath}` : path));
  }
  return errs;
}

/** The static checks of x-kubernetes-validations entries (upstream's validateCustomResourceDefinitionOpenAPISchema part). */
function ruleChecks(s: Structural, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (s.xValidations ?? []).forEach((rule, i) => {
    const p = indexPath(childPath(path, 'x-kubernetes-validations'), i);
    const text = typeof rule.rule === 'string' ? rule.rule : '';
    const message = typeof rule.message === 'string' ? rule.message : '';
    const tRule = text.trim();
    const tMsg = message.trim();
    if (tRule === '') errs.push(fe.required(childPath(p, 'rule'), 'rule is not specified'));
    else if (message.length > 0 && tMsg === '') errs.push(fe.invalid(childPath(p, 'message'), message, 'must be non-empty if specified'));
    else if (NEWLINES.test(tMsg)) errs.push(fe.invalid(childPath(p, 'message'), message, 'must not contain line breaks'));
    else if (NEWLINES.test(tRule) && tMsg === '') errs.push(fe.required(childPath(p, 'message'), 'message must be specified if rule contains line breaks'));
    const mexpr = typeof rule.messageExpression === 'string' ? rule.messageExpression : '';
    if (mexpr.length > 0 && mexpr.trim() === '') errs.push(fe.required(childPath(p, 'messageExpression'), 'messageExpression must be non-empty if specified'));
    if (rule.reason !== undefined && rule.reason !== null && !REASONS.includes(rule.reason)) errs.push(fe.notSupported(childPath(p, 'reason'), rule.reason, REASONS));
    const fp = typeof rule.fieldPath === 'string' ? rule.fieldPath : '';
    if (fp.length > 0 && fp.trim() === '') errs.push(fe.invalid(childPath(p, 'fieldPath'), fp, 'must be non-empty if specified'));
    if (NEWLINES.test(fp)) errs.push(fe.invalid(childPath(p, 'fieldPath'), fp, 'must not contain line breaks'));
    if (fp.length > 0 && validFieldPath(fp, s) instanceof Error) errs.push(fe.invalid(childPath(p, 'fieldPath'), fp, 'must be a valid path'));
  });
  if (s.items) append(errs, ruleChecks(s.items, childPath(path, 'items')));
  for (const [k, v] of s.properties ?? []) append(errs, ruleChecks(v, keyPath(childPath(path, 'properties'), k)));
  if (s.additionalProperties?.schema) append(errs, ruleChecks(s.additionalProperties.schema, childPath(path, 'additionalProperties')));
  return errs;
}

/** schemaIsNonStructural: for CRDValidationOptions.isNonStructural. */
export function isNonStructural(schema: JSONSchemaProps): boolean {
  if (schemaBoundsErrors(schema, 'x').length) return true;
  try {
    return validateStructural(toStructural(schema), '').length > 0;
  } catch (e) {
    if (e instanceof StructuralError) return true;
    throw e;
  }
}

/** schemaHasUnprunedDefaults (errors count as "has"): for CRDValidationOptions.hasUnprunedDefaults. */
export function hasUnprunedDefaults(schema: JSONSchemaProps): boolean {
  if (!someSchemaNode(schema, (s) => s.default !== undefined && s.default !== null)) return false;
  if (isNonStructural(schema)) return true;
  return pruneDefaults(toStructural(schema));
}

/**
 * CRDValidationOptions.selectableField: where a selectable field's JSON path leads in a version's
 * schema (cel.ValidFieldPath without array notation): the normalized path and the field's type, or
 * upstream's error. Undefined when the schema itself is not structural (reported elsewhere).
 */
export function selectableFieldTarget(schema: JSONSchemaProps, jsonPath: string): { path: string; type: string } | Error | undefined {
  let ss: Structural;
  try {
    if (schemaBoundsErrors(schema, '').length) return undefined;
    ss = toStructural(schema);
  } catch (e) {
    if (!(e instanceof StructuralError)) throw e;
    return undefined;
  }
  const found = validFieldPath(jsonPath, ss, false);
  return found instanceof Error ? found : { path: found.path, type: found.schema.type ?? '' };
}
