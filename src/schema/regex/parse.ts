/**
 * A parser for Go's regexp syntax (RE2, regexp/syntax with the Perl flags that
 * regexp.Compile uses), following Go's parse loop so that invalid patterns fail with
 * Go's error texts, e.g. "error parsing regexp: missing argument to repetition
 * operator: `+`". The result is a small syntax tree for the linear-time matcher.
 */
import { ANY, ANY_NOT_NL, FoldSet, NegSet, PERL_GROUPS, RangeSet, UnionSet, posixGroup, single, unicodeTable, type CharSet } from './charset.js';

export class RegexSyntaxError extends Error {
  constructor(
    readonly code: string,
    readonly expr: string,
  ) {
    super(`error parsing regexp: ${code}: \`${expr}\``);
  }
}

const ERR = {
  invalidCharRange: 'invalid character class range',
  invalidEscape: 'invalid escape sequence',
  invalidNamedCapture: 'invalid named capture',
  invalidPerlOp: 'invalid or unsupported Perl syntax',
  invalidRepeatOp: 'invalid nested repetition operator',
  invalidRepeatSize: 'invalid repeat count',
  missingBracket: 'missing closing ]',
  missingParen: 'missing closing )',
  missingRepeatArgument: 'missing argument to repetition operator',
  trailingBackslash: 'trailing backslash at end of expression',
  unexpectedParen: 'unexpected )',
  nestingDepth: 'expression nests too deeply',
  large: 'expression too large',
} as const;

/** Empty-width assertions. */
export const EMPTY_BEGIN_LINE = 1;
export const EMPTY_END_LINE = 2;
export const EMPTY_BEGIN_TEXT = 4;
export const EMPTY_END_TEXT = 8;
export const EMPTY_WORD_BOUNDARY = 16;
export const EMPTY_NO_WORD_BOUNDARY = 32;

export type Node =
  | { op: 'set'; set: CharSet; h: number }
  | { op: 'empty'; h: number }
  | { op: 'assert'; flag: number; h: number }
  | { op: 'group'; sub: Node; h: number }
  | { op: 'rep'; sub: Node; min: number; max: number; greedy: boolean; h: number }
  | { op: 'cat'; subs: Node[]; h: number }
  | { op: 'alt'; subs: Node[]; h: number };

type Pseudo = { op: 'lparen'; flags: number; capture: boolean; h: number } | { op: 'bar'; h: number };
type Item = Node | Pseudo;

const FOLD_CASE = 1;
const DOT_NL = 8;
const ONE_LINE = 16;
const NON_GREEDY = 32;

const MAX_REPEAT = 1000;
const MAX_HEIGHT = 1000;

const isPseudo = (x: Item): x is Pseudo => x.op === 'lparen' || x.op === 'bar';

/** Decodes the code point at s[i] (lone surrogates read as U+FFFD, as Go reads invalid UTF-8). */
function runeAt(s: string, i: number): [number, number] {
  const cp = s.codePointAt(i) as number;
  if (cp >= 0xd800 && cp <= 0xdfff) return [0xfffd, 1];
  return [cp, cp > 0xffff ? 2 : 1];
}

const isAlnum = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

