/**
 * Label selectors with apimachinery's labels.Parse grammar, semantics and
 * error texts, plus metav1.LabelSelector conversion (LabelSelectorAsSelector)
 * and validation (ValidateLabelSelector).
 */
import { aggregateMessage, childPath, field, indexPath, type FieldError } from './field-errors.js';
import { compareGoStrings, goQuote } from './go-text.js';
import { isQualifiedName, isValidLabelValue } from './validation.js';

export type Operator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

export type Labels = Record<string, string> | undefined | null;

export interface LabelSelector {
  readonly requirements: readonly Requirement[];
  /** True when the selector does not restrict anything. */
  readonly empty: boolean;
  matches(labels: Labels): boolean;
  toString(): string;
}

export class LabelSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LabelSelectorError';
  }
}

const BINARY_OPERATORS = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];
const ALL_OPERATORS = [...BINARY_OPERATORS, 'exists', '!'];

/**
 * labels.NewRequirement: validates key, operator and values, throwing the aggregated
 * field errors as upstream does (`key: Invalid value: ...`).
 */
export function newRequirement(key: string, operator: Operator, values: string[], path = ''): Requirement {
  const errs: FieldError[] = [];
  const keyErr = validateLabelKey(key, childPath(path, 'key'));
  if (keyErr) errs.push(keyErr);
  const valuePath = childPath(path, 'values');
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0) errs.push(field.invalid(valuePath, values, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) errs.push(field.invalid(valuePath, values, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) errs.push(field.invalid(valuePath, values, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) errs.push(field.invalid(valuePath, values, "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(field.invalid(indexPath(valuePath, i), v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
    default:
      errs.push(field.notSupported(childPath(path, 'operator'), operator, ALL_OPERATORS));
  }
  values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length) errs.push(field.invalid(`${indexPath(valuePath, i)}[${key}]`, v, msgs.join('; ')));
  });
  if (errs.length) throw new LabelSelectorError(aggregateMessage(errs));
  return { key, operator, values };
}

function validateLabelKey(key: string, path: string): FieldError | undefined {
  const msgs = isQualifiedName(key);
  return msgs.length ? field.invalid(path, key, msgs.join('; ')) : undefined;
}

/** strconv.ParseInt(s, 10, 64) */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n > 9223372036854775807n || n < -9223372036854775808n ? undefined : n;
}

function requirementMatches(r: Requirement, labels: Labels): boolean {
  const has = labels != null && Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return has && r.values.includes(value as string);
    case 'notin':
    case '!=':
      return !has || !r.values.includes(value as string);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || r.values.length !== 1) return false;
      const l = parseInt64(value as string);
      const v = parseInt64(r.values[0]);
      if (l === undefined || v === undefined) return false;
      return r.operator === 'gt' ? l > v : l < v;
    }
  }
}

function requirementString(r: Requirement): string {
  if (r.operator === 'exists') return r.key;
  if (r.operator === '!') return '!' + r.key;
  const op = { in: ' in ', notin: ' notin ', '=': '=', '==': '==', '!=': '!=', gt: '>', lt: '<' }[r.operator];
  const values = r.values.length === 1 ? r.values[0] : [...r.values].sort(compareGoStrings).join(',');
  return r.operator === 'in' || r.operator === 'notin' ? `${r.key}${op}(${values})` : `${r.key}${op}${values}`;
}

class Selector implements LabelSelector {
  readonly requirements: readonly Requirement[];

  constructor(requirements: Requirement[]) {
    // Stable sort by key, as upstream sorts requirements for a deterministic form.
    this.requirements = [...requirements].sort((a, b) => compareGoStrings(a.key, b.key));
  }

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(labels: Labels): boolean {
    return this.requirements.every((r) => requirementMatches(r, labels));
  }

  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
}

const NOTHING: LabelSelector = {
  requirements: [],
  empty: false,
  matches: () => false,
  toString: () => '',
};

export function everything(): LabelSelector {
  return new Selector([]);
}

export function nothing(): LabelSelector {
  return NOTHING;
}

/** A selector requiring exactly these labels (labels.SelectorFromSet). */
export function selectorFromSet(set: Record<string, string> | undefined): LabelSelector {
  return new Selector(Object.entries(set ?? {}).map(([key, v]) => ({ key, operator: '=', values: [v] })));
}

// ---- labels.Parse ----

const enum Tok {
  Error,
  End,
  ClosedPar,
  Comma,
  DoesNotExist,
  DoubleEquals,
  Equals,
  GreaterThan,
  Identifier,
  In,
  LessThan,
  NotEquals,
  NotIn,
  OpenPar,
}

