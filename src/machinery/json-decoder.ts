/**
 * The JSON decoder behind parseJson: iterative (hostile nesting cannot overflow
 * the stack), capped at encoding/json's 10000 levels, with Go's error texts and
 * number handling (int64 exact, BigInt beyond 2^53).
 */
import { quoteRune } from './go-text.js';

export class JsonSyntaxError extends SyntaxError {
  constructor(
    message: string,
    /** Offset (in UTF-16 code units) where decoding failed. */
    readonly offset: number,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

/** encoding/json's scanner limit (maxNestingDepth). */
export const MAX_JSON_DEPTH = 10000;

/** A number as written in the input, for decoders that type-check like Go (see parseJsonLiterals). */
export class NumberLiteral {
  constructor(readonly literal: string) {}
}

/**
 * A JSON number literal as the apiserver keeps it: integers in int64 range stay exact
 * (BigInt beyond 2^53), everything else is a float64.
 */
export function jsonNumber(literal: string): number | bigint {
  if (isIntegerLiteral(literal)) {
    if (literal.length <= 15) return Number(literal) || 0; // `|| 0` turns -0 into 0 like ParseInt
    const big = BigInt(literal);
    if (big >= MIN_SAFE && big <= MAX_SAFE) return Number(big);
    if (big >= MIN_INT64 && big <= MAX_INT64) return big;
  }
  return Number(literal);
}

export const MAX_INT64 = 9223372036854775807n;
export const MIN_INT64 = -9223372036854775808n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

function isIntegerLiteral(s: string): boolean {
  let i = s.charCodeAt(0) === 45 ? 1 : 0;
  if (i >= s.length) return false;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

type Frame = { arr: unknown[] } | { obj: Record<string, unknown>; key: string };

/** An iterative decoder (no recursion, so hostile nesting cannot overflow the stack). */
export class Decoder {
  private i = 0;
  private rangeError: JsonSyntaxError | undefined;

  constructor(
    private readonly s: string,
    private readonly literals = false,
    /** The deepest nesting accepted: encoding/json's, unless kapi reads back JSON it wrote itself. */
    private readonly maxDepth = MAX_JSON_DEPTH,
  ) {}

  decode(): unknown {
    const s = this.s;
    const stack: Frame[] = [];
    let value: unknown;
    this.skipSpace();
    for (;;) {
      // Expecting a value.
      const c = s.charCodeAt(this.i);
      if (c === 123 /* { */ || c === 91 /* [ */) {
        if (stack.length + 1 > this.maxDepth) this.fail('exceeded max depth');
        this.i++;
        this.skipSpace();
        const close = c === 123 ? 125 : 93;
        if (s.charCodeAt(this.i) === close) {
          this.i++;
          value = c === 123 ? {} : [];
        } else if (c === 91) {
          stack.push({ arr: [] });
          continue;
        } else {
          stack.push({ obj: {}, key: this.readKey() });
          continue;
        }
      } else if (c === 34 /* " */) value = this.readString();
      else if (c === 45 || (c >= 48 && c <= 57)) value = this.readNumber();
      else if (c === 116) value = this.readLiteral('true', true);
      else if (c === 102) value = this.readLiteral('false', false);
      else if (c === 110) value = this.readLiteral('null', null);
      else this.fail('looking for beginning of value');

      // After a value: close as many containers as the input closes.
      for (;;) {
        const top = stack[stack.length - 1];
        this.skipSpace();
        if (!top) {
          if (this.i < s.length) this.fail('after top-level value');
          if (this.rangeError) throw this.rangeError;
          return value;
        }
        const d = s.charCodeAt(this.i);
        if ('arr' in top) {
          top.arr.push(value);
          if (d === 44 /* , */) {
            this.i++;
            this.skipSpace();
            break;
          }
          if (d !== 93) this.fail('after array element');
          this.i++;
          value = top.arr;
        } else {
          setOwn(top.obj, top.key, value);
          if (d === 44) {
            this.i++;
            this.skipSpace();
            top.key = this.readKey();
            break;
          }
          if (d !== 125) this.fail('after object key:value pair');
          this.i++;
          value = top.obj;
        }
        stack.pop();
      }
    }
  }

  /** A key string, the colon after it, and the whitespace before the value. */
  private readKey(): string {
    if (this.s.charCodeAt(this.i) !== 34) this.fail('looking for beginning of object key string');
    const key = this.readString();
    this.skipSpace();
    if (this.s.charCodeAt(this.i) !== 58 /* : */) this.fail('after object key');
    this.i++;
    this.skipSpace();
    return key;
  }

  private skipSpace(): void {
    const s = this.s;
    let i = this.i;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 32 && c !== 10 && c !== 13 && c !== 9) break;
    }
    this.i = i;
  }

  private readString(): string {
    const s = this.s;
    let i = this.i + 1;
    let out = '';
    let start = i;
    for (;;) {
      if (i >= s.length) this.fail('', i);
      const c = s.charCodeAt(i);
      if (c === 34) break;
      if (c < 0x20) this.fail('in string literal', i);
      if (c !== 92) {
        i++;
        continue;
      }
      out += s.slice(start, i);
      i++;
      if (i >= s.length) this.fail('', i);
      const e = s.charCodeAt(i);
      switch (e) {
        case 34:
        case 92:
        case 47:
          out += s[i];
          break;
        case 98:
          out += '\b';
          break;
        case 102:
          out += '\f';
          break;
        case 110:
          out += '\n';
          break;
        case 114:
          out += '\r';
          break;
        case 116:
          out += '\t';
          break;
        case 117: {
          const cu = this.hex4(i + 1);
          i += 4;
          if (cu >= 0xd800 && cu <= 0xdbff && s.charCodeAt(i + 1) === 92 && s.charCodeAt(i + 2) === 117) {
            const lo = this.hex4(i + 3);
            if (lo >= 0xdc00 && lo <= 0xdfff) {
              out += String.fromCharCode(cu, lo);
              i += 6;
              break;
            }
          }
          // Go replaces a lone surrogate by U+FFFD.
          out += cu >= 0xd800 && cu <= 0xdfff ? '\ufffd' : String.fromCharCode(cu);
          break;
        }
        default:
          this.fail('in string escape code', i);
      }
      i++;
      start = i;
    }
    this.i = i + 1;
    return out + s.slice(start, i);
  }

  private hex4(at: number): number {
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const p = at + k;
      if (p >= this.s.length) this.fail('', p);
      const c = this.s.charCodeAt(p);
      const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
      if (d < 0) this.fail('in \\u hexadecimal character escape', p);
      v = v * 16 + d;
    }
    return v;
  }