function unhex(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

function heightOf(subs: Node[]): number {
  let h = 0;
  for (const s of subs) if (s.h > h) h = s.h;
  return h + 1;
}

/** Parses pattern with Go's regexp.Compile flags; throws RegexSyntaxError. */
export function parseRegex(pattern: string): Node {
  return new Parser(pattern).parse();
}

class Parser {
  private flags = ONE_LINE; // syntax.Perl: ClassNL | OneLine | PerlX | UnicodeGroups
  private readonly stack: Item[] = [];

  constructor(private readonly whole: string) {}

  parse(): Node {
    const s = this.whole;
    let t = 0; // index into s of the unparsed rest
    let lastRepeat = -1; // start of the last repetition operator, -1 if none
    while (t < s.length) {
      let repeat = -1;
      const ch = s[t];
      switch (ch) {
        case '(':
          if (s[t + 1] === '?') {
            t = this.parsePerlFlags(t);
            break;
          }
          this.push({ op: 'lparen', flags: this.flags, capture: true, h: 0 });
          t++;
          break;
        case '|':
          this.parseVerticalBar();
          t++;
          break;
        case ')':
          this.parseRightParen();
          t++;
          break;
        case '^':
          this.pushAssert(this.flags & ONE_LINE ? EMPTY_BEGIN_TEXT : EMPTY_BEGIN_LINE);
          t++;
          break;
        case '$':
          this.pushAssert(this.flags & ONE_LINE ? EMPTY_END_TEXT : EMPTY_END_LINE);
          t++;
          break;
        case '.':
          this.pushSet(this.flags & DOT_NL ? ANY : ANY_NOT_NL);
          t++;
          break;
        case '[':
          t = this.parseClass(t);
          break;
        case '*':
        case '+':
        case '?': {
          const before = t;
          const [min, max] = ch === '*' ? [0, -1] : ch === '+' ? [1, -1] : [0, 1];
          t = this.repeat(min, max, false, before, t + 1, lastRepeat);
          repeat = before;
          break;
        }
        case '{': {
          const before = t;
          const rep = parseRepeat(s, t);
          if (!rep) {
            this.literal(123);
            t++;
            break;
          }
          const { min, max, after } = rep;
          if (min < 0 || min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && min > max)) {
            throw new RegexSyntaxError(ERR.invalidRepeatSize, s.slice(before, after));
          }
          t = this.repeat(min, max, true, before, after, lastRepeat);
          repeat = before;
          break;
        }
        case '\\':
          t = this.parseBackslash(t);
          break;
        default: {
          const [c, n] = runeAt(s, t);
          this.literal(c);
          t += n;
        }
      }
      lastRepeat = repeat;
    }
    this.concat();
    if (this.swapVerticalBar()) this.stack.pop();
    this.alternate();
    if (this.stack.length !== 1) throw new RegexSyntaxError(ERR.missingParen, s);
    return this.stack[0] as Node;
  }

  private parseBackslash(t: number): number {
    const s = this.whole;
    if (t + 1 < s.length) {
      switch (s[t + 1]) {
        case 'A':
          this.pushAssert(EMPTY_BEGIN_TEXT);
          return t + 2;
        case 'b':
          this.pushAssert(EMPTY_WORD_BOUNDARY);
          return t + 2;
        case 'B':
          this.pushAssert(EMPTY_NO_WORD_BOUNDARY);
          return t + 2;
        case 'C':
          throw new RegexSyntaxError(ERR.invalidEscape, s.slice(t, t + 2));
        case 'Q': {
          const end = s.indexOf('\\E', t + 2);
          const lit = end < 0 ? s.slice(t + 2) : s.slice(t + 2, end);
          for (let i = 0; i < lit.length; ) {
            const [c, n] = runeAt(lit, i);
            this.literal(c);
            i += n;
          }
          return end < 0 ? s.length : end + 2;
        }
        case 'z':
          this.pushAssert(EMPTY_END_TEXT);
          return t + 2;
      }
    }
    if (s[t + 1] === 'p' || s[t + 1] === 'P') {
      const u = this.parseUnicodeClass(t);
      if (u) {
        this.pushSet(u.set);
        return u.rest;
      }
    }
    const perl = this.parsePerlClassEscape(t);
    if (perl) {
      this.pushSet(perl.set);
      return perl.rest;
    }
    const { r, rest } = this.parseEscape(t);
    this.literal(r);
    return rest;
  }

  // ---- stack ----

  private checkHeight(n: Item): void {
    if (n.h > MAX_HEIGHT) throw new RegexSyntaxError(ERR.nestingDepth, this.whole);
  }

  private push(n: Item): void {
    this.stack.push(n);
    this.checkHeight(n);
  }

  private literal(c: number): void {
    this.pushSet(single(c, (this.flags & FOLD_CASE) !== 0));
  }

  private pushSet(set: CharSet): void {
    this.push({ op: 'set', set, h: 1 });
  }

  private pushAssert(flag: number): void {
    this.push({ op: 'assert', flag, h: 1 });
  }

  private repeat(min: number, max: number, counted: boolean, before: number, after: number, lastRepeat: number): number {
    const s = this.whole;
    let flags = this.flags;
    if (s[after] === '?') {
      after++;
      flags ^= NON_GREEDY;
    }
    if (lastRepeat >= 0) throw new RegexSyntaxError(ERR.invalidRepeatOp, s.slice(lastRepeat, after));
    const n = this.stack.length;
    if (n === 0 || isPseudo(this.stack[n - 1])) throw new RegexSyntaxError(ERR.missingRepeatArgument, s.slice(before, after));
    const sub = this.stack[n - 1] as Node;
    const re: Node = { op: 'rep', sub, min, max, greedy: (flags & NON_GREEDY) === 0, h: sub.h + 1 };
    this.stack[n - 1] = re;
    this.checkHeight(re);
    if (counted && (min >= 2 || max >= 2) && !repeatIsValid(re, MAX_REPEAT)) {
      throw new RegexSyntaxError(ERR.invalidRepeatSize, s.slice(before, after));
    }
    return after;
  }

  private popToPseudo(): Node[] {
    let i = this.stack.length;
    while (i > 0 && !isPseudo(this.stack[i - 1])) i--;
    return this.stack.splice(i) as Node[];
  }

  private concat(): void {
    const subs = this.popToPseudo();
    if (subs.length === 0) this.push({ op: 'empty', h: 1 });
    else if (subs.length === 1) this.push(subs[0]);
    else this.push({ op: 'cat', subs, h: heightOf(subs) });
  }

  private alternate(): void {
    const subs = this.popToPseudo();
    if (subs.length === 1) this.push(subs[0]);
    else this.push({ op: 'alt', subs, h: heightOf(subs) });
  }

  private parseVerticalBar(): void {
    this.concat();
    if (!this.swapVerticalBar()) this.push({ op: 'bar', h: 0 });
  }

  private swapVerticalBar(): boolean {
    const n = this.stack.length;
    if (n >= 2 && this.stack[n - 2].op === 'bar') {
      const re1 = this.stack[n - 1];
      this.stack[n - 1] = this.stack[n - 2];
      this.stack[n - 2] = re1;
      return true;
    }
    return false;
  }

  private parseRightParen(): void {
    this.concat();
    if (this.swapVerticalBar()) this.stack.pop();
    this.alternate();
    const n = this.stack.length;
    if (n < 2) throw new RegexSyntaxError(ERR.unexpectedParen, this.whole);
    const re1 = this.stack.pop() as Node;
    const re2 = this.stack.pop() as Item;
    if (re2.op !== 'lparen') throw new RegexSyntaxError(ERR.unexpectedParen, this.whole);
    this.flags = re2.flags;
    this.push(re2.capture ? { op: 'group', sub: re1, h: re1.h + 1 } : re1);
  }

  // ---- groups and flags ----

  private parsePerlFlags(start: number): number {
    const s = this.whole;
    const startsWithP = s.length - start > 4 && s[start + 2] === 'P' && s[start + 3] === '<';
    const startsWithName = s.length - start > 3 && s[start + 2] === '<';
    if (startsWithP || startsWithName) {
      const exprStart = start + (startsWithP ? 4 : 3);
      const end = s.indexOf('>', start);
      if (end < 0) throw new RegexSyntaxError(ERR.invalidNamedCapture, s.slice(start));
      const name = s.slice(exprStart, end);
      if (!/^[A-Za-z0-9_]+$/.test(name)) throw new RegexSyntaxError(ERR.invalidNamedCapture, s.slice(start, end + 1));
      this.push({ op: 'lparen', flags: this.flags, capture: true, h: 0 });
      return end + 1;
    }
    let t = start + 2;
    let flags = this.flags;
    let sign = 1;
    let sawFlag = false;
    while (t < s.length) {
      const [c, n] = runeAt(s, t);
      t += n;
      switch (c) {
        case 0x69: // i
          flags |= FOLD_CASE;
          sawFlag = true;
          continue;
        case 0x6d: // m
          flags &= ~ONE_LINE;
          sawFlag = true;
          continue;
        case 0x73: // s
          flags |= DOT_NL;
          sawFlag = true;
          continue;
        case 0x55: // U
          flags |= NON_GREEDY;
          sawFlag = true;
          continue;
        case 0x2d: // -
          if (sign < 0) break;
          sign = -1;
          flags = ~flags;
          sawFlag = false;
          continue;
        case 0x3a: // :
        case 0x29: // )
          if (sign < 0) {
            if (!sawFlag) break;
            flags = ~flags;
          }
          if (c === 0x3a) this.push({ op: 'lparen', flags: this.flags, capture: false, h: 0 });
          this.flags = flags;
          return t;
      }
      break;
    }
    throw new RegexSyntaxError(ERR.invalidPerlOp, s.slice(start, t));
  }

  // ---- escapes and classes ----

  private parseEscape(start: number): { r: number; rest: number } {
    const s = this.whole;
    let t = start + 1;
    if (t >= s.length) throw new RegexSyntaxError(ERR.trailingBackslash, '');
    const [c, n] = runeAt(s, t);
    t += n;
    const fail = (): never => {
      throw new RegexSyntaxError(ERR.invalidEscape, s.slice(start, t));
    };
    if (c < 0x80 && !isAlnum(c)) return { r: c, rest: t };
    const isOct = (i: number): boolean => i < s.length && s[i] >= '0' && s[i] <= '7';
    if (c >= 0x31 && c <= 0x37 && !isOct(t)) return fail(); // \1..\7 alone is a backreference
    if (c >= 0x30 && c <= 0x37) {
      let r = c - 0x30;
      for (let i = 1; i < 3 && isOct(t); i++) r = r * 8 + (s.charCodeAt(t++) - 0x30);
      return { r, rest: t };
    }
    switch (c) {
      case 0x78: {
        // x
        if (t >= s.length) return fail();
        const [d, dn] = runeAt(s, t);
        t += dn;
        if (d === 0x7b) {
          let nhex = 0;
          let r = 0;
          for (;;) {
            if (t >= s.length) return fail();
            const [e, en] = runeAt(s, t);
            t += en;
            if (e === 0x7d) break;
            const v = unhex(e);
            if (v < 0) return fail();
            r = r * 16 + v;
            if (r > 0x10ffff) return fail();
            nhex++;
          }
          if (nhex === 0) return fail();
          return { r, rest: t };
        }
        const x = unhex(d);
        if (t >= s.length) return fail();
        const [e, en] = runeAt(s, t);
        t += en;
        const y = unhex(e);
        if (x < 0 || y < 0) return fail();
        return { r: x * 16 + y, rest: t };
      }
      case 0x61:
        return { r: 7, rest: t };
      case 0x66:
        return { r: 12, rest: t };
      case 0x6e:
        return { r: 10, rest: t };
      case 0x72:
        return { r: 13, rest: t };
      case 0x74:
        return { r: 9, rest: t };
      case 0x76:
        return { r: 11, rest: t };
    }
    return fail();
  }

  private parsePerlClassEscape(t: number): { set: CharSet; rest: number } | undefined {
    const g = PERL_GROUPS[this.whole.slice(t, t + 2)];
    if (!g) return undefined;
    return { set: this.group(g.set, g.neg), rest: t + 2 };
  }

  private group(set: CharSet, neg: boolean): CharSet {
    const s = this.flags & FOLD_CASE ? new FoldSet(set) : set;
    return neg ? new NegSet(s) : s;
  }

  private parseUnicodeClass(start: number): { set: CharSet; rest: number } | undefined {
    const s = this.whole;
    let sign = s[start + 1] === 'P' ? -1 : 1;
    let t = start + 2;
    if (t >= s.length) throw new RegexSyntaxError(ERR.invalidCharRange, s.slice(start));
    const [c, n] = runeAt(s, t);
    t += n;
    let seq: string;
    let name: string;
    if (c !== 0x7b) {
      seq = s.slice(start, t);
      name = seq.slice(2);
    } else {
      const end = s.indexOf('}', start);
      if (end < 0) throw new RegexSyntaxError(ERR.invalidCharRange, s.slice(start));
      seq = s.slice(start, end + 1);
      t = end + 1;
      name = s.slice(start + 3, end);
    }
    if (name.startsWith('^')) {
      sign = -sign;
      name = name.slice(1);
    }
    const tab = unicodeTable(name);
    if (!tab) throw new RegexSyntaxError(ERR.invalidCharRange, seq);
    if (tab.neg) sign = -sign;
    return { set: this.group(tab.set, sign < 0), rest: t };
  }

  private parseClass(start: number): number {
    const s = this.whole;
    let t = start + 1;
    let negated = false;
    if (s[t] === '^') {
      negated = true;
      t++;
    }
    const ranges: number[] = [];
    const items: CharSet[] = [];
    let first = true;
    while (t >= s.length || s[t] !== ']' || first) {
      first = false;
      if (s[t] === '[' && s[t + 1] === ':' && t + 2 < s.length) {
        const close = s.indexOf(':]', t + 2);
        if (close >= 0) {
          const name = s.slice(t, close + 2);
          const g = posixGroup(name);
          if (!g) throw new RegexSyntaxError(ERR.invalidCharRange, name);
          items.push(this.group(g.set, g.neg));
          t = close + 2;
          continue;
        }
      }
      if (s[t] === '\\' && (s[t + 1] === 'p' || s[t + 1] === 'P')) {
        const u = this.parseUnicodeClass(t);
        if (u) {
          items.push(u.set);
          t = u.rest;
          continue;
        }
      }
      const perl = s[t] === '\\' ? this.parsePerlClassEscape(t) : undefined;
      if (perl) {
        items.push(perl.set);
        t = perl.rest;
        continue;
      }
      const rangeStart = t;
      let lo: number;
      [lo, t] = this.parseClassChar(t, start);
      let hi = lo;
      if (t + 1 < s.length && s[t] === '-' && s[t + 1] !== ']') {
        [hi, t] = this.parseClassChar(t + 1, start);
        if (hi < lo) throw new RegexSyntaxError(ERR.invalidCharRange, s.slice(rangeStart, t));
      }
      ranges.push(lo, hi);
    }
    t++; // ]
    let set: CharSet = new RangeSet(ranges);
    if (this.flags & FOLD_CASE && ranges.length) set = new FoldSet(set);
    if (items.length) set = new UnionSet([set, ...items]);
    this.pushSet(negated ? new NegSet(set) : set);
    return t;
  }

  private parseClassChar(t: number, classStart: number): [number, number] {
    const s = this.whole;
    if (t >= s.length) throw new RegexSyntaxError(ERR.missingBracket, s.slice(classStart));
    if (s[t] === '\\') {
      const { r, rest } = this.parseEscape(t);
      return [r, rest];
    }
    const [c, n] = runeAt(s, t);
    return [c, t + n];
  }
}

