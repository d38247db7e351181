/**
 * Field selectors with apimachinery's fields.ParseSelector syntax and error
 * texts: comma-separated `field=value`, `field==value`, `field!=value` terms,
 * values escaped with `\,` `\=` `\\`.
 */
import { compareGoStrings } from './go-text.js';

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  /** True when the selector does not restrict anything. */
  readonly empty: boolean;
  /** `get` returns the object's value for a field name (undefined reads as ""). */
  matches(get: (field: string) => string | undefined): boolean;
  /** The value an `=` term requires for `field`, if any (RequiresExactMatch). */
  requiresExactMatch(field: string): string | undefined;
  toString(): string;
}

export class FieldSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldSelectorError';
  }
}

class Selector implements FieldSelector {
  constructor(readonly requirements: readonly FieldRequirement[]) {}

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(get: (field: string) => string | undefined): boolean {
    return this.requirements.every((r) => ((get(r.field) ?? '') === r.value) === (r.operator === '='));
  }

  requiresExactMatch(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.operator === '=')?.value;
  }

  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(',');
  }
}

/** fields.EscapeValue */
export function escapeFieldValue(s: string): string {
  return s.replace(/[\\,=]/g, (c) => '\\' + c);
}

/** fields.UnescapeValue */
export function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') throw new FieldSelectorError(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      inSlash = false;
    } else if (c === '\\') inSlash = true;
    // Go prints the rune with %v, i.e. as its number.
    else if (c === ',' || c === '=') throw new FieldSelectorError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    else out += c;
  }
  if (inSlash) throw new FieldSelectorError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Terms split at unescaped commas; escaped ones stay (with their backslash) in the term. */
function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

const TERM_OPERATORS = ['!=', '==', '='] as const;

/** The first operator occurrence splits the term; the field part has no escaping. */
function splitTerm(term: string): { lhs: string; op: (typeof TERM_OPERATORS)[number]; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

/** fields.ParseSelector: throws FieldSelectorError with upstream's message on bad input. */
export function parseFieldSelector(selector: string): FieldSelector {
  const parts = splitTerms(selector).sort(compareGoStrings);
  const reqs: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const t = splitTerm(part);
    if (!t) throw new FieldSelectorError(`invalid selector: '${selector}'; can't understand '${part}'`);
    const value = unescapeFieldValue(t.rhs);
    // A term with empty field and value (e.g. "=") selects everything and is dropped.
    if (t.lhs === '' && value === '') continue;
    reqs.push({ field: t.lhs, operator: t.op === '!=' ? '!=' : '=', value });
  }
  return new Selector(reqs);
}

/** A selector requiring exactly these field values (fields.SelectorFromSet). */
export function fieldSelectorFromSet(set: Record<string, string>): FieldSelector {
  return new Selector(Object.entries(set).map(([f, value]) => ({ field: f, operator: '=', value })));
}

export function everythingFields(): FieldSelector {
  return new Selector([]);
}
