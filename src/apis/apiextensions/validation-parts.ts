/**
 * Leaf validators of apiextensions validation.go (1.20 texts): names, printer
 * columns, subresources (scale paths), deprecation warnings, enum strings.
 */
import { childPath, field, indexPath, type FieldError } from '../../machinery/field-errors.js';
import { byteLength, isDNS1035Label } from './names-validation.js';
import type { CustomResourceDefinitionNames, CustomResourceSubresources, InternalColumn } from '../../api/apiextensions.js';
import { str } from './json-util.js';

export function validateEnumStrings(path: string, value: string, accepted: string[], required: boolean): FieldError[] {
  if (value === '') return required ? [field.required(path)] : [];
  return accepted.includes(value) ? [] : [field.notSupported(path, value, accepted)];
}

/** ValidateCustomResourceDefinitionNames: used for spec.names and status.acceptedNames. */
export function validateNames(names: CustomResourceDefinitionNames | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const plural = str(names?.plural);
  const singular = str(names?.singular);
  const kind = str(names?.kind);
  const listKind = str(names?.listKind);
  const label = (p: string, v: string): void => {
    const e = isDNS1035Label(v);
    if (e.length) errs.push(field.invalid(p, v, e.join(',')));
  };
  const mixedCase = (p: string, v: string): void => {
    const e = isDNS1035Label(v.toLowerCase());
    if (e.length) errs.push(field.invalid(p, v, 'may have mixed case, but should otherwise match: ' + e.join(',')));
  };
  if (plural) label(childPath(path, 'plural'), plural);
  if (singular) label(childPath(path, 'singular'), singular);
  if (kind) mixedCase(childPath(path, 'kind'), kind);
  if (listKind) mixedCase(childPath(path, 'listKind'), listKind);
  (names?.shortNames ?? []).forEach((s, i) => label(indexPath(childPath(path, 'shortNames'), i), str(s)));
  if (kind && kind === listKind) errs.push(field.invalid(childPath(path, 'listKind'), listKind, 'kind and listKind may not be the same'));
  (names?.categories ?? []).forEach((c, i) => label(indexPath(childPath(path, 'categories'), i), str(c)));
  return errs;
}

const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

/** ValidateCustomResourceColumnDefinition; the path field is spelled `JSONPath` (internal name). */
export function validateColumn(col: InternalColumn, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = str(col.type);
  const format = str(col.format);
  const jsonPath = str(col.JSONPath);
  if (!str(col.name)) errs.push(field.required(childPath(path, 'name')));
  const typeDetail = `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`;
  if (!type) errs.push(field.required(childPath(path, 'type'), typeDetail));
  else if (!PRINTER_COLUMN_TYPES.includes(type)) errs.push(field.invalid(childPath(path, 'type'), type, typeDetail));
  if (format && !PRINTER_COLUMN_FORMATS.includes(format)) {
    errs.push(field.invalid(childPath(path, 'format'), format, `must be one of ${PRINTER_COLUMN_FORMATS.join(',')}`));
  }
  if (!jsonPath) errs.push(field.required(childPath(path, 'JSONPath')));
  else errs.push(...validateSimpleJSONPath(jsonPath, childPath(path, 'JSONPath')));
  return errs;
}

export function validateSimpleJSONPath(s: string, path: string): FieldError[] {
  if (s.length === 0) return [field.invalid(path, s, 'must not be empty')];
  if (s[0] !== '.') return [field.invalid(path, s, 'must be a simple json path starting with .')];
  return [];
}

/** ValidateCustomResourceDefinitionSubresources: scale paths (B-09). */
export function validateSubresources(sub: CustomResourceSubresources | undefined, path: string): FieldError[] {
  const scale = sub?.scale;
  if (!scale) return [];
  const errs: FieldError[] = [];
  const check = (key: string, value: string, prefixes: string[], detail: string): void => {
    const p = childPath(path, `scale.${key}`);
    const e = validateSimpleJSONPath(value, p);
    if (e.length) errs.push(...e);
    else if (!prefixes.some((x) => value.startsWith(x))) errs.push(field.invalid(p, value, detail));
  };
  const spec = str(scale.specReplicasPath);
  if (!spec) errs.push(field.required(childPath(path, 'scale.specReplicasPath')));
  else check('specReplicasPath', spec, ['.spec.'], 'should be a json path under .spec');
  const status = str(scale.statusReplicasPath);
  if (!status) errs.push(field.required(childPath(path, 'scale.statusReplicasPath')));
  else check('statusReplicasPath', status, ['.status.'], 'should be a json path under .status');
  const selector = str(scale.labelSelectorPath);
  if (selector) check('labelSelectorPath', selector, ['.spec.', '.status.'], 'should be a json path under either .spec or .status');
  return errs;
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** validateDeprecationWarning (B-13): the messages, without path; indexes are byte offsets. */
export function deprecationWarningErrors(deprecated: boolean, warning: string | undefined): string[] {
  if (!deprecated && warning !== undefined) return ['can only be set for deprecated versions'];
  if (warning === undefined) return [];
  const errs: string[] = [];
  if (byteLength(warning) > 256) errs.push('must be <= 256 characters long');
  if (warning.length === 0) errs.push('must not be an empty string');
  let offset = 0;
  let valid = true;
  for (const ch of warning) {
    const cp = ch.codePointAt(0) ?? 0;
    const lone = cp >= 0xd800 && cp <= 0xdfff;
    if (lone) valid = false;
    // Go decodes an invalid byte as U+FFFD, which is printable
    else if (!PRINTABLE.test(ch)) {
      errs.push(`must only contain printable UTF-8 characters; non-printable character found at index ${offset}`);
      break;
    }
    offset += lone ? 3 : byteLength(ch);
  }
  if (!valid) errs.push('must only contain printable UTF-8 characters');
  return errs;
}
