/**
 * Scalar handling for the YAML emitter, after libyaml and go-yaml v2: how
 * numbers print, which quoting style a string needs (analyze_scalar), the
 * double-quoted escapes, and go-yaml's key order.
 */
import { formatGoFloat, isGoDigit, isGoLetter } from './go-text.js';
import { isBase60Float, resolveScalar, STR_TAG } from './yaml-resolve.js';

export type Style = 'plain' | 'single' | 'double' | 'literal';

const MAX_INT64 = 9223372036854775807n;
const MIN_INT64 = -9223372036854775808n;
const MAX_UINT64 = 18446744073709551615n;

/** A number as go-yaml prints what it read back from its JSON text (int, uint64 or float64). */
export function numberText(n: number | bigint): string {
  if (typeof n === 'number') {
    if (!Number.isFinite(n)) return 'null';
    if (!Number.isInteger(n) || Math.abs(n) >= 1e21) return formatGoFloat(n);
    n = BigInt(n);
  }
  if ((n >= MIN_INT64 && n <= MAX_INT64) || (n >= 0n && n <= MAX_UINT64)) return n.toString();
  return formatGoFloat(Number(n));
}

/** go-yaml's key order: digit runs compare as numbers, and other characters sort before letters. */
export function compareYamlKeys(a: string, b: string): number {
  // Keys are mostly ASCII: where they first differ in ASCII characters, the order is found
  // in place (the code point index of that spot may differ, but nothing below depends on it).
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i < n) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x < 0x80 && y < 0x80) return compareAsciiAt(a, b, i, x, y);
  } else if (n === 0 || !isHighSurrogate(a.charCodeAt(n - 1))) {
    // One is a prefix of the other.
    return a.length === b.length ? 0 : codePointCount(a) - codePointCount(b);
  }
  return compareCodePoints(a, b);
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isAsciiLetter = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isAsciiDigit = (c: number) => c >= 0x30 && c <= 0x39;

function codePointCount(s: string): number {
  let n = s.length;
  for (let i = 0; i + 1 < s.length; i++) {
    if (isHighSurrogate(s.charCodeAt(i)) && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      n--;
      i++;
    }
  }
  return n;
}

/** compareCodePoints at the first difference, `x` and `y` (both ASCII) at index i of a and b. */
function compareAsciiAt(a: string, b: string, i: number, x: number, y: number): number {
  const al = isAsciiLetter(x);
  const bl = isAsciiLetter(y);
  if (al && bl) return x < y ? -1 : 1;
  if (al || bl) return bl ? -1 : 1;
  if (!isAsciiDigit(x) && !isAsciiDigit(y)) return x < y ? -1 : 1;
  let an = 0n;
  let bn = 0n;
  if (x === 0x30 || y === 0x30) {
    for (let j = i - 1; j >= 0; j--) {
      const c = a.charCodeAt(j);
      if (c >= 0x80) return compareCodePoints(a, b); // maybe a digit of another script
      if (!isAsciiDigit(c)) break;
      if (c !== 0x30) {
        an = bn = 1n;
        break;
      }
    }
  }
  let ai = i;
  let bi = i;
  for (; ai < a.length && isAsciiDigit(a.charCodeAt(ai)); ai++) an = an * 10n + BigInt(a.charCodeAt(ai) - 48);
  for (; bi < b.length && isAsciiDigit(b.charCodeAt(bi)); bi++) bn = bn * 10n + BigInt(b.charCodeAt(bi) - 48);
  // A digit run may go on in other decimal digits (\p{Nd}): the general order decides then.
  if ((ai < a.length && a.charCodeAt(ai) >= 0x80) || (bi < b.length && b.charCodeAt(bi) >= 0x80)) return compareCodePoints(a, b);
  if (an !== bn) return an < bn ? -1 : 1;
  if (ai !== bi) return ai < bi ? -1 : 1;
  return x < y ? -1 : 1;
}

function compareCodePoints(a: string, b: string): number {
  const ar = [...a];
  const br = [...b];
  const isDigit = (c: string | undefined) => c !== undefined && isGoDigit(c);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = isGoLetter(ar[i]);
    const bl = isGoLetter(br[i]);
    if (al && bl) return cp(ar[i]) < cp(br[i]) ? -1 : 1;
    if (al || bl) return bl ? -1 : 1;
    let an = 0n;
    let bn = 0n;
    if (ar[i] === '0' || br[i] === '0') {
      for (let j = i - 1; j >= 0 && isDigit(ar[j]); j--) {
        if (ar[j] !== '0') {
          an = bn = 1n;
          break;
        }
      }
    }
    let ai = i;
    let bi = i;
    for (; ai < ar.length && isDigit(ar[ai]); ai++) an = an * 10n + BigInt(cp(ar[ai]) - 48);
    for (; bi < br.length && isDigit(br[bi]); bi++) bn = bn * 10n + BigInt(cp(br[bi]) - 48);
    if (an !== bn) return an < bn ? -1 : 1;
    if (ai !== bi) return ai < bi ? -1 : 1;
    return cp(ar[i]) < cp(br[i]) ? -1 : 1;
  }
  return ar.length - br.length;
}

