/**
 * Small helpers for reproducing Go's view of strings: UTF-8 byte lengths,
 * byte-order comparison (Go compares strings bytewise) and strconv.Quote.
 */

/** len(s) in Go: the UTF-8 byte length. */
export function byteLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && isLowSurrogate(s.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** Go's `a < b` for strings: UTF-8 byte order, which is code point order. */
export function compareGoStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 order differs from code point order only when a surrogate meets U+E000..U+FFFF.
    if (x >= 0xd800 && y >= 0xd800) {
      const cx = a.codePointAt(i) ?? x;
      const cy = b.codePointAt(i) ?? y;
      return cx < cy ? -1 : 1;
    }
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** unicode.IsLetter of one character (a code point's string); ASCII answered without a regular expression. */
export function isGoLetter(ch: string): boolean {
  const c = ch.charCodeAt(0);
  if (c < 0x80) return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
  return /\p{L}/u.test(ch);
}

/** unicode.IsDigit of one character (a code point's string); ASCII answered without a regular expression. */
export function isGoDigit(ch: string): boolean {
  const c = ch.charCodeAt(0);
  if (c < 0x80) return c >= 0x30 && c <= 0x39;
  return /\p{Nd}/u.test(ch);
}

/** unicode.IsPrint */
export function isGoPrint(cp: number): boolean {
  return PRINTABLE.test(String.fromCodePoint(cp));
}

/** strconv.Quote: double-quoted with Go escapes, printable runes kept as they are. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) out += quoteRune(ch.codePointAt(0) ?? 0, '"');
  return out + '"';
}

/** The body of strconv.Quote/QuoteRune for one rune (without the surrounding quotes). */
export function quoteRune(cp: number, quote: '"' | "'"): string {
  const ch = String.fromCodePoint(cp);
  if (ch === quote || ch === '\\') return '\\' + ch;
  if (cp >= 0xd800 && cp <= 0xdfff) return '\\ufffd';
  if (isGoPrint(cp)) return ch;
  switch (cp) {
    case 7:
      return '\\a';
    case 8:
      return '\\b';
    case 12:
      return '\\f';
    case 10:
      return '\\n';
    case 13:
      return '\\r';
    case 9:
      return '\\t';
    case 11:
      return '\\v';
  }
  if (cp < 0x20 || cp === 0x7f) return '\\x' + cp.toString(16).padStart(2, '0');
  if (cp < 0x10000) return '\\u' + cp.toString(16).padStart(4, '0');
  return '\\U' + cp.toString(16).padStart(8, '0');
}


/**
 * strconv.FormatFloat(f, 'g', -1, bits): the shortest digits that round-trip at that
 * size, in exponent form (`1e+06`, `1.5e-05`) when the exponent is < -4 or >= 6.
 */
export function formatGoFloat(f: number, bits: 32 | 64 = 64): string {
  if (Number.isNaN(f)) return 'NaN';
  if (!Number.isFinite(f)) return f > 0 ? '+Inf' : '-Inf';
  if (bits === 32) f = Math.fround(f);
  const neg = f < 0 || Object.is(f, -0);
  const [mant, expText] = shortestExponential(Math.abs(f), bits).split('e');
  const digits = mant.replace('.', '');
  const exp = f === 0 ? 0 : Number(expText);
  let out: string;
  if (exp < -4 || exp >= 6) {
    const e = Math.abs(exp);
    out = `${digits[0]}${digits.length > 1 ? '.' + digits.slice(1) : ''}e${exp < 0 ? '-' : '+'}${e < 10 ? '0' + e : e}`;
  } else if (exp < 0) out = '0.' + '0'.repeat(-exp - 1) + digits;
  else if (digits.length > exp + 1) out = digits.slice(0, exp + 1) + '.' + digits.slice(exp + 1);
  else out = digits + '0'.repeat(exp + 1 - digits.length);
  return neg ? '-' + out : out;
}

function shortestExponential(x: number, bits: 32 | 64): string {
  if (bits === 64) return x.toExponential();
  for (let p = 0; p < 9; p++) {
    const s = x.toExponential(p);
    if (Math.fround(Number(s)) === x) return s;
  }
  return x.toExponential(8);
}
