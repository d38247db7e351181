/**
 * go-yaml v2's scalar resolution (resolve.go), the YAML 1.1 rules kubectl and
 * the apiserver read YAML with: yes/no/on/off are booleans, 0777 is octal,
 * 0x/0o/0b prefixes and `_` separators are numbers, timestamps stay strings.
 */

export const TAG_PREFIX = 'tag:yaml.org,2002:';
export const STR_TAG = TAG_PREFIX + 'str';
export const BOOL_TAG = TAG_PREFIX + 'bool';
export const INT_TAG = TAG_PREFIX + 'int';
export const FLOAT_TAG = TAG_PREFIX + 'float';
export const NULL_TAG = TAG_PREFIX + 'null';
export const TIMESTAMP_TAG = TAG_PREFIX + 'timestamp';
export const BINARY_TAG = TAG_PREFIX + 'binary';
export const MERGE_TAG = TAG_PREFIX + 'merge';

export type Resolved =
  | { tag: typeof STR_TAG | typeof TIMESTAMP_TAG; value: string }
  | { tag: typeof BOOL_TAG; value: boolean }
  | { tag: typeof NULL_TAG; value: null }
  /** Integers: int64 or, above its range, uint64. */
  | { tag: typeof INT_TAG; value: bigint }
  | { tag: typeof FLOAT_TAG; value: number }
  /** Tags resolve() leaves alone (!!binary, local tags): the text as is. */
  | { tag: string; value: string; other: true };

const MAP: Record<string, Resolved> = {};
const add = (r: Resolved, words: string[]) => words.forEach((w) => (MAP[w] = r));
add({ tag: BOOL_TAG, value: true }, ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
add({ tag: BOOL_TAG, value: false }, ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);
add({ tag: NULL_TAG, value: null }, ['', '~', 'null', 'Null', 'NULL']);
add({ tag: FLOAT_TAG, value: NaN }, ['.nan', '.NaN', '.NAN']);
add({ tag: FLOAT_TAG, value: Infinity }, ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']);
add({ tag: FLOAT_TAG, value: -Infinity }, ['-.inf', '-.Inf', '-.INF']);

const RESOLVABLE = new Set(['', STR_TAG, BOOL_TAG, INT_TAG, FLOAT_TAG, NULL_TAG, TIMESTAMP_TAG]);
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const MAX_INT64 = 9223372036854775807n;
const MIN_INT64 = -9223372036854775808n;
const MAX_UINT64 = 18446744073709551615n;

export class YamlResolveError extends Error {}

/** Resolves a scalar's text under `tag` ('' for an untagged plain scalar). */
export function resolveScalar(tag: string, text: string): Resolved {
  if (!RESOLVABLE.has(tag)) return { tag, value: text, other: true };
  const r = resolveUnchecked(tag, text);
  if (tag === '' || tag === r.tag || tag === STR_TAG) return r;
  if (tag === FLOAT_TAG && r.tag === INT_TAG) return { tag: FLOAT_TAG, value: Number(r.value as bigint) };
  throw new YamlResolveError(`yaml: cannot decode ${shortTag(r.tag)} \`${text}\` as a ${shortTag(tag)}`);
}

function shortTag(tag: string): string {
  return tag.startsWith(TAG_PREFIX) ? '!!' + tag.slice(TAG_PREFIX.length) : tag;
}

function hint(text: string): string {
  if (text === '') return 'N';
  const c = text[0];
  if (c === '+' || c === '-') return 'S';
  if (c >= '0' && c <= '9') return 'D';
  if ('yYnNtTfFoO~'.includes(c)) return 'M';
  return c === '.' ? '.' : '';
}

function resolveUnchecked(tag: string, text: string): Resolved {
  const h = hint(text);
  if (h && tag !== STR_TAG) {
    if (Object.prototype.hasOwnProperty.call(MAP, text)) return MAP[text];
    if (h === '.') {
      if (/^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(text)) return { tag: FLOAT_TAG, value: Number(text) };
    } else if (h === 'D' || h === 'S') {
      if ((tag === '' || tag === TIMESTAMP_TAG) && isTimestamp(text)) return { tag: TIMESTAMP_TAG, value: text };
      const plain = text.replaceAll('_', '');
      const int = parseGoInt(plain);
      if (int !== undefined) return { tag: INT_TAG, value: int };
      if (YAML_STYLE_FLOAT.test(plain)) return { tag: FLOAT_TAG, value: Number(plain) };
      // A leading "-0b" is parsed by hand (ParseInt with base 0 takes "-0b1" already).
      if (plain.startsWith('-0b') && /^[01]+$/.test(plain.slice(3))) {
        const n = -BigInt('0b' + plain.slice(3));
        if (n >= MIN_INT64) return { tag: INT_TAG, value: n };
      }
    }
  }
  return { tag: STR_TAG, value: text };
}

/** strconv.ParseInt(s, 0, 64), falling back to ParseUint(s, 0, 64) above the int64 range. */
function parseGoInt(s: string): bigint | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) return undefined;
  let body = m[2].toLowerCase();
  if (/^0[0-7]+$/.test(body)) body = '0o' + body.slice(1); // a leading 0 means octal
  const n = (m[1] === '-' ? -1n : 1n) * BigInt(body);
  if (n >= MIN_INT64 && n <= MAX_INT64) return n;
  // ParseUint accepts no sign at all.
  if (m[1] === '' && n <= MAX_UINT64) return n;
  return undefined;
}

const TIMESTAMP_FORMATS = [
  /^(\d{4})-(\d{1,2})-(\d{1,2})[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  /^(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d+)?$/,
  /^(\d{4})-(\d{1,2})-(\d{1,2})$/,
];

/** go-yaml's parseTimestamp (time.Parse with its four layouts), as a yes/no answer. */
function isTimestamp(s: string): boolean {
  for (const re of TIMESTAMP_FORMATS) {
    const m = re.exec(s);
    if (!m) continue;
    const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) continue;
    if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59)) continue;
    return true;
  }
  return false;
}

const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;

/** Strings go-yaml quotes on output because YAML 1.1 readers take them as sexagesimal numbers. */
export function isBase60Float(s: string): boolean {
  if (s === '' || !/^[-+0-9]/.test(s) || !s.includes(':')) return false;
  return BASE60_FLOAT.test(s);
}
