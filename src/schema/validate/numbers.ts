/**
 * kube-openapi's numberValidator: multipleOf, maximum and minimum against int64 or
 * float64 data (integers compare with int64(bound), truncated as Go converts),
 * the "Checked value must be of type ..." range checks, and Go's %v for numbers
 * in messages.
 */
import { formatGoFloat } from '../../machinery/go-text.js';
import { Code, type VErr } from './result.js';

const MIN_INT64 = -(2n ** 63n);
const MAX_INT64 = 2n ** 63n - 1n;
const MAX_FLOAT32 = 3.4028234663852886e38;

/** Go's int64(f) on amd64: truncation, MinInt64 when out of range. */
export function toInt64(f: number): bigint {
  if (!Number.isFinite(f) || f >= 9223372036854775808 || f < -9223372036854775808) return MIN_INT64;
  return BigInt(Math.trunc(f));
}

/** swag's IsFloat64AJSONInteger: integers within ±(2^53-1), with a relative tolerance of 1e-9. */
export function isFloat64AJSONInteger(f: number): boolean {
  if (Number.isNaN(f) || !Number.isFinite(f) || f < -9007199254740991 || f > 9007199254740991) return false;
  const rounded = f < 0 ? -Math.round(-f) : Math.round(f);
  if (f === rounded) return true;
  if (rounded === 0) return false;
  return Math.abs(f - rounded) < 1e-9 * Math.abs(rounded);
}

/** strconv.FormatFloat(f, 'f', -1, 64) */
function formatFixed(f: number): string {
  if (Math.abs(f) < 1e21) return String(f).includes('e') ? f.toFixed(20).replace(/\.?0+$/, '') : String(f);
  return BigInt(f).toString();
}

/** IsValueValidAgainstRange: whether a value (data or bound) fits the schema's integer/number format, else the error text. */
export function rangeError(v: number | bigint, isInt: boolean, typeName: string, format: string, prefix: string, path: string): string | undefined {
  if (typeName !== 'integer' && format !== 'float') return undefined;
  if (typeof v === 'number' && Number.isSafeInteger(v) && (format !== 'int32' || (v >= -2147483648 && v <= 2147483647))) {
    if (typeName === 'integer' || Math.abs(v) <= MAX_FLOAT32) return undefined;
  }
  let ok = true;
  if (typeName === 'integer') {
    const rep = isInt ? String(v) : formatFixed(Number(v));
    if (!/^-?\d+$/.test(rep)) ok = false;
    else {
      const b = BigInt(rep);
      ok = format === 'int32' ? b >= -(2n ** 31n) && b < 2n ** 31n : b >= MIN_INT64 && b <= MAX_INT64;
    }
  } else if (format === 'float') {
    ok = Math.abs(Number(v)) <= MAX_FLOAT32;
  }
  if (ok) return undefined;
  return format ? `${prefix} value must be of type ${typeName} with format ${format} in ${path}` : `${prefix} value must be of type ${typeName} (default format) in ${path}`;
}

export interface NumberSpec {
  typeName: string;
  format: string;
  multipleOf?: number;
  maximum?: number;
  exclusiveMaximum: boolean;
  minimum?: number;
  exclusiveMinimum: boolean;
}

const plain = (path: string, msg: string): VErr => ({ code: Code.Plain, name: path, msg });

function cmpInt(a: number | bigint, b: bigint): number {
  if (typeof a === 'number' && b >= -9007199254740991n && b <= 9007199254740991n) return a - Number(b);
  const x = BigInt(a);
  return x < b ? -1 : x > b ? 1 : 0;
}

/** numberValidator.Validate: errors in kube-openapi's order (checked, multipleOf, minimum, maximum). */
export function checkNumber(v: number | bigint, isInt: boolean, path: string, n: NumberSpec, errs: VErr[]): void {
  const checked = rangeError(v, isInt, n.typeName, n.format, 'Checked', path);
  if (checked) errs.push(plain(path, checked));
  const data = Number(v);
  if (n.multipleOf !== undefined) {
    const bad = rangeError(n.multipleOf, false, n.typeName, n.format, 'MultipleOf', path);
    if (bad) errs.push(plain(path, bad));
    if (!bad && isInt) {
      const factor = toInt64(n.multipleOf);
      if (factor <= 0n) errs.push({ code: Code.Other, name: path, value: factor, msg: `factor MultipleOf declared for ${path} must be positive: ${factor}` });
      else if ((typeof v === 'number' && factor <= 9007199254740991n ? v % Number(factor) !== 0 : BigInt(v) % factor !== 0n)) {
        errs.push({ code: Code.Other, name: path, value: v, msg: `${path} in body should be a multiple of ${factor}` });
      }
    } else {
      const f = n.multipleOf;
      if (f <= 0) errs.push({ code: Code.Other, name: path, value: f, msg: `factor MultipleOf declared for ${path} must be positive: ${formatGoFloat(f)}` });
      else if (!isFloat64AJSONInteger(f < 1 ? (1 / f) * data : data / f)) {
        errs.push({ code: Code.Other, name: path, value: v, msg: `${path} in body should be a multiple of ${formatGoFloat(f)}` });
      }
    }
  }
  if (n.minimum !== undefined) {
    const bad = rangeError(n.minimum, false, n.typeName, n.format, 'Minimum boundary', path);
    if (bad) errs.push(plain(path, bad));
    const word = n.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
    if (!bad && isInt) {
      const min = toInt64(n.minimum);
      const c = cmpInt(v, min);
      if (n.exclusiveMinimum ? c <= 0 : c < 0) errs.push({ code: Code.Other, name: path, value: v, msg: `${path} in body should be ${word} ${min}` });
    } else if (n.exclusiveMinimum ? data <= n.minimum : data < n.minimum) {
      errs.push({ code: Code.Other, name: path, value: v, msg: `${path} in body should be ${word} ${formatGoFloat(n.minimum)}` });
    }
  }
  if (n.maximum !== undefined) {
    const bad = rangeError(n.maximum, false, n.typeName, n.format, 'Maximum boundary', path);
    if (bad) errs.push(plain(path, bad));
    const word = n.exclusiveMaximum ? 'less than' : 'less than or equal to';
    if (!bad && isInt) {
      const max = toInt64(n.maximum);
      const c = cmpInt(v, max);
      if (n.exclusiveMaximum ? c >= 0 : c > 0) errs.push({ code: Code.Other, name: path, value: v, msg: `${path} in body should be ${word} ${max}` });
    } else if (n.exclusiveMaximum ? data >= n.maximum : data > n.maximum) {
      errs.push({ code: Code.Other, name: path, value: v, msg: `${path} in body should be ${word} ${formatGoFloat(n.maximum)}` });
    }
  }
}
