/**
 * The OpenAPI schema validator (kube-openapi's SchemaValidator as apiextensions
 * configures it), compiled once per schema into closures. For each value the
 * validators run in kube-openapi's order (type, allOf/anyOf/oneOf/not, string,
 * format, number, array, enum, object), all of them, so the errors and their order
 * match upstream; "match counts" are kept because anyOf/oneOf report the branch
 * that matched best. Ratcheting: errors under a node whose value did not change in
 * an update are dropped.
 */
import { goQuote } from '../../machinery/go-text.js';
import type { Correlation } from '../correlation.js';
import { effectiveFormat, formatValidator } from '../formats.js';
import { Budget, BudgetExceeded, compileRegex, type Regex } from '../regex/index.js';
import type { JSONSchemaProps } from '../types.js';
import { append, isObject, jsonEqual, Kind, kindOf, TYPE_NAMES } from '../values.js';
import { checkNumber, isFloat64AJSONInteger, type NumberSpec } from './numbers.js';
import { Code, type VErr } from './result.js';

export interface VCtx {
  errs: VErr[];
  budget: Budget;
}

/** Validates value at path; returns kube-openapi's match count. */
export type Validator = (value: unknown, path: string, cx: VCtx, corr: Correlation | undefined) => number;

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined);
const GO_FORMATS = ['', '', 'int64', 'float64', '', '', ''];

function typeError(path: string, typeName: string, value: string): VErr {
  return { code: Code.Type, name: path, value, msg: `${path} in body must be of type ${typeName}: ${goQuote(value)}` };
}

function plain(path: string, msg: string): VErr {
  return { code: Code.Plain, name: path, msg };
}

/** reflect.Value.Convert + DeepEqual between a datum and one enum value. */
function enumMatches(data: unknown, e: unknown): boolean {
  const dk = kindOf(data);
  const ek = kindOf(e);
  if (e === null || e === undefined) return false;
  switch (dk) {
    case Kind.Int:
      if (ek === Kind.Int) return BigInt(data as number | bigint) === BigInt(e as number | bigint);
      if (ek === Kind.Float) return Number(data) === e;
      if (ek === Kind.String) {
        const n = Number(data);
        const s = Number.isInteger(n) && n >= 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff) ? String.fromCodePoint(n) : '\ufffd';
        return s === e;
      }
      return false;
    case Kind.Float:
      if (ek === Kind.Int) return Math.trunc(data as number) === Number(e);
      return ek === Kind.Float && data === e;
    case Kind.String:
    case Kind.Bool:
      return data === e;
    case Kind.Array:
      return ek === Kind.Array && jsonEqual(data, e);
    case Kind.Object:
      return ek === Kind.Object && jsonEqual(data, e);
    default:
      return false;
  }
}

function runeCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

interface Branch {
  errs: VErr[];
  count: number;
}

const compiled = new WeakMap<JSONSchemaProps, Validator>();

/** The validator of a raw schema node, compiled once per node object. */
export function compileValidator(s: JSONSchemaProps): Validator {
  let v = compiled.get(s);
  if (!v) {
    v = compileNode(s);
    compiled.set(s, v);
  }
  return v;
}

