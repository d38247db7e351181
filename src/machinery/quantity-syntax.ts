/**
 * resource.Quantity's syntax, read as apimachinery's parseQuantityString scans it: one pass over the string
 * (never a backtracking regular expression: a long run of digits followed by a wrong character would take
 * quadratic time), then the suffix interpreted as quantitySuffixer does. The errors are upstream's.
 */

/** The expression upstream's format error names (it is only quoted, never run). */
const SPLIT_RE = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
export const QUANTITY_FORMAT_ERROR = `quantities must match the regular expression '${SPLIT_RE}'`;
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

export interface QuantityParts {
  negative: boolean;
  /** The integer digits, leading zeros removed ('0' when none are left). */
  int: string;
  /** The fraction's digits ('' when there is none). */
  frac: string;
  /** Base 2 (Ki..Ei) or base 10 (SI suffixes and exponents). */
  base: 2 | 10;
  /** The power of the base the suffix stands for. */
  exponent: number;
}

const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const SUFFIX_LETTERS = 'eEinumkKMGTP';

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** The suffix as upstream interprets it; undefined: not a suffix. */
function interpretSuffix(suffix: string): { base: 2 | 10; exponent: number } | undefined {
  if (Object.prototype.hasOwnProperty.call(BINARY_SUFFIX, suffix)) return { base: 2, exponent: BINARY_SUFFIX[suffix] };
  if (Object.prototype.hasOwnProperty.call(DECIMAL_SUFFIX, suffix)) return { base: 10, exponent: DECIMAL_SUFFIX[suffix] };
  // An exponent: e or E, an optional sign and digits that fit an int64 (strconv.ParseInt(s, 10, 64), leading
  // zeros read), then taken as an int32 as upstream's int32(parsed) does: wrapped.
  if (suffix.length < 2 || (suffix[0] !== 'e' && suffix[0] !== 'E')) return undefined;
  let i = 1;
  if (suffix[i] === '+' || suffix[i] === '-') i++;
  if (i === suffix.length) return undefined;
  for (let j = i; j < suffix.length; j++) if (!isDigit(suffix.charCodeAt(j))) return undefined;
  let first = i;
  while (first < suffix.length - 1 && suffix[first] === '0') first++;
  if (suffix.length - first > 19) return undefined;
  const parsed = BigInt((suffix[1] === '-' ? '-' : '') + suffix.slice(first));
  if (parsed !== BigInt.asIntN(64, parsed)) return undefined;
  return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)) };
}

/** A quantity string's parts, or upstream's error for it. Linear in the string's length. */
export function scanQuantity(str: string): QuantityParts | { error: string } {
  const end = str.length;
  if (end === 0) return { error: QUANTITY_FORMAT_ERROR };
  let pos = 0;
  let negative = false;
  if (str[0] === '-' || str[0] === '+') {
    negative = str[0] === '-';
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos === end) return { negative, int: '0', frac: '', base: 10, exponent: 0 };
  let i = pos;
  while (i < end && isDigit(str.charCodeAt(i))) i++;
  const int = str.slice(pos, i) || '0';
  let frac = '';
  if (i < end && str[i] === '.') {
    const start = ++i;
    while (i < end && isDigit(str.charCodeAt(i))) i++;
    frac = str.slice(start, i);
  }
  const suffixStart = i;
  while (i < end && SUFFIX_LETTERS.includes(str[i])) i++;
  if (i < end && (str[i] === '-' || str[i] === '+')) i++;
  while (i < end && isDigit(str.charCodeAt(i))) i++;
  if (i < end) return { error: QUANTITY_FORMAT_ERROR };
  const suffix = interpretSuffix(str.slice(suffixStart));
  if (!suffix) return { error: QUANTITY_SUFFIX_ERROR };
  return { negative, int, frac, ...suffix };
}

/** Upstream's error for a quantity string as a JSON value decodes (surrounding space trimmed), or undefined when it parses. */
export function quantityError(value: string): string | undefined {
  const parts = scanQuantity(value.trim());
  return 'error' in parts ? parts.error : undefined;
}
