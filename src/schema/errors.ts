/**
 * Field errors as the newest apimachinery builds them (field.TooLong says "byte"
 * for 1, field.TooMany "item", NotSupported quotes values with strconv.Quote), and
 * field.Path printing: the empty path stands for Go's nil *field.Path, which
 * prints as "<nil>" (e.g. a CEL rule failing at the root of a custom resource).
 */
import { fieldErrorString, OMIT_VALUE, type FieldError } from '../machinery/field-errors.js';
import { goQuote } from '../machinery/go-text.js';

export { fieldErrorString, OMIT_VALUE };
export type { FieldError };

/** How a path prints in an error: the nil path is "<nil>". */
export const printPath = (p: string): string => (p === '' ? '<nil>' : p);

/** field.Path.Child */
export const childPath = (p: string, name: string): string => (p === '' ? name : `${p}.${name}`);
/** field.Path.Key */
export const keyPath = (p: string, k: string): string => `${p}[${k}]`;
/** field.Path.Index */
export const indexPath = (p: string, i: number): string => `${p}[${i}]`;

export const fe = {
  required: (p: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field: printPath(p), detail }),
  invalid: (p: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field: printPath(p), badValue: value, detail }),
  typeInvalid: (p: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueTypeInvalid', field: printPath(p), badValue: value, detail }),
  notSupported: (p: string, value: unknown, valid: string[]): FieldError => ({
    type: 'FieldValueNotSupported',
    field: printPath(p),
    badValue: value,
    detail: valid.length ? 'supported values: ' + valid.map(goQuote).join(', ') : '',
  }),
  forbidden: (p: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field: printPath(p), detail }),
  duplicate: (p: string, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field: printPath(p), badValue: value }),
  tooLong: (p: string, max: number): FieldError => ({
    type: 'FieldValueTooLong',
    field: printPath(p),
    detail: max >= 0 ? `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` : 'value is too long',
  }),
  tooMany: (p: string, actual: number, max: number): FieldError => ({
    type: 'FieldValueTooMany',
    field: printPath(p),
    badValue: actual >= 0 ? actual : OMIT_VALUE,
    detail: max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items',
  }),
  internal: (p: string, detail: string): FieldError => ({ type: 'InternalError', field: printPath(p), detail }),
};
