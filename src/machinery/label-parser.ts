/**
 * The lexer and parser of apimachinery's labels.Parse, with its grammar,
 * whitespace rules and error texts (`unable to parse requirement: ...`,
 * `found 'x', expected: ...`).
 */
import { aggregateMessage } from './field-errors.js';
import { compareGoStrings } from './go-text.js';
import { BINARY_OPERATORS, LabelSelectorError, newRequirement, validateLabelKey, type Operator, type Requirement } from './label-requirements.js';

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

/** The requirements of a selector string, in input order; throws LabelSelectorError. */
export function parseRequirements(s: string): Requirement[] {
  return new Parser(lex(s)).parse();
}
