/**
 * The escape and character class parts of Go's regexp parser: \x{..} and octal
 * escapes, [..] classes with ranges, [:alpha:], \pN / \p{Greek}, \d \s \w, with
 * Go's errors for invalid ones.
 */
import { FoldSet, NegSet, PERL_GROUPS, RangeSet, UnionSet, posixGroup, unicodeTable, type CharSet } from './charset.js';
import { ERR, RegexSyntaxError, runeAt } from './syntax.js';

const isAlnum = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

function unhex(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** A backslash escape at s[start] standing for one rune. */
export function parseEscape(s: string, start: number): { r: number; rest: number } {
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

export function parsePerlClassEscape(s: string, t: number, fold: boolean): { set: CharSet; rest: number } | undefined {
  const g = PERL_GROUPS[s.slice(t, t + 2)];
  if (!g) return undefined;
  return { set: group(g.set, g.neg, fold), rest: t + 2 };
}

function group(set: CharSet, neg: boolean, fold: boolean): CharSet {
  const s = fold ? new FoldSet(set) : set;
  return neg ? new NegSet(s) : s;
}

export function parseUnicodeClass(s: string, start: number, fold: boolean): { set: CharSet; rest: number } | undefined {
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
  return { set: group(tab.set, sign < 0, fold), rest: t };
}

/** A bracketed class at s[start] ('['): the set and the index after ']'. */
export function parseClass(s: string, start: number, fold: boolean): { set: CharSet; rest: number } {
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
        items.push(group(g.set, g.neg, fold));
        t = close + 2;
        continue;
      }
    }
    if (s[t] === '\\' && (s[t + 1] === 'p' || s[t + 1] === 'P')) {
      const u = parseUnicodeClass(s, t, fold);
      if (u) {
        items.push(u.set);
        t = u.rest;
        continue;
      }
    }
    const perl = s[t] === '\\' ? parsePerlClassEscape(s, t, fold) : undefined;
    if (perl) {
      items.push(perl.set);
      t = perl.rest;
      continue;
    }
    const rangeStart = t;
    let lo: number;
    [lo, t] = parseClassChar(s, t, start);
    let hi = lo;
    if (t + 1 < s.length && s[t] === '-' && s[t + 1] !== ']') {
      [hi, t] = parseClassChar(s, t + 1, start);
      if (hi < lo) throw new RegexSyntaxError(ERR.invalidCharRange, s.slice(rangeStart, t));
    }
    ranges.push(lo, hi);
  }
  t++; // ]
  let set: CharSet = new RangeSet(ranges);
  if (fold && ranges.length) set = new FoldSet(set);
  if (items.length) set = new UnionSet([set, ...items]);
  return { set: negated ? new NegSet(set) : set, rest: t };
}

function parseClassChar(s: string, t: number, classStart: number): [number, number] {
  if (t >= s.length) throw new RegexSyntaxError(ERR.missingBracket, s.slice(classStart));
  if (s[t] === '\\') {
    const { r, rest } = parseEscape(s, t);
    return [r, rest];
  }
  const [c, n] = runeAt(s, t);
  return [c, t + n];
}
