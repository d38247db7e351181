/**
 * Errors of the OpenAPI validator as kube-openapi reports them (a Validation with
 * a name, code, value and message, or a plain error), and their conversion into
 * field errors exactly as apiextensions' kubeOpenAPIResultToFieldErrors does it.
 */
import { childPath, fe, printPath, type FieldError } from '../errors.js';
import { goJSON } from '../values.js';

export const enum Code {
  Required,
  Enum,
  TooLong,
  MaxItems,
  TooManyProperties,
  Type,
  Other,
  /** Not a *errors.Validation: reported at the validator's root path with the whole message. */
  Plain,
}

export interface VErr {
  code: Code;
  /** kube-openapi's Name: the "in body" path, possibly with a leading dot. */
  name: string;
  msg: string;
  value?: unknown;
  /** max for TooLong/MaxItems/TooManyProperties */
  valid?: number;
  values?: unknown[];
}

/** Converts validator errors found under fldPath ('' for the object root) into field errors, without duplicates. */
export function toFieldErrors(errs: VErr[], fldPath: string): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errs) {
    if (seen.has(e.msg)) continue;
    seen.add(e.msg);
    if (e.code === Code.Plain) {
      out.push(fe.invalid(fldPath, '', e.msg));
      continue;
    }
    const p = e.name && e.name !== '.' ? childPath(fldPath, e.name.startsWith('.') ? e.name.slice(1) : e.name) : fldPath;
    const value = e.value === undefined || e.value === null ? '' : e.value;
    switch (e.code) {
      case Code.Required:
        out.push(fe.required(p));
        break;
      case Code.Enum:
        out.push(fe.notSupported(p, e.value ?? null, (e.values ?? []).map((v) => (typeof v === 'string' ? v : goJSON(v)))));
        break;
      case Code.TooLong:
        out.push(fe.tooLong(p, e.valid ?? -1));
        break;
      case Code.MaxItems:
      case Code.TooManyProperties:
        out.push(fe.tooMany(p, typeof e.value === 'number' ? e.value : -1, e.valid ?? -1));
        break;
      case Code.Type:
        out.push(fe.typeInvalid(p, value, e.msg));
        break;
      default:
        out.push(fe.invalid(p, value, e.msg));
    }
  }
  return out;
}

export { printPath };