function parseInt10(s: string, i: number): { n: number; rest: number } | undefined {
  if (i >= s.length || s[i] < '0' || s[i] > '9') return undefined;
  if (s[i] === '0' && i + 1 < s.length && s[i + 1] >= '0' && s[i + 1] <= '9') return undefined;
  let j = i;
  while (j < s.length && s[j] >= '0' && s[j] <= '9') j++;
  let n = 0;
  for (let k = i; k < j; k++) {
    if (n >= 1e8) {
      n = -1;
      break;
    }
    n = n * 10 + (s.charCodeAt(k) - 48);
  }
  return { n, rest: j };
}

/** {min}, {min,} (max -1) or {min,max}; undefined when the text is not a repetition. */
function parseRepeat(s: string, start: number): { min: number; max: number; after: number } | undefined {
  const a = parseInt10(s, start + 1);
  if (!a) return undefined;
  let min = a.n;
  let max: number;
  let t = a.rest;
  if (t >= s.length) return undefined;
  if (s[t] !== ',') max = min;
  else {
    t++;
    if (t >= s.length) return undefined;
    if (s[t] === '}') max = -1;
    else {
      const b = parseInt10(s, t);
      if (!b) return undefined;
      max = b.n;
      t = b.rest;
      if (max < 0) min = -1;
    }
  }
  if (t >= s.length || s[t] !== '}') return undefined;
  return { min, max, after: t + 1 };
}

function repeatIsValid(re: Node, n: number): boolean {
  if (re.op === 'rep') {
    let m = re.max;
    if (m === 0) return true;
    if (m < 0) m = re.min;
    if (m > n) return false;
    if (m > 0) n = Math.floor(n / m);
  }
  const subs = re.op === 'rep' || re.op === 'group' ? [re.sub] : re.op === 'cat' || re.op === 'alt' ? re.subs : [];
  return subs.every((sub) => repeatIsValid(sub, n));
}
