/**
 * resource.Quantity's text: the format a quantity was written in (its suffix), and its canonical form in that format
 * (Quantity.String, as a typed object is written back: `1000m` is `1`, `1024Mi` is `1Gi`, `0.5` is `500m`). Linear in
 * the digits.
 */
import { parseQuantity, type Quantity } from './quantity.js';

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** The format of a quantity's text: binary SI (Ki..Ei), decimal exponent (e3), or decimal SI. */
export function quantityFormat(text: string): QuantityFormat {
  return /[KMGTPE]i$/.test(text) ? 'BinarySI' : /[eE][+-]?\d+$/.test(text) ? 'DecimalExponent' : 'DecimalSI';
}

const DECIMAL_SUFFIXES = ['n', 'u', 'm', '', 'k', 'M', 'G', 'T', 'P', 'E'];
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** digits ÷ small, by long division (linear): the quotient's digits and the remainder. */
function divide(digits: string, by: number): [string, number] {
  let rem = 0;
  let out = '';
  for (let i = 0; i < digits.length; i++) {
    const cur = rem * 10 + (digits.charCodeAt(i) - 48);
    const d = Math.floor(cur / by);
    rem = cur - d * by;
    if (out || d) out += String(d);
  }
  return [out || '0', rem];
}

/** Quantity.String: the canonical text of a quantity in a format. */
export function formatQuantity(q: Quantity, format: QuantityFormat): string {
  if (q.sign() === 0) return '0';
  const sign = q.negative ? '-' : '';
  const nano = q.nano;
  if (format === 'BinarySI') {
    // A whole number of at least 1024 in binary suffixes; anything else reads better (and exactly) as DecimalSI.
    const whole = nano.length > 9 && nano.endsWith('000000000') ? nano.slice(0, -9) : undefined;
    if (whole && (whole.length > 4 || Number(whole) >= 1024)) {
      let value = whole;
      let power = 0;
      while (power < BINARY_SUFFIXES.length - 1) {
        const [quotient, rem] = divide(value, 1024);
        if (rem !== 0) break;
        value = quotient;
        power++;
      }
      return `${sign}${value}${BINARY_SUFFIXES[power]}`;
    }
  }
  let zeros = 0;
  while (zeros < nano.length - 1 && nano.charCodeAt(nano.length - 1 - zeros) === 48) zeros++;
  // An exponent has no largest suffix; SI suffixes end at E (upstream then drops the suffix: kapi keeps E).
  const groups = format === 'DecimalExponent' ? Math.floor(zeros / 3) : Math.min(Math.floor(zeros / 3), DECIMAL_SUFFIXES.length - 1);
  const mantissa = nano.slice(0, nano.length - 3 * groups);
  const exponent = -9 + 3 * groups;
  if (format === 'DecimalExponent') return `${sign}${mantissa}${exponent === 0 ? '' : `e${exponent}`}`;
  return `${sign}${mantissa}${DECIMAL_SUFFIXES[groups]}`;
}

/** A quantity's text (or JSON number) in canonical form; undefined when it is not a quantity. */
export function canonicalQuantity(value: string | number | bigint): string | undefined {
  const text = String(value);
  const q = parseQuantity(text);
  return q ? formatQuantity(q, quantityFormat(text)) : undefined;
}
