/**
 * What MutatingAdmissionPolicy's CEL has beyond the rest: object construction (`Object{spec:
 * Object.spec{replicas: 3}}`, `JSONPatch{op: "add", path: "/x", value: 1}`) and `jsonpatch.escapeKey`.
 * The interpreter has no message literals, so the source is rewritten before it is compiled: a
 * construction becomes a map literal that carries its type name under a key no object field can have,
 * and the result is read back as JSON, the type names checked against their field paths as upstream's
 * CheckTypeNamesMatchFieldPathNames does.
 */
import { isRecord } from '../../util/json-object.js';

/** The key a constructed object keeps its type name under (a map key no Kubernetes field can be). */
const TYPE_KEY = '@kapi/type';
const KEYWORDS = new Set(['in', 'true', 'false', 'null', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);
const IDENT_START = /[A-Za-z_]/;
const IDENT = /[A-Za-z0-9_]/;
/** The function `jsonpatch.escapeKey` is renamed to. */
export const ESCAPE_KEY_FUNCTION = '_kapiJsonPatchEscapeKey';

/** The index just past the string literal that starts at i (raw, triple-quoted and escaped forms). */
function stringEnd(src: string, i: number): number {
  const c = src[i];
  const raw = /[rR]/.test(src[i - 1] ?? '') && !IDENT.test(src[i - 2] ?? '');
  const q = src.slice(i, i + 3) === c.repeat(3) ? c.repeat(3) : c;
  let j = i + q.length;
  while (j < src.length && src.slice(j, j + q.length) !== q) j += !raw && src[j] === '\\' ? 2 : 1;
  return Math.min(src.length, j + q.length);
}

/** The index of the bracket closing the one at `open`, or -1 (strings and comments skipped). */
function closing(src: string, open: number): number {
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    const c = src[i];
    if (c === '"' || c === "'") {
      i = stringEnd(src, i) - 1;
    } else if (c === '/' && src[i + 1] === '/') {
      const nl = src.indexOf('\n', i);
      if (nl < 0) return -1;
      i = nl;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (--depth === 0) return i;
    }
  }
  return -1;
}

/** The parts of `src` between top-level commas. */
function splitTopLevel(src: string): string[] {
  const parts: string[] = [];
  let from = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '"' || c === "'") i = stringEnd(src, i) - 1;
    else if (c === '(' || c === '[' || c === '{') {
      const end = closing(src, i);
      if (end < 0) break;
      i = end;
    } else if (c === ',') {
      parts.push(src.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(src.slice(from));
  return parts;
}

/**
 * The source with object constructions as map literals and `jsonpatch.escapeKey` as a plain function.
 * What cannot be rewritten is left as it is, for the compiler to report.
 */
export function rewriteConstructions(src: string, depth = 0): string {
  if (depth > 64) return src;
  let out = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '"' || c === "'") {
      const j = stringEnd(src, i);
      out += src.slice(i, j);
      i = j;
      continue;
    }
    if (c === '/' && src[i + 1] === '/') {
      const nl = src.indexOf('\n', i);
      const j = nl < 0 ? src.length : nl;
      out += src.slice(i, j);
      i = j;
      continue;
    }
    if (!IDENT_START.test(c) || IDENT.test(src[i - 1] ?? '') || /\d/.test(c)) {
      out += c;
      i++;
      continue;
    }
    // An identifier chain (a.b.c), then perhaps `{` (a construction) or `(` (a call).
    const names: string[] = [];
    let j = i;
    for (;;) {
      let k = j;
      while (k < src.length && IDENT.test(src[k])) k++;
      names.push(src.slice(j, k));
      j = k;
      let dot = j;
      while (dot < src.length && /\s/.test(src[dot])) dot++;
      if (src[dot] !== '.') break;
      let next = dot + 1;
      while (next < src.length && /\s/.test(src[next])) next++;
      if (!IDENT_START.test(src[next] ?? '')) break;
      j = next;
    }
    let after = j;
    while (after < src.length && /\s/.test(src[after])) after++;
    const preceded = /\.\s*$/.test(out);
    if (src[after] === '{' && !preceded && !KEYWORDS.has(names[0])) {
      const end = closing(src, after);
      if (end > 0) {
        const fields = splitTopLevel(src.slice(after + 1, end)).filter((f) => f.trim() !== '');
        const entries = [`${JSON.stringify(TYPE_KEY)}: ${JSON.stringify(names.join('.'))}`];
        let ok = true;
        for (const f of fields) {
          const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*:/.exec(f);
          if (!m) {
            ok = false;
            break;
          }
          entries.push(`${JSON.stringify(m[1])}: ${rewriteConstructions(f.slice(m[0].length), depth + 1)}`);
        }
        if (ok) {
          out += `{${entries.join(', ')}}`;
          i = end + 1;
          continue;
        }
      }
    }
    const chain = src.slice(i, j);
    if (!preceded && names.length === 2 && names[0] === 'jsonpatch' && names[1] === 'escapeKey' && src[after] === '(') out += ESCAPE_KEY_FUNCTION;
    else out += chain;
    i = j;
  }
  return out;
}

/** `jsonpatch.escapeKey`: `~` and `/` as JSON Pointer escapes them. */
export function escapeKey(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The type name of a constructed object (undefined: not one). */
export function constructedType(v: unknown): string | undefined {
  return isRecord(v) && typeof v[TYPE_KEY] === 'string' ? v[TYPE_KEY] : undefined;
}

/**
 * A CEL result as JSON: ints as numbers, constructed objects as plain maps. With `path`, every constructed
 * object's type name must be its field path from the root (`Object.spec.template`), as upstream checks.
 */
export function jsonOf(v: unknown, path?: string[], mismatches?: string[]): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map((x) => jsonOf(x, path, mismatches));
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v instanceof Date) return v.toISOString().replace('.000Z', 'Z');
  if (v instanceof Map) return jsonOf(Object.fromEntries(v), path, mismatches);
  if (!isRecord(v)) return typeof v === 'object' && v !== null ? String(v) : v;
  const type = constructedType(v);
  if (type !== undefined && path && mismatches && type !== path.join('.')) {
    mismatches.push(`unexpected type name ${JSON.stringify(type)}, expected ${JSON.stringify(path.join('.'))}, which matches field name path from root Object type`);
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === TYPE_KEY) continue;
    const value = jsonOf(x, path && type !== undefined ? [...path, k] : path, mismatches);
    Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
