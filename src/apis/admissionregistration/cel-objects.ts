/**
 * What MutatingAdmissionPolicy's CEL has beyond the rest: object construction (`Object{spec:
 * Object.spec{replicas: 3}}`, `JSONPatch{op: "add", path: "/x", value: 1}`, optional fields `?f: v`) and
 * `jsonpatch.escapeKey`. The interpreter has no message literals, so the source is rewritten before it is
 * compiled: a construction becomes a call `_kapiObject("<type>", {<fields>})` whose value is a
 * ConstructedObject (a class no map literal or object field can forge), read back as JSON with its type
 * names checked against their field paths, as upstream's CheckTypeNamesMatchFieldPathNames does.
 *
 * The rewrite is linear in the source: brackets are matched once, comments blanked once, and a construction
 * that cannot be rewritten is copied as it is for the compiler to report.
 */
import { isRecord } from '../../util/json-object.js';
import { treeOperation } from '../../util/tree-operation.js';

/** cel-go's limit on an expression's length (code points). */
export const MAX_EXPRESSION_CODE_POINTS = 100_000;
/** Constructions nested deeper than this are left to the compiler (which refuses them). */
const MAX_NESTING = 64;
const KEYWORDS = new Set(['in', 'true', 'false', 'null', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);
const isIdentStart = (c: string | undefined) => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_');
const isIdent = (c: string | undefined) => isIdentStart(c) || (c !== undefined && c >= '0' && c <= '9');
const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v';

/** The function `jsonpatch.escapeKey` is renamed to, and the one constructions become. */
export const ESCAPE_KEY_FUNCTION = '_kapiJsonPatchEscapeKey';
export const CONSTRUCT_FUNCTION = '_kapiObject';
export const OPTIONAL_FIELD_FUNCTION = '_kapiOptionalField';

/** An optional field's value (`?f: v`): set when the optional has one. */
export class OptionalField {
  constructor(readonly optional: { hasValue(): boolean; value(): unknown } | undefined) {}
}

/** A value built by an object construction: its type name and its fields (optional fields without a value left out). */
export class ConstructedObject {
  readonly fields: Record<string, unknown> = {};
  constructor(
    readonly typeName: string,
    fields: Record<string, unknown>,
  ) {
    for (const [k, v] of Object.entries(fields)) {
      if (v instanceof OptionalField && !v.optional?.hasValue()) continue;
      Object.defineProperty(this.fields, k, { value: v instanceof OptionalField ? v.optional!.value() : v, enumerable: true, writable: true, configurable: true });
    }
  }
}

/** The index just past the string literal that starts at i (raw, triple-quoted and escaped forms). */
function stringEnd(src: string, i: number): number {
  const c = src[i];
  const raw = (src[i - 1] === 'r' || src[i - 1] === 'R') && !isIdent(src[i - 2]);
  const q = src.slice(i, i + 3) === c.repeat(3) ? c.repeat(3) : c;
  let j = i + q.length;
  while (j < src.length && !src.startsWith(q, j)) j += !raw && src[j] === '\\' ? 2 : 1;
  return Math.min(src.length, j + q.length);
}

/** The source with comments blanked (same length), and each bracket's partner (-1: none), in one pass. */
function scan(src: string): { text: string; partner: Int32Array; stringAt: Int32Array } {
  const partner = new Int32Array(src.length).fill(-1);
  // Where a string literal starting at i ends (0: none starts there).
  const stringAt = new Int32Array(src.length);
  const stack: number[] = [];
  let text = '';
  let from = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '"' || c === "'") {
      const end = stringEnd(src, i);
      stringAt[i] = end;
      i = end - 1;
    } else if (c === '/' && src[i + 1] === '/') {
      const nl = src.indexOf('\n', i);
      const end = nl < 0 ? src.length : nl;
      text += src.slice(from, i) + ' '.repeat(end - i);
      from = end;
      i = end - 1;
    } else if (c === '(' || c === '[' || c === '{') stack.push(i);
    else if (c === ')' || c === ']' || c === '}') {
      const open = stack.pop();
      if (open !== undefined) {
        partner[open] = i;
        partner[i] = open;
      }
    }
  }
  return { text: text + src.slice(from), partner, stringAt };
}

/**
 * The source with object constructions as calls and `jsonpatch.escapeKey` as a plain function. What cannot
 * be rewritten is left as it is, for the compiler to report.
 */