function compileNode(s: JSONSchemaProps): Validator {
  const types = s['x-kubernetes-int-or-string'] === true ? ['integer', 'string'] : typeof s.type === 'string' && s.type ? [s.type] : [];
  const nullable = s.nullable === true;
  const format = effectiveFormat(typeof s.format === 'string' ? s.format : undefined, types);
  const typeApplies = types.length > 0 || format !== '';
  const typeList = types.join(',');
  const hasType = (t: string): boolean => types.includes(t);
  const hasNumeric = hasType('number') || hasType('integer');

  const sub = (x: unknown): Validator | undefined => (isObject(x) ? compileValidator(x as JSONSchemaProps) : undefined);
  const list = (x: unknown): Validator[] => (Array.isArray(x) ? x.filter(isObject).map((y) => compileValidator(y as JSONSchemaProps)) : []);
  const allOf = list(s.allOf);
  const anyOf = list(s.anyOf);
  const oneOf = list(s.oneOf);
  const not = sub(s.not);
  const hasJunctors = allOf.length > 0 || anyOf.length > 0 || oneOf.length > 0 || not !== undefined;

  const maxLength = num(s.maxLength);
  const minLength = num(s.minLength);
  const pattern = typeof s.pattern === 'string' ? s.pattern : '';
  let regex: Regex | undefined;
  let regexErr: string | undefined;
  if (pattern) {
    try {
      regex = compileRegex(pattern);
    } catch (e) {
      regexErr = (e as Error).message;
    }
  }
  const hasString = maxLength !== undefined || minLength !== undefined || pattern !== '';
  const fmt = format ? formatValidator(format) : undefined;

  const numSpec: NumberSpec = {
    typeName: types.length === 1 && (types[0] === 'integer' || types[0] === 'number') ? types[0] : '',
    format: '',
    multipleOf: num(s.multipleOf),
    maximum: num(s.maximum),
    exclusiveMaximum: s.exclusiveMaximum === true,
    minimum: num(s.minimum),
    exclusiveMinimum: s.exclusiveMinimum === true,
  };
  if (numSpec.typeName === 'integer' && (format === 'int32' || format === 'int64')) numSpec.format = format;
  if (numSpec.typeName === 'number' && (format === 'float' || format === 'double')) numSpec.format = format;

  const items = Array.isArray(s.items) ? undefined : sub(s.items);
  const minItems = num(s.minItems);
  const maxItems = num(s.maxItems);
  const uniqueItems = s.uniqueItems === true;

  const enumValues = Array.isArray(s.enum) && s.enum.length ? s.enum : undefined;

  const props = new Map<string, Validator>();
  if (isObject(s.properties)) for (const [k, v] of Object.entries(s.properties)) if (isObject(v)) props.set(k, compileValidator(v as JSONSchemaProps));
  const required = Array.isArray(s.required) ? s.required.map(String) : [];
  const ap = s.additionalProperties as unknown;
  const additionalForbidden = ap === false;
  const additional = isObject(ap) ? compileValidator(ap as JSONSchemaProps) : undefined;
  const minProps = num(s.minProperties);
  const maxProps = num(s.maxProperties);

  function checkType(value: unknown, k: Kind, path: string, errs: VErr[]): boolean {
    const schType = TYPE_NAMES[k];
    const goFormat = GO_FORMATS[k];
    const isFloatInt = k === Kind.Float && isFloat64AJSONInteger(value as number) && hasType('integer');
    const isIntFloat = k === Kind.Int && hasType('number');
    if (k !== Kind.String && k !== Kind.Array && format !== '' && !(hasType(schType) || goFormat === format || isFloatInt || isIntFloat)) {
      errs.push(typeError(path, format, goFormat));
      return false;
    }
    if (!hasNumeric && format !== '' && (k === Kind.String || k === Kind.Array)) return true;
    if (!(hasType(schType) || isFloatInt || isIntFloat)) {
      errs.push(typeError(path, typeList, schType));
      return false;
    }
    return true;
  }

  function junctors(value: unknown, path: string, cx: VCtx, corr: Correlation | undefined): number {
    const errs = cx.errs;
    let count = 0;
    const run = (v: Validator): Branch => {
      const b: Branch = { errs: [], count: 0 };
      cx.errs = b.errs;
      try {
        b.count = v(value, path, cx, corr);
      } finally {
        cx.errs = errs;
      }
      return b;
    };
    if (anyOf.length) {
      let best: Branch | undefined;
      let first: Branch | undefined;
      for (const v of anyOf) {
        const r = run(v);
        if (r.errs.length === 0) {
          first = r;
          best = undefined;
          break;
        }
        if (!best || r.count > best.count) best = r;
      }
      if (!first) errs.push(plain(path, `${goQuote(path)} must validate at least one schema (anyOf)`));
      if (best) {
        append(errs, best.errs);
        count += best.count;
      } else if (first) count += first.count;
    }
    if (oneOf.length) {
      let best: Branch | undefined;
      let first: Branch | undefined;
      let validated = 0;
      for (const v of oneOf) {
        const r = run(v);
        if (r.errs.length === 0) {
          validated++;
          best = undefined;
          first ??= r;
          continue;
        }
        if (validated === 0 && (!best || r.count > best.count)) best = r;
      }
      if (validated !== 1) {
        const more = validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`;
        errs.push(plain(path, `${goQuote(path)} must validate one and only one schema (oneOf). ${more}`));
        if (best) {
          append(errs, best.errs);
          count += best.count;
        }
      } else if (first) count += first.count;
    }
    if (allOf.length) {
      let validated = 0;
      for (const v of allOf) {
        const r = run(v);
        if (r.errs.length === 0) validated++;
        append(errs, r.errs);
        count += r.count;
      }
      if (validated !== allOf.length) errs.push(plain(path, `${goQuote(path)} must validate all the schemas (allOf)${validated === 0 ? '. None validated' : ''}`));
    }
    if (not && run(not).errs.length === 0) errs.push(plain(path, `${goQuote(path)} must not validate the schema (not)`));
    return count + 1;
  }

  function checkString(value: string, path: string, errs: VErr[], budget: Budget): void {
    if (maxLength !== undefined && runeCount(value) > maxLength) {
      errs.push({ code: Code.TooLong, name: path, value, valid: maxLength, msg: `${path} in body should be at most ${maxLength} chars long` });
      return;
    }
    if (minLength !== undefined && runeCount(value) < minLength) {
      errs.push({ code: Code.Other, name: path, value, msg: `${path} in body should be at least ${minLength} chars long` });
      return;
    }
    if (pattern) {
      if (regexErr) errs.push({ code: Code.Other, name: path, value, msg: `${path} in body should match '${pattern}, but pattern is invalid: ${regexErr}'` });
      else if (!(regex as Regex).test(value, budget)) errs.push({ code: Code.Other, name: path, value, msg: `${path} in body should match '${pattern}'` });
    }
  }

  function checkArray(value: unknown[], path: string, cx: VCtx, corr: Correlation | undefined): number {
    let count = 0;
    if (items) for (let i = 0; i < value.length; i++) count += items(value[i], `${path}[${i}]`, cx, corr?.index(i));
    const n = value.length;
    if (minItems !== undefined && n < minItems) cx.errs.push({ code: Code.Other, name: path, value: n, msg: `${path} in body should have at least ${minItems} items` });
    if (maxItems !== undefined && n > maxItems) cx.errs.push({ code: Code.MaxItems, name: path, value: n, valid: maxItems, msg: `${path} in body should have at most ${maxItems} items` });
    if (uniqueItems) {
      outer: for (let i = 1; i < n; i++) {
        for (let j = 0; j < i; j++) {
          if (jsonEqual(value[i], value[j])) {
            cx.errs.push({ code: Code.Other, name: path, msg: `${path} in body shouldn't contain duplicates` });
            break outer;
          }
        }
      }
    }
    return count + 1;
  }

  function checkObject(value: Record<string, unknown>, path: string, cx: VCtx, corr: Correlation | undefined): number {
    let count = 0;
    const keys = Object.keys(value);
    const n = keys.length;
    if (minProps !== undefined && n < minProps) cx.errs.push({ code: Code.Other, name: path, value: n, msg: `${path} in body should have at least ${minProps} properties` });
    if (maxProps !== undefined && n > maxProps) cx.errs.push({ code: Code.TooManyProperties, name: path, value: n, valid: maxProps, msg: `${path} in body should have at most ${maxProps} properties` });
    const prefix = path === '' ? '' : path + '.';
    const rootTypeMeta = path === '';
    // Data keys in their order: the properties' validators, else additionalProperties.
    for (const k of keys) {
      const v = props.get(k);
      if (v) {
        const c = rootTypeMeta && (k === 'kind' || k === 'apiVersion') ? undefined : corr?.key(k);
        count += v(value[k], prefix + k, cx, c);
      } else if (additionalForbidden) cx.errs.push({ code: Code.Other, name: path, value: k, msg: `${path}.${k} in body is a forbidden property` });
      else if (additional) count += additional(value[k], `${path}.${k}`, cx, corr?.key(k));
    }
    for (const k of required) if (!Object.prototype.hasOwnProperty.call(value, k)) cx.errs.push({ code: Code.Required, name: `${path}.${k}`, msg: `${path}.${k} in body is required` });
    return count;
  }

  return function validate(value, path, cx, corr) {
    if (--cx.budget.remaining < 0) throw new BudgetExceeded();
    const errs = cx.errs;
    const mark = errs.length;
    let count: number;
    if (value === null || value === undefined) {
      count = 1;
      if (types.length && !nullable) {
        errs.push(typeError(path, typeList, 'null'));
        count = 0;
      }
      if (enumValues) errs.push({ code: Code.Enum, name: path, value: null, values: enumValues, msg: `${path} in body should be one of ${goEnumList(enumValues)}` });
    } else {
      const k = kindOf(value);
      count = 1;
      if (typeApplies) count += checkType(value, k, path, errs) ? 2 : 1;
      count += (hasJunctors ? junctors(value, path, cx, corr) : 1) + 1;
      if (k === Kind.String) {
        if (hasString) checkString(value as string, path, errs, cx.budget);
        count++;
        if (fmt) {
          if (!fmt(value as string)) errs.push(typeError(path, format, value as string));
          count++;
        }
      } else if (k === Kind.Int || k === Kind.Float) {
        if (numSpec.typeName !== '' || numSpec.multipleOf !== undefined || numSpec.maximum !== undefined || numSpec.minimum !== undefined) {
          checkNumber(value as number | bigint, k === Kind.Int, path, numSpec, errs);
        }
        count += 2;
      } else if (k === Kind.Array) count += checkArray(value as unknown[], path, cx, corr) + 1;
      count++;
      if (enumValues && !enumValues.some((e) => enumMatches(value, e))) {
        errs.push({ code: Code.Enum, name: path, value, values: enumValues, msg: `${path} in body should be one of ${goEnumList(enumValues)}` });
      }
      if (k === Kind.Object) count += checkObject(value as Record<string, unknown>, path, cx, corr) + 1;
    }
    if (corr && errs.length > mark && corr.unchanged()) errs.length = mark;
    return count;
  };
}

/** fmt's %v of []interface{}: [a b 1 2]. */
function goEnumList(values: unknown[]): string {
  return '[' + values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? Number(x) : x)))).join(' ') + ']';
}
