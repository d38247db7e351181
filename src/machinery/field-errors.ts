/**
 * Field errors as apimachinery's util/validation/field renders them: the path,
 * the error type's text, the bad value (bare numbers and booleans, quoted
 * strings, JSON for composites and nil) and an optional detail.
 */
import { goQuote } from './go-text.js';

/** field.ErrorType: the kind of a field error, as a cause's `reason` in a 422 Invalid Status. */
export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError'
  | 'FieldValueTypeInvalid';

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
};

/** Marks a bad value that must not be printed (field.Error's omitValue). */
export const OMIT_VALUE: unique symbol = Symbol('omit value');

/**
 * A field error, as apimachinery's field.Error: what is wrong with which field. Errors returned by a
 * validation refuse the write with 422 Invalid, one `details.causes` entry each. Build them with `fieldError`.
 */
export interface FieldError {
  type: FieldErrorType;
  /** The field's path, e.g. `spec.replicas` or `spec.ports[0].name`. */
  field: string;
  /** The value refused, printed in the message (not for Required, Forbidden, TooLong and InternalError). */
  badValue?: unknown;
  /** Why, in words, appended to the message. */
  detail?: string;
}

/** The error's text without the field path (a `details.causes[].message`). */
export function fieldErrorBody(e: FieldError): string {
  let s = TYPE_TEXT[e.type];
  const valueless =
    e.type === 'FieldValueRequired' ||
    e.type === 'FieldValueForbidden' ||
    e.type === 'FieldValueTooLong' ||
    e.type === 'InternalError' ||
    e.badValue === OMIT_VALUE;
  if (!valueless) s += `: ${renderValue(e.badValue)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** `<field>: <body>` */
export function fieldErrorString(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/** Several errors as Go's aggregate prints them: one bare, more in brackets, duplicates removed. */
export function aggregateMessage(errors: FieldError[]): string {
  const texts = [...new Set(errors.map(fieldErrorString))];
  return texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
}

/**
 * field.Error's ErrorBody: simple values printed (a string %q-quoted), anything else as json.Marshal
 * writes it, so nil (an interface, pointer or slice) is `null` and an empty slice `[]`.
 */
function renderValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return jsonText(v);
}

/** JSON as json.Marshal writes it: members in order (a struct's field order), <, > and & escaped. */
function jsonText(v: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? Number(x) : x)) ?? String(v);
  } catch {
    return String(v);
  }
  return text.replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
}

/** Builders named like apimachinery's field.Required, field.Invalid, ... */
export const field = {
  required: (path: string, detail?: string): FieldError => ({ type: 'FieldValueRequired', field: path, detail }),
  invalid: (path: string, value: unknown, detail?: string): FieldError => ({ type: 'FieldValueInvalid', field: path, badValue: value, detail }),
  notSupported: (path: string, value: unknown, supported: string[]): FieldError => ({
    type: 'FieldValueNotSupported',
    field: path,
    badValue: value,
    detail: supported.length ? `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}` : undefined,
  }),
  forbidden: (path: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field: path, detail }),
  duplicate: (path: string, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field: path, badValue: value }),
  notFound: (path: string, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field: path, badValue: value }),
  tooLong: (path: string, _value: unknown, max: number): FieldError => ({
    type: 'FieldValueTooLong',
    field: path,
    detail: max >= 0 ? `may not be more than ${max} bytes` : 'value is too long',
  }),
  tooMany: (path: string, actual: number, max: number): FieldError => ({
    type: 'FieldValueTooMany',
    field: path,
    badValue: actual >= 0 ? actual : OMIT_VALUE,
    detail: `must have at most ${max} items`,
  }),
  typeInvalid: (path: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueTypeInvalid', field: path, badValue: value, detail }),
  internal: (path: string, err: string): FieldError => ({ type: 'InternalError', field: path, detail: err }),
};

/** Join path segments the way field.Path prints them: `a.b[0][key]`. */
export function childPath(parent: string, name: string): string {
  return parent ? `${parent}.${name}` : name;
}

export function indexPath(parent: string, i: number | string): string {
  return `${parent}[${i}]`;
}
