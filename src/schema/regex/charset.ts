/**
 * Character sets of the RE2 engine: code point ranges, Unicode property tables
 * (answered by the JS engine's \p{...} support), unions, complements and case
 * folding as Go's unicode.SimpleFold orbits define it. Membership is computed per
 * code point; the matcher caches the answers, so these need not be fast.
 */

export interface CharSet {
  has(cp: number): boolean;
}

export const MAX_RUNE = 0x10ffff;

export class RangeSet implements CharSet {
  /** Pairs lo, hi (inclusive), not necessarily sorted or disjoint. */
  constructor(readonly ranges: number[]) {}
  has(cp: number): boolean {
    const r = this.ranges;
    for (let i = 0; i < r.length; i += 2) if (cp >= r[i] && cp <= r[i + 1]) return true;
    return false;
  }
}

export class PropertySet implements CharSet {
  private readonly cache = new Map<number, boolean>();
  constructor(private readonly re: RegExp) {}
  has(cp: number): boolean {
    let v = this.cache.get(cp);
    if (v === undefined) {
      v = this.re.test(String.fromCodePoint(cp));
      if (this.cache.size < 4096) this.cache.set(cp, v);
    }
    return v;
  }
}

export class UnionSet implements CharSet {
  constructor(readonly items: CharSet[]) {}
  has(cp: number): boolean {
    for (const s of this.items) if (s.has(cp)) return true;
    return false;
  }
}

export class NegSet implements CharSet {
  constructor(readonly inner: CharSet) {}
  has(cp: number): boolean {
    return !this.inner.has(cp);
  }
}

/** A set closed under simple case folding: cp is in it when any fold-equivalent of cp is in inner. */
export class FoldSet implements CharSet {
  constructor(readonly inner: CharSet) {}
  has(cp: number): boolean {
    if (this.inner.has(cp)) return true;
    for (const f of foldOrbit(cp)) if (f !== cp && this.inner.has(f)) return true;
    return false;
  }
}

export const ANY: CharSet = { has: () => true };
export const ANY_NOT_NL: CharSet = { has: (cp) => cp !== 10 };

export function single(cp: number, fold: boolean): CharSet {
  if (fold && foldOrbit(cp).length > 1) return new RangeSet(foldOrbit(cp).flatMap((c) => [c, c]));
  return new RangeSet([cp, cp]);
}

// ---- simple case folding ----

// Go's minFold..maxFold: the code points that take part in case folding at all.
const MIN_FOLD = 0x41;
const MAX_FOLD = 0x1e943;
let orbits: Map<number, number[]> | undefined;

/**
 * The simple case folding orbit of cp, sorted, cp included. Built on first use:
 * candidates come from toLowerCase/toUpperCase and are kept only when the JS engine's
 * case-insensitive Unicode matching (simple case folding) agrees they are equivalent.
 */
export function foldOrbit(cp: number): number[] {
  if (cp < MIN_FOLD || cp > MAX_FOLD) return [cp];
  orbits ??= buildOrbits();
  return orbits.get(cp) ?? [cp];
}

function buildOrbits(): Map<number, number[]> {
  const parent = new Map<number, number>();
  const find = (x: number): number => {
    let r = x;
    while (parent.has(r) && parent.get(r) !== r) r = parent.get(r) as number;
    parent.set(x, r);
    return r;
  };
  const union = (a: number, b: number): void => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(ra, rb);
  };
  const single = (s: string): number | undefined => {
    const cp = s.codePointAt(0);
    return cp !== undefined && s.length === String.fromCodePoint(cp).length ? cp : undefined;
  };
  for (let cp = MIN_FOLD; cp <= MAX_FOLD; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const s = String.fromCodePoint(cp);
    for (const t of [s.toLowerCase(), s.toUpperCase()]) {
      const other = single(t);
      if (other === undefined || other === cp) continue;
      const re = new RegExp('^' + escapeForRegExp(s) + '$', 'iu');
      if (re.test(t)) union(cp, other);
    }
  }
  const groups = new Map<number, number[]>();
  for (const cp of parent.keys()) {
    const root = find(cp);
    let g = groups.get(root);
    if (!g) groups.set(root, (g = []));
    g.push(cp);
  }
  const out = new Map<number, number[]>();
  for (const g of groups.values()) {
    if (g.length < 2) continue;
    g.sort((a, b) => a - b);
    for (const cp of g) out.set(cp, g);
  }
  return out;
}

function escapeForRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

// ---- Perl, POSIX and Unicode groups ----

const r = (...pairs: number[]): RangeSet => new RangeSet(pairs);
const c = (ch: string): number => ch.charCodeAt(0);

export const PERL_GROUPS: Record<string, { neg: boolean; set: CharSet }> = {
  '\\d': { neg: false, set: r(c('0'), c('9')) },
  '\\D': { neg: true, set: r(c('0'), c('9')) },
  '\\s': { neg: false, set: r(9, 10, 12, 13, 32, 32) },
  '\\S': { neg: true, set: r(9, 10, 12, 13, 32, 32) },
  '\\w': { neg: false, set: r(c('0'), c('9'), c('A'), c('Z'), c('_'), c('_'), c('a'), c('z')) },
  '\\W': { neg: true, set: r(c('0'), c('9'), c('A'), c('Z'), c('_'), c('_'), c('a'), c('z')) },
};

const POSIX: Record<string, RangeSet> = {
  alnum: r(c('0'), c('9'), c('A'), c('Z'), c('a'), c('z')),
  alpha: r(c('A'), c('Z'), c('a'), c('z')),
  ascii: r(0, 0x7f),
  blank: r(9, 9, 32, 32),
  cntrl: r(0, 0x1f, 0x7f, 0x7f),
  digit: r(c('0'), c('9')),
  graph: r(c('!'), c('~')),
  lower: r(c('a'), c('z')),
  print: r(c(' '), c('~')),
  punct: r(c('!'), c('/'), c(':'), c('@'), c('['), c('`'), c('{'), c('~')),
  space: r(9, 13, 32, 32),
  upper: r(c('A'), c('Z')),
  word: r(c('0'), c('9'), c('A'), c('Z'), c('a'), c('z'), c('_'), c('_')),
  xdigit: r(c('0'), c('9'), c('A'), c('F'), c('a'), c('f')),
};

/** `[:alpha:]` / `[:^alpha:]` → the group, or undefined for an unknown name. */
export function posixGroup(name: string): { neg: boolean; set: CharSet } | undefined {
  const m = /^\[:(\^?)([a-z]+):\]$/.exec(name);
  if (!m || !Object.prototype.hasOwnProperty.call(POSIX, m[2])) return undefined;
  return { neg: m[1] === '^', set: POSIX[m[2]] };
}

const CATEGORIES = new Set([
  'C', 'Cc', 'Cf', 'Co', 'Cs', 'L', 'Ll', 'Lm', 'Lo', 'Lt', 'Lu', 'M', 'Mc', 'Me', 'Mn', 'N', 'Nd', 'Nl', 'No',
  'P', 'Pc', 'Pd', 'Pe', 'Pf', 'Pi', 'Po', 'Ps', 'S', 'Sc', 'Sk', 'Sm', 'So', 'Z', 'Zl', 'Zp', 'Zs', 'Cn',
]);

// Unicode's General_Category aliases (Go's unicode.CategoryAliases), keyed by canonical name.
const CATEGORY_ALIASES: Record<string, string> = {};
for (const [alias, gc] of Object.entries({
  Cased_Letter: 'LC', Close_Punctuation: 'Pe', Combining_Mark: 'M', Connector_Punctuation: 'Pc', Control: 'Cc', cntrl: 'Cc',
  Currency_Symbol: 'Sc', Dash_Punctuation: 'Pd', Decimal_Number: 'Nd', digit: 'Nd', Enclosing_Mark: 'Me', Final_Punctuation: 'Pf',
  Format: 'Cf', Initial_Punctuation: 'Pi', Letter: 'L', Letter_Number: 'Nl', Line_Separator: 'Zl', Lowercase_Letter: 'Ll',
  Mark: 'M', Math_Symbol: 'Sm', Modifier_Letter: 'Lm', Modifier_Symbol: 'Sk', Nonspacing_Mark: 'Mn', Number: 'N',
  Open_Punctuation: 'Ps', Other: 'C', Other_Letter: 'Lo', Other_Number: 'No', Other_Punctuation: 'Po', Other_Symbol: 'So',
  Paragraph_Separator: 'Zp', Private_Use: 'Co', Punctuation: 'P', punct: 'P', Separator: 'Z', Space_Separator: 'Zs',
  Spacing_Mark: 'Mc', Surrogate: 'Cs', Symbol: 'S', Titlecase_Letter: 'Lt', Unassigned: 'Cn', Uppercase_Letter: 'Lu',
})) {
  CATEGORY_ALIASES[canonicalName(alias)] = gc;
}