const STRING_TO_TOKEN = new Map<string, Tok>(Object.entries({
  ')': Tok.ClosedPar,
  ',': Tok.Comma,
  '!': Tok.DoesNotExist,
  '==': Tok.DoubleEquals,
  '=': Tok.Equals,
  '>': Tok.GreaterThan,
  in: Tok.In,
  '<': Tok.LessThan,
  '!=': Tok.NotEquals,
  notin: Tok.NotIn,
  '(': Tok.OpenPar,
}));

interface Item {
  tok: Tok;
  lit: string;
}

const isWhitespace = (c: string) => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string) => '=!(),><'.includes(c) && c !== '';

/**
 * Splits the selector into tokens like the Go lexer, which reads a NUL byte as end of
 * input: at a token start it ends the selector, inside a token it ends that token.
 */
function lex(s: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos])) pos++;
    if (pos >= s.length || s[pos] === '\0') {
      items.push({ tok: Tok.End, lit: '' });
      return items;
    }
    if (isSpecial(s[pos])) {
      // The longest run of special characters that still forms a known token.
      let buf = '';
      let last: Item | undefined;
      while (pos < s.length && isSpecial(s[pos])) {
        buf += s[pos];
        const t = STRING_TO_TOKEN.get(buf);
        if (t !== undefined) last = { tok: t, lit: buf };
        else if (last) break;
        pos++;
      }
      if (s[pos] === '\0') pos++;
      items.push(last ?? { tok: Tok.Error, lit: `error expected: keyword found '${buf}'` });
    } else {
      const start = pos;
      while (pos < s.length && s[pos] !== '\0' && !isSpecial(s[pos]) && !isWhitespace(s[pos])) pos++;
      const word = s.slice(start, pos);
      if (s[pos] === '\0') pos++;
      const t = STRING_TO_TOKEN.get(word);
      items.push({ tok: t ?? Tok.Identifier, lit: word });
    }
  }
}

class Parser {
  private pos = 0;

  constructor(private readonly items: Item[]) {}

  /** In value context the keywords `in`/`notin` are plain identifiers. */
  private lookahead(values: boolean): Item {
    const it = this.items[this.pos];
    return values && (it.tok === Tok.In || it.tok === Tok.NotIn) ? { tok: Tok.Identifier, lit: it.lit } : it;
  }

