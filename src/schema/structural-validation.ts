/**
 * ValidateStructural: the invariants that make a schema structural (types
 * everywhere outside junctors, nothing but value validations inside allOf/anyOf/
 * oneOf/not, int-or-string patterns, embedded resources, metadata limited to name
 * and generateName, no additionalProperties at the root) and completeness of the
 * root's junctors, with upstream's messages, sorted as upstream sorts them.
 */
import { fieldErrorString } from '../machinery/field-errors.js';
import { compareGoStrings } from '../machinery/go-text.js';
import { childPath, fe, indexPath, keyPath, type FieldError } from './errors.js';
import { regexError } from './regex/index.js';
import type { Generic, NestedValueValidation, Structural, ValueValidation } from './types.js';
import { append } from './values.js';

const enum Level {
  Root,
  Item,
  Field,
}

const propPath = (p: string, k: string): string => keyPath(childPath(p, 'properties'), k);

export function validateStructural(s: Structural, path: string): FieldError[] {
  const errs = [...invariants(s, Level.Root, path), ...completeness(s.valueValidation, s, path, path)];
  const texts = errs.map((e) => [fieldErrorString(e), e] as const);
  texts.sort((a, b) => compareGoStrings(a[0], b[0]));
  return texts.map((t) => t[1]);
}

function isIntOrStringBranch(v: NestedValueValidation, type: string): boolean {
  const g = v.forbiddenGenerics;
  const x = v.forbiddenExtensions;
  const vv = v.valueValidation;
  return (
    g.type === type &&
    !g.description &&
    !g.title &&
    !g.hasDefault &&
    !g.nullable &&
    !g.hasExternalDocs &&
    !g.hasExample &&
    !x.preserveUnknownFields &&
    !x.embeddedResource &&
    !x.intOrString &&
    x.listMapKeys === undefined &&
    x.listType === undefined &&
    x.mapType === undefined &&
    v.xValidations === undefined &&
    !v.items &&
    !v.properties &&
    !v.additionalProperties &&
    isZeroValueValidation(vv)
  );
}

const isIntOrStringAnyOf = (anyOf: NestedValueValidation[] | undefined): boolean =>
  anyOf?.length === 2 && isIntOrStringBranch(anyOf[0], 'integer') && isIntOrStringBranch(anyOf[1], 'string');

export function isZeroValueValidation(v: ValueValidation): boolean {
  return (
    !v.format &&
    v.maximum === undefined &&
    !v.exclusiveMaximum &&
    v.minimum === undefined &&
    !v.exclusiveMinimum &&
    v.maxLength === undefined &&
    v.minLength === undefined &&
    !v.pattern &&
    v.maxItems === undefined &&
    v.minItems === undefined &&
    !v.uniqueItems &&
    v.multipleOf === undefined &&
    v.enum === undefined &&
    v.maxProperties === undefined &&
    v.minProperties === undefined &&
    v.required === undefined &&
    v.allOf === undefined &&
    v.oneOf === undefined &&
    v.anyOf === undefined &&
    v.not === undefined
  );
}