const SCRIPTS = (
  'Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali Bhaiksuki Bopomofo Brahmi ' +
  'Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian Chakma Cham Cherokee Chorasmian Common Coptic Cuneiform ' +
  'Cypriot Cypro_Minoan Cyrillic Deseret Devanagari Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan Elymaic Ethiopic ' +
  'Georgian Glagolitic Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Han Hangul Hanifi_Rohingya Hanunoo Hatran Hebrew ' +
  'Hiragana Imperial_Aramaic Inherited Inscriptional_Pahlavi Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kawi ' +
  'Kayah_Li Kharoshthi Khitan_Small_Script Khmer Khojki Khudawadi Lao Latin Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian ' +
  'Mahajani Makasar Malayalam Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui Meroitic_Cursive ' +
  'Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa Nko Nushu ' +
  'Nyiakeng_Puachue_Hmong Ogham Ol_Chiki Old_Hungarian Old_Italic Old_North_Arabian Old_Permic Old_Persian Old_Sogdian ' +
  'Old_South_Arabian Old_Turkic Old_Uyghur Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa Phoenician ' +
  'Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham SignWriting Sinhala Sogdian Sora_Sompeng Soyombo ' +
  'Sundanese Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Takri Tamil Tangsa Tangut Telugu Thaana Thai ' +
  'Tibetan Tifinagh Tirhuta Toto Ugaritic Vai Vithkuqi Wancho Warang_Citi Yezidi Yi Zanabazar_Square'
).split(' ');
const SCRIPT_BY_CANONICAL = new Map<string, string>();
for (const s of SCRIPTS) {
  SCRIPT_BY_CANONICAL.set(s, s);
  SCRIPT_BY_CANONICAL.set(canonicalName(s), s);
}

/** Go's canonicalName: leading upper case, the rest lower case, no underscores, spaces or hyphens. */
export function canonicalName(name: string): string {
  let out = '';
  let first = true;
  for (const ch of name) {
    if (ch === '_' || ch === '-' || ch === ' ') continue;
    if (first) {
      out += ch >= 'a' && ch <= 'z' ? ch.toUpperCase() : ch;
      first = false;
    } else out += ch >= 'A' && ch <= 'Z' ? ch.toLowerCase() : ch;
  }
  return out;
}

const tableCache = new Map<string, { set: CharSet; neg: boolean } | null>();

/** Go's unicodeTable: the set for a \p{name}, or undefined when the name is unknown. */
export function unicodeTable(name: string): { set: CharSet; neg: boolean } | undefined {
  let hit = tableCache.get(name);
  if (hit === undefined) {
    hit = lookupTable(name) ?? null;
    if (tableCache.size < 1024) tableCache.set(name, hit);
  }
  return hit ?? undefined;
}

function lookupTable(name: string): { set: CharSet; neg: boolean } | undefined {
  const script = SCRIPT_BY_CANONICAL.get(name);
  if (script) return { set: new PropertySet(new RegExp(`^\\p{Script=${script}}$`, 'u')), neg: false };
  const canon = canonicalName(name);
  switch (canon) {
    case 'Any':
      return { set: ANY, neg: false };
    case 'Assigned':
      return { set: new PropertySet(/^\p{Cn}$/u), neg: true };
    case 'Ascii':
      return { set: r(0, 0x7f), neg: false };
    case 'Lc':
      return { set: new PropertySet(/^\p{LC}$/u), neg: false };
  }
  const gc = CATEGORIES.has(canon) ? canon : CATEGORY_ALIASES[canon];
  if (gc) return { set: new PropertySet(new RegExp(`^\\p{${gc}}$`, 'u')), neg: false };
  const s = SCRIPT_BY_CANONICAL.get(canon);
  if (s) return { set: new PropertySet(new RegExp(`^\\p{Script=${s}}$`, 'u')), neg: false };
  return undefined;
}