  private readNumber(): number | bigint | NumberLiteral {
    const s = this.s;
    const start = this.i;
    let i = start;
    if (s.charCodeAt(i) === 45) {
      i++;
      if (i >= s.length) this.fail('', i);
      if (!isDigit(s.charCodeAt(i))) this.fail('in numeric literal', i);
    }
    if (s.charCodeAt(i) === 48) i++;
    else while (isDigit(s.charCodeAt(i))) i++;
    if (s.charCodeAt(i) === 46 /* . */) {
      i++;
      if (i >= s.length) this.fail('', i);
      if (!isDigit(s.charCodeAt(i))) this.fail('after decimal point in numeric literal', i);
      while (isDigit(s.charCodeAt(i))) i++;
    }
    const e = s.charCodeAt(i);
    if (e === 101 || e === 69) {
      i++;
      const sign = s.charCodeAt(i);
      if (sign === 43 || sign === 45) i++;
      if (i >= s.length) this.fail('', i);
      if (!isDigit(s.charCodeAt(i))) this.fail('in exponent of numeric literal', i);
      while (isDigit(s.charCodeAt(i))) i++;
    }
    this.i = i;
    const literal = s.slice(start, i);
    if (this.literals) return new NumberLiteral(literal);
    const n = jsonNumber(literal);
    if (typeof n === 'number' && !Number.isFinite(n) && !this.rangeError) {
      this.rangeError = new JsonSyntaxError(`json: cannot unmarshal number ${literal} into Go value of type float64`, start);
    }
    return n;
  }

  private readLiteral<T>(word: string, value: T): T {
    for (let k = 1; k < word.length; k++) {
      const p = this.i + k;
      if (p >= this.s.length) this.fail('', p);
      if (this.s[p] !== word[k]) this.fail(`in literal ${word} (expecting ${quoteChar(word.charCodeAt(k))})`, p);
    }
    this.i += word.length;
    return value;
  }

  /** Throws Go's SyntaxError text for the character at `at` (or end of input). */
  private fail(context: string, at = this.i): never {
    if (at >= this.s.length) throw new JsonSyntaxError('unexpected end of JSON input', at);
    const cp = this.s.codePointAt(at) ?? 0;
    throw new JsonSyntaxError(`invalid character ${quoteChar(firstUtf8Byte(cp))} ${context}`, at);
  }
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Like JSON.parse, a "__proto__" key becomes an own property, not the prototype. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

// Go's scanner reports the offending byte, so a multi-byte character shows as its first byte.
function firstUtf8Byte(cp: number): number {
  if (cp < 0x80) return cp;
  if (cp < 0x800) return 0xc0 | (cp >> 6);
  if (cp < 0x10000) return 0xe0 | (cp >> 12);
  return 0xf0 | (cp >> 18);
}

/** encoding/json's quoteChar. */
function quoteChar(b: number): string {
  if (b === 39) return `'\\''`;
  if (b === 34) return `'"'`;
  return `'${quoteRune(b, '"')}'`;
}