function invariants(s: Structural | undefined, lvl: Level, path: string): FieldError[] {
  if (!s) return [];
  const errs: FieldError[] = [];
  if (s.type === 'array' && !s.items) errs.push(fe.required(childPath(path, 'items'), 'must be specified'));
  append(errs, invariants(s.items, Level.Item, childPath(path, 'items')));
  for (const [k, v] of s.properties ?? []) append(errs, invariants(v, Level.Field, propPath(path, k)));
  if (s.additionalProperties) {
    if (lvl === Level.Root) errs.push(fe.forbidden(childPath(path, 'additionalProperties'), 'must not be used at the root'));
    if (s.additionalProperties.schema) append(errs, invariants(s.additionalProperties.schema, Level.Field, childPath(path, 'additionalProperties')));
  }
  if (s.intOrString && s.preserveUnknownFields) {
    errs.push(fe.invalid(childPath(path, 'x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  }
  if (s.intOrString && s.embeddedResource) {
    errs.push(fe.invalid(childPath(path, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));
  }
  const vv = s.valueValidation;
  append(errs, valueValidation(vv, isIntOrStringAnyOf(vv.anyOf), isIntOrStringAnyOf(vv.allOf?.[0]?.valueValidation.anyOf), lvl, path));

  const checkMetadata = lvl === Level.Root || s.embeddedResource;
  if (s.embeddedResource && s.type !== 'object') {
    const detail = 'must be object if x-kubernetes-embedded-resource is true';
    errs.push(s.type ? fe.invalid(childPath(path, 'type'), s.type, detail) : fe.required(childPath(path, 'type'), detail));
  } else if (!s.type && !s.intOrString && !s.preserveUnknownFields) {
    const detail = lvl === Level.Root ? 'must not be empty at the root' : lvl === Level.Item ? 'must not be empty for specified array items' : 'must not be empty for specified object fields';
    errs.push(fe.required(childPath(path, 'type'), detail));
  }
  if (s.embeddedResource && s.additionalProperties) {
    errs.push(fe.forbidden(childPath(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  }
  if (lvl === Level.Root && s.type && s.type !== 'object') errs.push(fe.invalid(childPath(path, 'type'), s.type, 'must be object at the root'));
  for (const k of ['kind', 'apiVersion']) {
    const p = s.properties?.get(k);
    if (p && checkMetadata && p.type !== 'string') errs.push(fe.invalid(childPath(propPath(path, k), 'type'), p.type, 'must be string'));
  }
  const meta = s.properties?.get('metadata');
  if (meta) append(errs, metadataInvariants(meta, checkMetadata, lvl, propPath(path, 'metadata')));
  if (s.embeddedResource && !s.preserveUnknownFields && !s.properties?.size) {
    errs.push(fe.required(childPath(path, 'properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
  return errs;
}

function metadataInvariants(s: Structural, checkMetadata: boolean, lvl: Level, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (checkMetadata && s.type !== 'object') errs.push(fe.invalid(childPath(path, 'type'), s.type, 'must be object'));
  if (lvl === Level.Root) {
    const props = s.properties;
    const onlyNames = !props || [...props.keys()].every((k) => k === 'name' || k === 'generateName');
    const g: Generic = s;
    const clean =
      onlyNames &&
      !s.items &&
      !s.additionalProperties &&
      !g.description &&
      !g.title &&
      !g.nullable &&
      !g.hasExternalDocs &&
      !g.hasExample &&
      !s.preserveUnknownFields &&
      !s.embeddedResource &&
      !s.intOrString &&
      s.listMapKeys === undefined &&
      s.listType === undefined &&
      s.mapType === undefined &&
      s.xValidations === undefined &&
      isZeroValueValidation(s.valueValidation);
    if (!clean) errs.push(fe.forbidden(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
  }
  return errs;
}

function valueValidation(v: ValueValidation | undefined, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, lvl: Level, path: string): FieldError[] {
  if (!v) return [];
  const errs: FieldError[] = [];
  if (!skipAnyOf) v.anyOf?.forEach((x, i) => append(errs, nested(x, false, false, lvl, indexPath(childPath(path, 'anyOf'), i))));
  v.allOf?.forEach((x, i) => append(errs, nested(x, skipFirstAllOfAnyOf && i === 0, false, lvl, indexPath(childPath(path, 'allOf'), i))));
  v.oneOf?.forEach((x, i) => append(errs, nested(x, false, false, lvl, indexPath(childPath(path, 'oneOf'), i))));
  append(errs, nested(v.not, false, false, lvl, childPath(path, 'not')));
  if (v.pattern) {
    const err = regexError(v.pattern);
    if (err) errs.push(fe.invalid(childPath(path, 'pattern'), v.pattern, `must be a valid regular expression, but isn't: ${err}`));
  }
  return errs;
}

function nested(v: NestedValueValidation | undefined, skipAnyOf: boolean, skipAllOfAnyOf: boolean, lvl: Level, path: string): FieldError[] {
  if (!v) return [];
  const errs = valueValidation(v.valueValidation, skipAnyOf, skipAllOfAnyOf, lvl, path);
  append(errs, nested(v.items, false, false, lvl, childPath(path, 'items')));
  for (const [k, f] of v.properties ?? []) append(errs, nested(f, false, false, Level.Field, propPath(path, k)));
  const g = v.forbiddenGenerics;
  const x = v.forbiddenExtensions;
  if (g.type) errs.push(fe.forbidden(childPath(path, 'type'), 'must be empty to be structural'));
  if (v.additionalProperties) errs.push(fe.forbidden(childPath(path, 'additionalProperties'), 'must be undefined to be structural'));
  if (g.hasDefault) errs.push(fe.forbidden(childPath(path, 'default'), 'must be undefined to be structural'));
  if (g.title) errs.push(fe.forbidden(childPath(path, 'title'), 'must be empty to be structural'));
  if (g.description) errs.push(fe.forbidden(childPath(path, 'description'), 'must be empty to be structural'));
  if (g.nullable) errs.push(fe.forbidden(childPath(path, 'nullable'), 'must be false to be structural'));
  if (x.preserveUnknownFields) errs.push(fe.forbidden(childPath(path, 'x-kubernetes-preserve-unknown-fields'), 'must be false to be structural'));
  if (x.embeddedResource) errs.push(fe.forbidden(childPath(path, 'x-kubernetes-embedded-resource'), 'must be false to be structural'));
  if (x.intOrString) errs.push(fe.forbidden(childPath(path, 'x-kubernetes-int-or-string'), 'must be false to be structural'));
  if (x.listMapKeys?.length) errs.push(fe.forbidden(childPath(path, 'x-kubernetes-list-map-keys'), 'must be empty to be structural'));
  if (x.listType !== undefined) errs.push(fe.forbidden(childPath(path, 'x-kubernetes-list-type'), 'must be undefined to be structural'));
  if (x.mapType !== undefined) errs.push(fe.forbidden(childPath(path, 'x-kubernetes-map-type'), 'must be undefined to be structural'));
  if (v.xValidations?.length) errs.push(fe.forbidden(childPath(path, 'x-kubernetes-validations'), 'must be empty to be structural'));
  if (v.properties?.has('metadata')) errs.push(fe.forbidden(propPath(path, 'metadata'), 'must not be specified in a nested context'));
  return errs;
}

// ---- completeness: only the root's junctors are checked, as upstream does ----

function completeness(v: ValueValidation | undefined, s: Structural | undefined, sPath: string, vPath: string): FieldError[] {
  if (!v) return [];
  if (!s) return [fe.required(sPath, `because it is defined in ${vPath}`)];
  const errs: FieldError[] = [];
  append(errs, nestedCompleteness(v.not, s, sPath, childPath(vPath, 'not')));
  v.allOf?.forEach((x, i) => append(errs, nestedCompleteness(x, s, sPath, indexPath(childPath(vPath, 'allOf'), i))));
  v.anyOf?.forEach((x, i) => append(errs, nestedCompleteness(x, s, sPath, indexPath(childPath(vPath, 'anyOf'), i))));
  v.oneOf?.forEach((x, i) => append(errs, nestedCompleteness(x, s, sPath, indexPath(childPath(vPath, 'oneOf'), i))));
  return errs;
}

function nestedCompleteness(v: NestedValueValidation | undefined, s: Structural | undefined, sPath: string, vPath: string): FieldError[] {
  if (!v) return [];
  if (!s) return [fe.required(sPath, `because it is defined in ${vPath}`)];
  const errs = completeness(v.valueValidation, s, sPath, vPath);
  append(errs, nestedCompleteness(v.items, s.items, childPath(sPath, 'items'), childPath(vPath, 'items')));
  for (const [k, f] of v.properties ?? []) {
    const sf = s.properties?.get(k);
    if (!sf) errs.push(fe.required(propPath(sPath, k), `because it is defined in ${propPath(vPath, k)}`));
    else append(errs, nestedCompleteness(f, sf, propPath(sPath, k), propPath(vPath, k)));
  }
  return errs;
}
