/**
 * Scalar handling for the YAML emitter, after libyaml and go-yaml v2: how
 * numbers print, which quoting style a string needs (analyze_scalar), the
 * double-quoted escapes, and go-yaml's key order.
 */
import { formatGoFloat } from './go-text.js';
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
  const ar = [...a];
  const br = [...b];
  const isLetter = (c: string) => /\p{L}/u.test(c);
  const isDigit = (c: string | undefined) => c !== undefined && /\p{Nd}/u.test(c);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = isLetter(ar[i]);
    const bl = isLetter(br[i]);
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
    const ch = String.fromCodePoint(c);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) flowIndicators = blockIndicators = true;
      else if (ch === '?' || ch === ':') {
        flowIndicators = true;
        if (followedByWhitespace) blockIndicators = true;
      } else if (ch === '-' && followedByWhitespace) flowIndicators = blockIndicators = true;
    } else if (',?[]{}'.includes(ch)) flowIndicators = true;
    else if (ch === ':') {
      flowIndicators = true;
      if (followedByWhitespace) blockIndicators = true;
    } else if (ch === '#' && precededByWhitespace) flowIndicators = blockIndicators = true;

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