export const cp = (c: string): number => c.codePointAt(0) ?? 0;

export const isBreak = (c: number) => c === 0x0a || c === 0x0d || c === 0x85 || c === 0x2028 || c === 0x2029;
/** libyaml's is_printable (note: nothing outside the BMP, and no tab). */
export const isPrintable = (c: number) =>
  c === 0x0a || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff);

interface Analysis {
  multiline: boolean;
  flowPlain: boolean;
  blockPlain: boolean;
  singleQuoted: boolean;
  block: boolean;
}

/** ASCII characters by code: an indicator as a scalar's first character, and flow indicators anywhere. */
const FIRST_INDICATORS = asciiSet('#,[]{}&*!|>\'"%@`');
const FLOW_INDICATORS = asciiSet(',?[]{}');

function asciiSet(chars: string): boolean[] {
  const set = new Array<boolean>(128).fill(false);
  for (const c of chars) set[c.charCodeAt(0)] = true;
  return set;
}

/** yaml_emitter_analyze_scalar: which styles can carry this text. */
export function analyze(value: string): Analysis {
  if (value.length === 0) return { multiline: false, flowPlain: false, blockPlain: true, singleQuoted: true, block: false };
  const chars = [...value].map(cp);
  let blockIndicators = false;
  let flowIndicators = false;
  let lineBreaks = false;
  let special = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  if (value.startsWith('---') || value.startsWith('...')) blockIndicators = flowIndicators = true;
  let precededByWhitespace = true;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    const next = chars[i + 1];
    const followedByWhitespace = next === undefined || next === 0x20 || next === 0x09;
    if (c < 0x80) {
      if (i === 0) {
        if (FIRST_INDICATORS[c]) flowIndicators = blockIndicators = true;
        else if (c === 0x3f /* ? */ || c === 0x3a /* : */) {
          flowIndicators = true;
          if (followedByWhitespace) blockIndicators = true;
        } else if (c === 0x2d /* - */ && followedByWhitespace) flowIndicators = blockIndicators = true;
      } else if (FLOW_INDICATORS[c]) flowIndicators = true;
      else if (c === 0x3a /* : */) {
        flowIndicators = true;
        if (followedByWhitespace) blockIndicators = true;
      } else if (c === 0x23 /* # */ && precededByWhitespace) flowIndicators = blockIndicators = true;
    }

    if (!isPrintable(c)) special = true;
    if (c === 0x20) {
      if (i === 0) leadingSpace = true;
      if (i === chars.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i === chars.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = c === 0x20 || c === 0x09 || isBreak(c) || c === 0;
  }
  const a: Analysis = { multiline: lineBreaks, flowPlain: true, blockPlain: true, singleQuoted: true, block: true };
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) a.flowPlain = a.blockPlain = false;
  if (trailingSpace) a.block = false;
  if (breakSpace) a.flowPlain = a.blockPlain = a.singleQuoted = false;
  if (spaceBreak || special) a.flowPlain = a.blockPlain = a.singleQuoted = a.block = false;
  if (lineBreaks) a.flowPlain = a.blockPlain = false;
  if (flowIndicators) a.flowPlain = false;
  if (blockIndicators) a.blockPlain = false;
  return a;
}

/** The style go-yaml's encoder asks for: literal for multi-line text, plain unless it would read back as another type. */
export function requestedStringStyle(s: string): Style {
  if (s.includes('\n')) return 'literal';
  return resolveScalar('', s).tag === STR_TAG && !isBase60Float(s) ? 'plain' : 'double';
}

const ESCAPES: Record<number, string> = {
  0x00: '0',
  0x07: 'a',
  0x08: 'b',
  0x09: 't',
  0x0a: 'n',
  0x0b: 'v',
  0x0c: 'f',
  0x0d: 'r',
  0x1b: 'e',
  0x22: '"',
  0x5c: '\\',
  0x85: 'N',
  0xa0: '_',
  0x2028: 'L',
  0x2029: 'P',
};

export function escapeChar(c: number): string {
  if (ESCAPES[c] !== undefined) return ESCAPES[c];
  const hex = c.toString(16).toUpperCase();
  if (c <= 0xff) return 'x' + hex.padStart(2, '0');
  if (c <= 0xffff) return 'u' + hex.padStart(4, '0');
  return 'U' + hex.padStart(8, '0');
}
