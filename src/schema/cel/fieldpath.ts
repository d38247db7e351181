/**
 * ValidFieldPath: the `fieldPath` of an x-kubernetes-validations rule, a JSON path
 * of `.name` and `['name']` steps relative to the rule's node, checked against the
 * schema and normalized to a field path (map keys as `[key]`).
 */
import type { Structural } from '../types.js';

function unescapeSingleQuote(s: string): string {
  const map: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '\\': '\\' };
  return s.replace(/\\(.)/g, (m, c: string) => {
    if (!(c in map)) throw new Error(`invalid string literal: invalid escape char ${m}`);
    return map[c];
  });
}

function tokenize(p: string): string[] {
  const toks: string[] = [];
  let i = 0;
  while (i < p.length) {
    if (p[i] === "'") {
      let j = i + 1;
      while (j < p.length && !(p[j] === "'" && p[j - 1] !== '\\')) j++;
      toks.push(p.slice(i, Math.min(j + 1, p.length)));
      i = j + 1;
      continue;
    }
    if (p[i] === '.' || p[i] === '[' || p[i] === ']') {
      toks.push(p[i++]);
      continue;
    }
    let j = i;
    while (j < p.length && !'.[]'.includes(p[j]) && p[j] !== "'") j++;
    if (j === i) j++;
    toks.push(p.slice(i, j));
    i = j;
  }
  return toks;
}

/** The normalized path, or an Error with upstream's text. */
export function validFieldPath(jsonPath: string, root: Structural, allowArrayNotation = true): { path: string; schema: Structural } | Error {
  let s: Structural | undefined = root;
  let path = '';
  const append = (name: string, named: boolean): Error | undefined => {
    if (!named) {
      path = `${path}[${name}]`;
      s = s?.additionalProperties?.schema;
    } else {
      path = path === '' ? name : `${path}.${name}`;
      const next: Structural | undefined = s?.properties?.get(name);
      if (!next) return new Error('does not refer to a valid field');
      s = next;
    }
    return undefined;
  };
  const toks = tokenize(jsonPath);
  for (let i = 0; i < toks.length; i++) {
    const tok = toks[i];
    const namedHere = (): boolean | Error => (s?.properties ? true : s?.additionalProperties ? false : new Error('does not refer to a valid field'));
    if (tok === '[') {
      if (!allowArrayNotation) return new Error('array notation is not allowed');
      if (++i >= toks.length) return new Error('unexpected end of JSON path');
      const t = toks[i];
      if (t.length < 2 || t[0] !== "'" || t[t.length - 1] !== "'") return new Error(`expected single quoted string but got ${t}`);
      let name: string;
      try {
        name = unescapeSingleQuote(t.slice(1, -1));
      } catch (e) {
        return e as Error;
      }
      const named = namedHere();
      if (named instanceof Error) return named;
      const err = append(name, named);
      if (err) return err;
      if (++i >= toks.length) return new Error('unexpected end of JSON path');
      if (toks[i] !== ']') return new Error(`expected ] but got ${toks[i]}`);
    } else if (tok === '.') {
      if (++i >= toks.length) return new Error('unexpected end of JSON path');
      const named = namedHere();
      if (named instanceof Error) return named;
      const err = append(toks[i], named);
      if (err) return err;
    } else return new Error(`expected [ or . but got: ${tok}`);
  }
  return { path, schema: s as Structural };
}
