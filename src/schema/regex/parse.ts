/**
 * A parser for Go's regexp syntax (RE2, regexp/syntax with the Perl flags that
 * regexp.Compile uses), following Go's parse loop so that invalid patterns fail with
 * Go's error texts, e.g. "error parsing regexp: missing argument to repetition
 * operator: `+`". The result is a small syntax tree for the linear-time matcher.
 */
import { ANY, ANY_NOT_NL, single, type CharSet } from './charset.js';
import { parseClass, parseEscape, parsePerlClassEscape, parseUnicodeClass } from './classes.js';
import { ERR, RegexSyntaxError, runeAt } from './syntax.js';

export { RegexSyntaxError } from './syntax.js';

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
          {
            const c = parseClass(s, t, (this.flags & FOLD_CASE) !== 0);
            this.pushSet(c.set);
            t = c.rest;
          }
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
      const u = parseUnicodeClass(s, t, (this.flags & FOLD_CASE) !== 0);
      if (u) {
        this.pushSet(u.set);
        return u.rest;
      }
    }
    const perl = parsePerlClassEscape(s, t, (this.flags & FOLD_CASE) !== 0);
    if (perl) {
      this.pushSet(perl.set);
      return perl.rest;
    }
    const { r, rest } = parseEscape(s, t);
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

/** Whether nested repetition counts multiply to at most n copies of the innermost expression. */
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