export function rewriteConstructions(source: string): string {
  const { text: src, partner, stringAt } = scan(source);
  const rewrite = (from: number, to: number, depth: number): string => {
    let out = '';
    // The last character written that is not a space: a `.` before an identifier makes it a field selection.
    let last = '';
    const emit = (s: string) => {
      out += s;
      for (let k = s.length - 1; k >= 0; k--) {
        if (!isSpace(s[k])) {
          last = s[k];
          break;
        }
      }
    };
    let i = from;
    while (i < to) {
      const c = src[i];
      if (stringAt[i] > 0) {
        emit(src.slice(i, stringAt[i]));
        i = stringAt[i];
        continue;
      }
      if (!isIdentStart(c) || isIdent(src[i - 1])) {
        emit(c);
        i++;
        continue;
      }
      // An identifier chain (a.b.c), then perhaps `{` (a construction) or `(` (a call).
      const names: string[] = [];
      let j = i;
      for (;;) {
        let k = j;
        while (k < to && isIdent(src[k])) k++;
        names.push(src.slice(j, k));
        j = k;
        let dot = j;
        while (dot < to && isSpace(src[dot])) dot++;
        if (src[dot] !== '.') break;
        let next = dot + 1;
        while (next < to && isSpace(src[next])) next++;
        if (!isIdentStart(src[next])) break;
        j = next;
      }
      let after = j;
      while (after < to && isSpace(src[after])) after++;
      const selected = last === '.';
      if (src[after] === '{' && !selected && !KEYWORDS.has(names[0])) {
        const end = partner[after];
        const body = end > after && end < to ? construction(after + 1, end, names.join('.'), depth) : undefined;
        // Rewritten, or copied whole: never scanned again.
        emit(body ?? src.slice(i, end > after && end < to ? end + 1 : to));
        i = end > after && end < to ? end + 1 : to;
        continue;
      }
      if (!selected && names.length === 2 && names[0] === 'jsonpatch' && names[1] === 'escapeKey' && src[after] === '(') emit(ESCAPE_KEY_FUNCTION);
      else emit(src.slice(i, j));
      i = j;
    }
    return out;
  };

  /** `<type>{f: v, ?g: w}` between from and to (the braces' insides) as a call, or undefined. */
  const construction = (from: number, to: number, typeName: string, depth: number): string | undefined => {
    if (depth >= MAX_NESTING) return undefined;
    const entries: string[] = [];
    let start = from;
    const field = (a: number, b: number): boolean => {
      let p = a;
      while (p < b && isSpace(src[p])) p++;
      if (p === b) return true; // an empty part (a trailing comma, or no fields)
      const optional = src[p] === '?';
      if (optional) p++;
      if (!isIdentStart(src[p])) return false;
      let q = p;
      while (q < b && isIdent(src[q])) q++;
      const name = src.slice(p, q);
      while (q < b && isSpace(src[q])) q++;
      if (src[q] !== ':') return false;
      // `?f: v` (v an optional): the field is set only when v has a value (OptionalField, unwrapped on construction).
      const value = rewrite(q + 1, b, depth + 1);
      entries.push(`${JSON.stringify(name)}: ${optional ? `${OPTIONAL_FIELD_FUNCTION}(${value})` : value}`);
      return true;
    };
    for (let i = from; i < to; i++) {
      if (stringAt[i] > 0) i = stringAt[i] - 1;
      else if ((src[i] === '(' || src[i] === '[' || src[i] === '{') && partner[i] > i) i = partner[i];
      else if (src[i] === ',') {
        if (!field(start, i)) return undefined;
        start = i + 1;
      }
    }
    if (!field(start, to)) return undefined;
    return `${CONSTRUCT_FUNCTION}(${JSON.stringify(typeName)}, {${entries.join(', ')}})`;
  };

  return rewrite(0, src.length, 0);
}

/** The length limit, in cel-go's words (undefined: within it). */
export function lengthError(expression: string): string | undefined {
  if (expression.length <= MAX_EXPRESSION_CODE_POINTS) return undefined;
  const size = [...expression].length;
  return size > MAX_EXPRESSION_CODE_POINTS ? `ERROR: <input>:-1:0: expression code point size exceeds limit: size: ${size}, limit ${MAX_EXPRESSION_CODE_POINTS}` : undefined;
}

/** `jsonpatch.escapeKey`: `~` and `/` as JSON Pointer escapes them. */
export function escapeKey(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The type name of a constructed object (undefined: not one). */
export function constructedType(v: unknown): string | undefined {
  return v instanceof ConstructedObject ? v.typeName : undefined;
}

/**
 * A CEL result as JSON: ints as numbers, constructed objects as plain maps. With `path`, every constructed
 * object's type name must be its field path from the root (`Object.spec.template`), as upstream checks.
 * Results hold what the object held, nested as deep (10,000 levels): no recursion.
 */
export function jsonOf(v: unknown, path?: string[], mismatches?: string[]): unknown {
  if (path && mismatches) typeNameMismatches(v, path, mismatches);
  return jsonValue(v, undefined, undefined);
}

const jsonValue = treeOperation<unknown, undefined, undefined, unknown>((v, _y, _z, sub, depth) => {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map((x) => sub(x, undefined, undefined, depth + 1));
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v instanceof Date) return v.toISOString().replace('.000Z', 'Z');
  const fields = v instanceof Map ? Object.fromEntries(v) : v instanceof ConstructedObject ? v.fields : v;
  if (!isRecord(fields)) return typeof fields === 'object' && fields !== null ? String(fields) : fields;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(fields)) {
    if (x === undefined) continue;
    Object.defineProperty(out, k, { value: sub(x, undefined, undefined, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}, undefined);

/** jsonOf's check of type names, in the order it meets constructed objects (depth first). */
function typeNameMismatches(root: unknown, rootPath: string[], mismatches: string[]): void {
  const stack: { v: unknown; path: string[] }[] = [{ v: root, path: rootPath }];
  while (stack.length > 0) {
    const { v, path } = stack.pop() as (typeof stack)[number];
    // The values below, in order, and the path each is under; pushed in reverse.
    const below: { v: unknown; path: string[] }[] = [];
    if (Array.isArray(v)) for (const x of v) below.push({ v: x, path });
    else if (v instanceof ConstructedObject) {
      if (v.typeName !== path.join('.')) {
        mismatches.push(`unexpected type name ${JSON.stringify(v.typeName)}, expected ${JSON.stringify(path.join('.'))}, which matches field name path from root Object type`);
      }
      for (const [k, x] of Object.entries(v.fields)) if (x !== undefined) below.push({ v: x, path: [...path, k] });
    } else if (!(v instanceof Uint8Array) && !(v instanceof Date)) {
      // Intermediate maps (and lists) are unnamed: their members keep the path they are under.
      const fields = v instanceof Map ? Object.fromEntries(v) : v;
      if (isRecord(fields)) for (const x of Object.values(fields)) if (x !== undefined) below.push({ v: x, path });
    }
    for (let i = below.length - 1; i >= 0; i--) stack.push(below[i]);
  }
}
