/**
 * The parser of kubectl-style JSONPath templates (client-go util/jsonpath):
 * text with `{...}` actions holding fields, indexes, slices, unions, filters,
 * recursive descent, quoted strings, numbers, booleans and the `range`/`end`
 * identifiers. Errors carry client-go's texts (`unterminated array`,
 * `unrecognized character in action: U+007B '{'`, ...).
 */
import { isGoDigit, isGoLetter, isGoPrint } from './go-text.js';

export type JsonPathNode =
  | ListNode
  | { type: 'text'; text: string }
  | { type: 'field'; name: string }
  | { type: 'identifier'; name: string }
  | { type: 'array'; params: [SliceParam, SliceParam, SliceParam] }
  | { type: 'filter'; left: ListNode; right: ListNode; operator: string }
  | { type: 'int'; value: number }
  | { type: 'float'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'wildcard' }
  | { type: 'recursive' }
  | { type: 'union'; branches: ListNode[] };

export interface ListNode {
  type: 'list';
  nodes: JsonPathNode[];
}

/** One of start, end and step of an index or slice; `derived` marks the end implied by a single index. */
export interface SliceParam {
  value: number;
  known: boolean;
  derived: boolean;
}

export class JsonPathSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPathSyntaxError';
  }
}

const EOF = -1;
const DICT_KEY = /^'([^']*)'$/;
const SLICE = /^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$/;
const FILTER = /^([^!<>=]+)([!<>=]+)(.+?)$/;

/** Parses a template such as `{.metadata.name}` or `name: {.spec.replicas}`; throws JsonPathSyntaxError. */
export function parseJsonPath(text: string): ListNode {
  return new Parser(text).parse();
}

/** parseAction: the template `{text}` parsed on its own, returning the action's list. */
function parseAction(text: string): ListNode {
  const root = parseJsonPath(`{${text}}`);
  return root.nodes[0] as ListNode;
}

class Parser {
  private readonly root: ListNode = { type: 'list', nodes: [] };
  private pos = 0;
  private start = 0;
  private width = 0;

  constructor(private readonly input: string) {}

  parse(): ListNode {
    this.parseText(this.root);
    return this.root;
  }

  private consumeText(): string {
    const value = this.input.slice(this.start, this.pos);
    this.start = this.pos;
    return value;
  }

  private next(): number {
    if (this.pos >= this.input.length) {
      this.width = 0;
      return EOF;
    }
    const cp = this.input.codePointAt(this.pos) as number;
    this.width = cp > 0xffff ? 2 : 1;
    this.pos += this.width;
    return cp;
  }

  private peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  private backup(): void {
    this.pos -= this.width;
  }

  private parseText(cur: ListNode): void {
    for (;;) {
      if (this.input.startsWith('{', this.pos)) {
        if (this.pos > this.start) cur.nodes.push({ type: 'text', text: this.consumeText() });
        this.parseLeftDelim(cur);
        return;
      }
      if (this.next() === EOF) break;
    }
    if (this.pos > this.start) cur.nodes.push({ type: 'text', text: this.consumeText() });
  }

  private parseLeftDelim(cur: ListNode): void {
    this.pos += 1;
    this.consumeText();
    const node: ListNode = { type: 'list', nodes: [] };
    cur.nodes.push(node);
    this.parseInsideAction(node);
  }

  // Each parse step returns to this loop rather than recursing as client-go does, so long
  // templates cannot exhaust the stack.
  private parseInsideAction(cur: ListNode): void {
    for (;;) {
      if (this.input.startsWith('}', this.pos)) {
        this.pos += 1;
        this.consumeText();
        this.parseText(this.root);
        return;
      }
      if (this.input.startsWith('[?(', this.pos)) {
        this.parseFilter(cur);
        continue;
      }
      if (this.input.startsWith('..', this.pos)) {
        this.parseRecursive(cur);
        continue;
      }
      const r = this.next();
      const ch = r === EOF ? '' : String.fromCodePoint(r);
      if (r === EOF || ch === '\r' || ch === '\n') throw new JsonPathSyntaxError('unclosed action');
      if (ch === ' ' || ch === '@' || ch === '$') this.consumeText();
      else if (ch === '[') this.parseArray(cur);
      else if (ch === '"' || ch === "'") this.parseQuote(cur, ch);
      else if (ch === '.') this.parseField(cur);
      else if (ch === '+' || ch === '-' || isGoDigit(ch)) {
        this.backup();
        this.parseNumber(cur);
      } else if (isAlphaNumeric(r)) {
        this.backup();
        this.parseIdentifier(cur);
      } else throw new JsonPathSyntaxError(`unrecognized character in action: ${goRuneU(r)}`);
    }
  }