  private consume(values: boolean): Item {
    const it = this.lookahead(values);
    this.pos++;
    return it;
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(true);
      if (tok === Tok.End) return reqs;
      if (tok !== Tok.Identifier && tok !== Tok.DoesNotExist) throw new LabelSelectorError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      try {
        reqs.push(this.parseRequirement());
      } catch (e) {
        if (e instanceof LabelSelectorError) throw new LabelSelectorError(`unable to parse requirement: ${e.message}`);
        throw e;
      }
      const next = this.consume(true);
      if (next.tok === Tok.End) return reqs;
      if (next.tok !== Tok.Comma) throw new LabelSelectorError(`found '${next.lit}', expected: ',' or 'end of string'`);
      const after = this.lookahead(true);
      if (after.tok !== Tok.Identifier && after.tok !== Tok.DoesNotExist) throw new LabelSelectorError(`found '${after.lit}', expected: identifier after ','`);
    }
  }

  private parseRequirement(): Requirement {
    let { tok, lit } = this.consume(true);
    let operator: Operator | undefined;
    if (tok === Tok.DoesNotExist) {
      operator = '!';
      ({ tok, lit } = this.consume(true));
    }
    if (tok !== Tok.Identifier) throw new LabelSelectorError(`found '${lit}', expected: identifier`);
    const key = lit;
    // The key alone is validated with the parser's (nil) path.
    const keyErr = validateLabelKey(key, '<nil>');
    if (keyErr) throw new LabelSelectorError(aggregateMessage([keyErr]));
    const next = this.lookahead(true).tok;
    if (next === Tok.End || next === Tok.Comma) {
      return newRequirement(key, operator ?? 'exists', []);
    }
    if (operator === '!') return newRequirement(key, '!', []);
    operator = this.parseOperator();
    const values = operator === 'in' || operator === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, operator, [...values].sort(compareGoStrings));
  }

  private parseOperator(): Operator {
    const { tok, lit } = this.consume(false);
    switch (tok) {
      case Tok.In:
        return 'in';
      case Tok.Equals:
        return '=';
      case Tok.DoubleEquals:
        return '==';
      case Tok.GreaterThan:
        return 'gt';
      case Tok.LessThan:
        return 'lt';
      case Tok.NotIn:
        return 'notin';
      case Tok.NotEquals:
        return '!=';
      default:
        throw new LabelSelectorError(`found '${lit}', expected: ${BINARY_OPERATORS.join(', ')}`);
    }
  }

  private parseValues(): Set<string> {
    const open = this.consume(true);
    if (open.tok !== Tok.OpenPar) throw new LabelSelectorError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead(true);
    if (tok === Tok.Identifier || tok === Tok.Comma) {
      const s = this.parseIdentifiersList();
      if (this.consume(true).tok !== Tok.ClosedPar) throw new LabelSelectorError(`found '${lit}', expected: ')'`);
      return s;
    }
    if (tok === Tok.ClosedPar) {
      this.consume(true);
      return new Set(['']);
    }
    throw new LabelSelectorError(`found '${lit}', expected: ',', ')' or identifier`);
  }

  private parseIdentifiersList(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume(true);
      if (tok === Tok.Identifier) {
        s.add(lit);
        const next = this.lookahead(true);
        if (next.tok === Tok.Comma) continue;
        if (next.tok === Tok.ClosedPar) return s;
        throw new LabelSelectorError(`found '${next.lit}', expected: ',' or ')'`);
      } else if (tok === Tok.Comma) {
        // Empty values: "(,", ",)" and ",," all stand for "".
        if (s.size === 0) s.add('');
        const next = this.lookahead(true).tok;
        if (next === Tok.ClosedPar || next === Tok.Comma) s.add('');
        if (next === Tok.ClosedPar) return s;
      } else {
        throw new LabelSelectorError(`found '${lit}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): Set<string> {
    const next = this.lookahead(true).tok;
    if (next === Tok.End || next === Tok.Comma) return new Set(['']);
    const { tok, lit } = this.consume(true);
    if (tok === Tok.Identifier) return new Set([lit]);
    throw new LabelSelectorError(`found '${lit}', expected: identifier`);
  }
}

/** labels.Parse: throws LabelSelectorError with upstream's message on bad input. */
export function parseLabelSelector(s: string): LabelSelector {
  return new Selector(new Parser(lex(s)).parse());
}

// ---- metav1.LabelSelector ----

export interface LabelSelectorRequirementSpec {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirementSpec[];
}

const METAV1_OPERATORS: Record<string, Operator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * metav1.LabelSelectorAsSelector: null/undefined selects nothing, an empty selector
 * everything. Throws LabelSelectorError with upstream's message for bad content.
 */
export function selectorFromLabelSelector(sel: LabelSelectorSpec | null | undefined): LabelSelector {
  if (sel == null) return NOTHING;
  const matchLabels = Object.entries(sel.matchLabels ?? {});
  const exprs = sel.matchExpressions ?? [];
  if (matchLabels.length + exprs.length === 0) return everything();
  const reqs: Requirement[] = [];
  for (const [k, v] of matchLabels) reqs.push(newRequirement(k, '=', [v]));
  for (const e of exprs) {
    const op = Object.prototype.hasOwnProperty.call(METAV1_OPERATORS, e.operator) ? METAV1_OPERATORS[e.operator] : undefined;
    if (!op) throw new LabelSelectorError(`${goQuote(String(e.operator))} is not a valid label selector operator`);
    reqs.push(newRequirement(e.key, op, [...(e.values ?? [])]));
  }
  return new Selector(reqs);
}

/** metav1 validation.ValidateLabelSelector (with default options). */
export function validateLabelSelector(sel: LabelSelectorSpec | null | undefined, path: string): FieldError[] {
  if (sel == null) return [];
  const errs = validateLabels(sel.matchLabels, childPath(path, 'matchLabels'));
  (sel.matchExpressions ?? []).forEach((e, i) => {
    const p = indexPath(childPath(path, 'matchExpressions'), i);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) errs.push(field.required(childPath(p, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) errs.push(field.forbidden(childPath(p, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(field.invalid(childPath(p, 'operator'), e.operator, 'not a valid selector operator'));
    }
    errs.push(...validateLabelName(e.key, childPath(p, 'key')));
    values.forEach((v, j) => {
      for (const msg of isValidLabelValue(v)) errs.push(field.invalid(indexPath(childPath(p, 'values'), j), v, msg));
    });
  });
  return errs;
}

/** metav1 validation.ValidateLabelName */
export function validateLabelName(name: string, path: string): FieldError[] {
  return isQualifiedName(name).map((msg) => field.invalid(path, name, msg));
}

/** metav1 validation.ValidateLabels: keys are qualified names, values label values. */
export function validateLabels(labels: Record<string, string> | undefined | null, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    errs.push(...validateLabelName(k, path));
    for (const msg of isValidLabelValue(v)) errs.push(field.invalid(path, v, msg));
  }
  return errs;
}