  private parseIdentifier(cur: ListNode): void {
    while (!isTerminator(this.next()));
    this.backup();
    const value = this.consumeText();
    if (value === 'true' || value === 'false') cur.nodes.push({ type: 'bool', value: value === 'true' });
    else cur.nodes.push({ type: 'identifier', name: value });
  }

  private parseRecursive(cur: ListNode): void {
    const last = cur.nodes[cur.nodes.length - 1];
    if (last?.type === 'recursive') throw new JsonPathSyntaxError('invalid multiple recursive descent');
    this.pos += 2;
    this.consumeText();
    cur.nodes.push({ type: 'recursive' });
    if (isAlphaNumeric(this.peek())) this.parseField(cur);
  }

  private parseNumber(cur: ListNode): void {
    const first = this.peek();
    if (first === 0x2b || first === 0x2d) this.next();
    for (;;) {
      const r = this.next();
      if (r !== 0x2e && !(r !== EOF && isGoDigit(String.fromCodePoint(r)))) {
        this.backup();
        break;
      }
    }
    const value = this.consumeText();
    const int = goAtoi(value);
    if (int !== undefined) {
      cur.nodes.push({ type: 'int', value: int });
      return;
    }
    const float = goParseFloat(value);
    if (float === undefined) throw new JsonPathSyntaxError(`cannot parse number ${value}`);
    cur.nodes.push({ type: 'float', value: float });
  }

  private parseArray(cur: ListNode): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new JsonPathSyntaxError('unterminated array');
      if (r === 0x5d) break;
    }
    let text = this.consumeText();
    text = text.slice(1, -1);
    if (text === '*') text = ':';

    const parts = text.split(',');
    if (parts.length > 1) {
      const branches = parts.map((part) => parseAction(`[${trimSpaces(part)}]`));
      cur.nodes.push({ type: 'union', branches });
      return;
    }

    const key = DICT_KEY.exec(text);
    if (key) {
      cur.nodes.push(...parseAction(`.${key[1]}`).nodes);
      return;
    }

    const m = SLICE.exec(text);
    if (!m) throw new JsonPathSyntaxError(`invalid array index ${text}`);
    const params: SliceParam[] = [];
    for (let i = 0; i < 3; i++) {
      let v = m[i + 1] ?? '';
      if (v !== '') {
        if (i > 0) v = v.slice(1);
        if (i > 0 && v === '') params.push({ value: 0, known: false, derived: false });
        else {
          const n = goAtoi(v);
          if (n === undefined) throw new JsonPathSyntaxError(`array index ${v} is not a number`);
          params.push({ value: n, known: true, derived: false });
        }
      } else if (i === 1) params.push({ value: params[0].value + 1, known: true, derived: true });
      else params.push({ value: 0, known: false, derived: false });
    }
    cur.nodes.push({ type: 'array', params: params as [SliceParam, SliceParam, SliceParam] });
  }

  private parseFilter(cur: ListNode): void {
    this.pos += 3;
    this.consumeText();
    let begin = false;
    let end = false;
    let pair = '';
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new JsonPathSyntaxError('unterminated filter');
      const ch = String.fromCodePoint(r);
      if (ch === '"' || ch === "'") {
        if (!begin) {
          begin = true;
          pair = ch;
          continue;
        }
        if (this.input[this.pos - 2] !== '\\' && ch === pair) end = true;
      } else if (ch === ')' && begin === end) break;
    }
    if (this.next() !== 0x5d) throw new JsonPathSyntaxError('unclosed array expect ]');
    const text = this.consumeText().slice(0, -2);
    const m = FILTER.exec(text);
    if (!m) {
      cur.nodes.push({ type: 'filter', left: parseAction(text), right: { type: 'list', nodes: [] }, operator: 'exists' });
      return;
    }
    cur.nodes.push({ type: 'filter', left: parseAction(m[1]), right: parseAction(m[3]), operator: m[2] });
  }

  private parseQuote(cur: ListNode, quote: string): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new JsonPathSyntaxError('unterminated quoted string');
      if (String.fromCodePoint(r) === quote && this.input[this.pos - 2] !== '\\') break;
    }
    const value = this.consumeText();
    const s = unquoteExtend(value);
    if (s === undefined) throw new JsonPathSyntaxError(`unquote string ${value} error invalid syntax`);
    cur.nodes.push({ type: 'text', text: s });
  }

  private parseField(cur: ListNode): void {
    this.consumeText();
    for (;;) {
      const r = this.next();
      if (r === 0x5c) this.next();
      else if (isTerminator(r)) {
        this.backup();
        break;
      }
    }
    const value = this.consumeText();
    if (value === '*') cur.nodes.push({ type: 'wildcard' });
    else cur.nodes.push({ type: 'field', name: value.replaceAll('\\', '') });
  }
}

function isTerminator(r: number): boolean {
  switch (r) {
    case EOF:
    case 0x20: // space
    case 0x09: // tab
    case 0x0d:
    case 0x0a:
    case 0x2e: // .
    case 0x2c: // ,
    case 0x5b: // [
    case 0x5d: // ]
    case 0x24: // $
    case 0x40: // @
    case 0x7b: // {
    case 0x7d: // }
      return true;
  }
  return false;
}

function isAlphaNumeric(r: number): boolean {
  if (r === EOF) return false;
  const ch = String.fromCodePoint(r);
  return ch === '_' || isGoLetter(ch) || isGoDigit(ch);
}

function trimSpaces(s: string): string {
  return s.replace(/^ +| +$/g, '');
}

/** fmt's %#U: `U+0041 'A'`, or just `U+0009` for runes that are not printable. */
function goRuneU(r: number): string {
  const hex = 'U+' + r.toString(16).toUpperCase().padStart(4, '0');
  return isGoPrint(r) ? `${hex} '${String.fromCodePoint(r)}'` : hex;
}

/** strconv.Atoi for 64-bit int: optional sign and decimal digits, in range. */
function goAtoi(s: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  if (n > 9223372036854775807n || n < -9223372036854775808n) return undefined;
  return Number(n);
}

/** strconv.ParseFloat for the texts parseNumber can produce (signs, digits and dots). */
function goParseFloat(s: string): number | undefined {
  if (!/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

/** client-go's UnquoteExtend: strconv.Unquote that also takes single-quoted strings; undefined on bad syntax. */
export function unquoteExtend(s: string): string | undefined {
  if (s.length < 2) return undefined;
  const quote = s[0];
  if (quote !== s[s.length - 1] || (quote !== '"' && quote !== "'")) return undefined;
  let body = s.slice(1, -1);
  if (!body.includes('\\') && !body.includes(quote)) return body;
  let out = '';
  while (body.length > 0) {
    const r = unquoteChar(body, quote);
    if (!r) return undefined;
    out += r.value;
    body = body.slice(r.consumed);
  }
  return out;
}

/** strconv.UnquoteChar: one (possibly escaped) character of a quoted string. */
function unquoteChar(s: string, quote: string): { value: string; consumed: number } | undefined {
  const c = s[0];
  if (c === quote) return undefined;
  if (c !== '\\') {
    const cp = s.codePointAt(0) as number;
    return { value: String.fromCodePoint(cp), consumed: cp > 0xffff ? 2 : 1 };
  }
  if (s.length <= 1) return undefined;
  const e = s[1];
  const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };
  if (e in simple) return { value: simple[e], consumed: 2 };
  if (e === 'x' || e === 'u' || e === 'U') {
    const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
    const hex = s.slice(2, 2 + n);
    if (hex.length < n || !/^[0-9a-fA-F]+$/.test(hex)) return undefined;
    const v = parseInt(hex, 16);
    if (e === 'x') return { value: String.fromCharCode(v), consumed: 2 + n };
    if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return undefined;
    return { value: String.fromCodePoint(v), consumed: 2 + n };
  }
  if (e >= '0' && e <= '7') {
    const oct = s.slice(1, 4);
    if (!/^[0-7]{3}$/.test(oct)) return undefined;
    const v = parseInt(oct, 8);
    if (v > 255) return undefined;
    return { value: String.fromCharCode(v), consumed: 4 };
  }
  if (e === "'" || e === '"') {
    if (e !== quote) return undefined;
    return { value: e, consumed: 2 };
  }
  return undefined;
}
