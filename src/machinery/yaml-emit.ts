/**
 * YAML output as kubectl -o yaml / sigs.k8s.io/yaml.Marshal writes it: the
 * value goes through JSON, then go-yaml v2 (libyaml's emitter) prints it with
 * sorted keys, two-space indentation, sequences flush with their parent key,
 * `[]`/`{}` for empty collections, quoting only where a plain scalar would
 * read back as something else, and long lines folded at 80 columns.
 */
import { byteLength, formatGoFloat } from './go-text.js';
import { isBase60Float, resolveScalar, STR_TAG } from './yaml-resolve.js';

const BEST_WIDTH = 80;
const BEST_INDENT = 2;
const MAX_SIMPLE_KEY_LENGTH = 128;

type Style = 'plain' | 'single' | 'double' | 'literal';

interface Context {
  mapping: boolean;
  simpleKey: boolean;
}

export function stringifyYaml(value: unknown): string {
  const e = new Emitter();
  e.run(value);
  e.writeIndent(); // document end
  return e.out;
}

/** What JSON.stringify would serialize for v: toJSON() applied; undefined for values it drops. */
function jsonView(v: unknown): unknown {
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON: () => unknown }).toJSON();
  }
  return typeof v === 'function' || typeof v === 'symbol' ? undefined : v;
}

const MAX_INT64 = 9223372036854775807n;
const MIN_INT64 = -9223372036854775808n;
const MAX_UINT64 = 18446744073709551615n;

/** A number as go-yaml prints what it read back from its JSON text (int, uint64 or float64). */
function numberText(n: number | bigint): string {
  if (typeof n === 'number') {
    if (!Number.isFinite(n)) return 'null';
    if (!Number.isInteger(n) || Math.abs(n) >= 1e21) return formatGoFloat(n);
    n = BigInt(n);
  }
  if ((n >= MIN_INT64 && n <= MAX_INT64) || (n >= 0n && n <= MAX_UINT64)) return n.toString();
  return formatGoFloat(Number(n));
}

/** go-yaml's key order: numbers inside keys compare numerically, letters before other characters. */
export function compareYamlKeys(a: string, b: string): number {
  const ar = [...a];
  const br = [...b];
  const isLetter = (c: string) => /\p{L}/u.test(c);
  const isDigit = (c: string | undefined) => c !== undefined && /\p{Nd}/u.test(c);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = isLetter(ar[i]);
    const bl = isLetter(br[i]);
    if (al && bl) return cp(ar[i]) < cp(br[i]) ? -1 : 1;
    if (al || bl) return bl ? -1 : 1;
    let an = 0n;
    let bn = 0n;
    if (ar[i] === '0' || br[i] === '0') {
      for (let j = i - 1; j >= 0 && isDigit(ar[j]); j--) {
        if (ar[j] !== '0') {
          an = bn = 1n;
          break;
        }
      }
    }
    let ai = i;
    let bi = i;
    for (; ai < ar.length && isDigit(ar[ai]); ai++) an = an * 10n + BigInt(cp(ar[ai]) - 48);
    for (; bi < br.length && isDigit(br[bi]); bi++) bn = bn * 10n + BigInt(cp(br[bi]) - 48);
    if (an !== bn) return an < bn ? -1 : 1;
    if (ai !== bi) return ai < bi ? -1 : 1;
    return cp(ar[i]) < cp(br[i]) ? -1 : 1;
  }
  return ar.length - br.length;
}

const cp = (c: string): number => c.codePointAt(0) ?? 0;

const isBreak = (c: number) => c === 0x0a || c === 0x0d || c === 0x85 || c === 0x2028 || c === 0x2029;
/** libyaml's is_printable (note: nothing outside the BMP, and no tab). */
const isPrintable = (c: number) =>
  c === 0x0a || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff);

interface Analysis {
  multiline: boolean;
  flowPlain: boolean;
  blockPlain: boolean;
  singleQuoted: boolean;
  block: boolean;
}

/** yaml_emitter_analyze_scalar: which styles can carry this text. */
function analyze(value: string): Analysis {
  if (value.length === 0) return { multiline: false, flowPlain: false, blockPlain: true, singleQuoted: true, block: false };
  const chars = [...value].map(cp);
  let blockIndicators = false;
  let flowIndicators = false;
  let lineBreaks = false;
  let special = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  if (value.startsWith('---') || value.startsWith('...')) blockIndicators = flowIndicators = true;
  let precededByWhitespace = true;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    const next = chars[i + 1];
    const followedByWhitespace = next === undefined || next === 0x20 || next === 0x09;
    const ch = String.fromCodePoint(c);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) flowIndicators = blockIndicators = true;
      else if (ch === '?' || ch === ':') {
        flowIndicators = true;
        if (followedByWhitespace) blockIndicators = true;
      } else if (ch === '-' && followedByWhitespace) flowIndicators = blockIndicators = true;
    } else if (',?[]{}'.includes(ch)) flowIndicators = true;
    else if (ch === ':') {
      flowIndicators = true;
      if (followedByWhitespace) blockIndicators = true;
    } else if (ch === '#' && precededByWhitespace) flowIndicators = blockIndicators = true;

    if (!isPrintable(c)) special = true;
    if (c === 0x20) {
      if (i === 0) leadingSpace = true;
      if (i === chars.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i === chars.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = c === 0x20 || c === 0x09 || isBreak(c) || c === 0;
  }
  const a: Analysis = { multiline: lineBreaks, flowPlain: true, blockPlain: true, singleQuoted: true, block: true };
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) a.flowPlain = a.blockPlain = false;
  if (trailingSpace) a.block = false;
  if (breakSpace) a.flowPlain = a.blockPlain = a.singleQuoted = false;
  if (spaceBreak || special) a.flowPlain = a.blockPlain = a.singleQuoted = a.block = false;
  if (lineBreaks) a.flowPlain = a.blockPlain = false;
  if (flowIndicators) a.flowPlain = false;
  if (blockIndicators) a.blockPlain = false;
  return a;
}

/** The style go-yaml's encoder asks for: literal for multi-line text, plain unless it would read back as another type. */
function requestedStringStyle(s: string): Style {
  if (s.includes('\n')) return 'literal';
  return resolveScalar('', s).tag === STR_TAG && !isBase60Float(s) ? 'plain' : 'double';
}

class Emitter {
  out = '';
  private column = 0;
  private whitespace = true;
  private indention = true;
  private indent = -1;
  private readonly indents: number[] = [];

  /** Emits a value; an explicit task stack stands in for recursion, as values may nest deeply. */
  run(root: unknown): void {
    type Task =
      | { t: 'node'; v: unknown; mapping: boolean }
      | { t: 'seq'; items: unknown[]; i: number }
      | { t: 'map'; entries: [string, unknown][]; i: number };
    const stack: Task[] = [{ t: 'node', v: root, mapping: false }];
    while (stack.length) {
      const task = stack.pop() as Task;
      if (task.t === 'node') {
        const v = jsonView(task.v);
        const ctx = { mapping: task.mapping, simpleKey: false };
        if (v === null || v === undefined) this.scalar('null', 'plain', ctx);
        else if (typeof v === 'boolean') this.scalar(String(v), 'plain', ctx);
        else if (typeof v === 'number' || typeof v === 'bigint') this.scalar(numberText(v), 'plain', ctx);
        else if (typeof v === 'string') this.scalar(v, requestedStringStyle(v), ctx);
        else if (Array.isArray(v)) {
          if (v.length === 0) this.emptyFlow('[', ']');
          else {
            // A sequence that is a mapping value is not indented further than its key.
            this.increaseIndent(false, task.mapping && !this.indention);
            stack.push({ t: 'seq', items: v, i: 0 });
          }
        } else {
          const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => jsonView(x) !== undefined);
          if (entries.length === 0) this.emptyFlow('{', '}');
          else {
            entries.sort(([a], [b]) => compareYamlKeys(a, b));
            this.increaseIndent(false, false);
            stack.push({ t: 'map', entries, i: 0 });
          }
        }
      } else if (task.t === 'seq') {
        if (task.i >= task.items.length) {
          this.popIndent();
          continue;
        }
        this.writeIndent();
        this.writeIndicator('-', true, false, true);
        stack.push(task, { t: 'node', v: task.items[task.i++], mapping: false });
      } else {
        if (task.i >= task.entries.length) {
          this.popIndent();
          continue;
        }
        const [k, v] = task.entries[task.i++];
        this.writeIndent();
        if (!analyze(k).multiline && byteLength(k) <= MAX_SIMPLE_KEY_LENGTH) {
          this.scalar(k, requestedStringStyle(k), { mapping: true, simpleKey: true });
          this.writeIndicator(':', false, false, false);
        } else {
          this.writeIndicator('?', true, false, true);
          this.scalar(k, requestedStringStyle(k), { mapping: true, simpleKey: false });
          this.writeIndent();
          this.writeIndicator(':', true, false, true);
        }
        stack.push(task, { t: 'node', v, mapping: true });
      }
    }
  }

  private emptyFlow(open: string, close: string): void {
    this.writeIndicator(open, true, true, false);
    this.increaseIndent(true, false);
    this.popIndent();
    this.writeIndicator(close, false, false, false);
  }

  private scalar(value: string, requested: Style, ctx: Context): void {
    const a = analyze(value);
    let style = requested;
    if (ctx.simpleKey && a.multiline) style = 'double';
    if (style === 'plain') {
      if (!a.blockPlain || (value.length === 0 && ctx.simpleKey)) style = 'single';
    }
    if (style === 'single' && !a.singleQuoted) style = 'double';
    if (style === 'literal' && (!a.block || ctx.simpleKey)) style = 'double';
    this.increaseIndent(true, false);
    const chars = [...value];
    if (style === 'plain') this.writePlain(chars, !ctx.simpleKey);
    else if (style === 'single') this.writeSingleQuoted(chars, !ctx.simpleKey);
    else if (style === 'double') this.writeDoubleQuoted(chars, !ctx.simpleKey);
    else this.writeLiteral(chars);
    this.popIndent();
  }

  private increaseIndent(flow: boolean, indentless: boolean): void {
    this.indents.push(this.indent);
    if (this.indent < 0) this.indent = flow ? BEST_INDENT : 0;
    else if (!indentless) this.indent += BEST_INDENT;
  }

  private popIndent(): void {
    this.indent = this.indents.pop() ?? -1;
  }

  private put(s: string): void {
    this.out += s;
    this.column += [...s].length;
  }

  private putBreak(): void {
    this.out += '\n';
    this.column = 0;
  }

  writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) this.putBreak();
    while (this.column < indent) this.put(' ');
    this.whitespace = true;
    this.indention = true;
  }

  private writeIndicator(indicator: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void {
    if (needWhitespace && !this.whitespace) this.put(' ');
    this.put(indicator);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
  }

  private writeBreak(c: string): void {
    if (c === '\n') this.putBreak();
    else {
      this.out += c;
      this.column = 0;
    }
  }

  private writePlain(chars: string[], allowBreaks: boolean): void {
    if (!this.whitespace) this.put(' ');
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i];
      if (c === ' ') {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && chars[i + 1] !== ' ') this.writeIndent();
        else this.put(c);
        spaces = true;
      } else if (isBreak(cp(c))) {
        if (!breaks && c === '\n') this.putBreak();
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.put(c);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.whitespace = false;
    this.indention = false;
  }

  private writeSingleQuoted(chars: string[], allowBreaks: boolean): void {
    this.writeIndicator("'", true, false, false);
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i];
      if (c === ' ') {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && i > 0 && i < chars.length - 1 && chars[i + 1] !== ' ') this.writeIndent();
        else this.put(c);
        spaces = true;
      } else if (isBreak(cp(c))) {
        if (!breaks && c === '\n') this.putBreak();
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.put(c === "'" ? "''" : c);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.writeIndicator("'", false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private writeDoubleQuoted(chars: string[], allowBreaks: boolean): void {
    this.writeIndicator('"', true, false, false);
    let spaces = false;
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i];
      const code = cp(c);
      if (!isPrintable(code) || code === 0xfeff || isBreak(code) || c === '"' || c === '\\') {
        this.put('\\' + escapeChar(code));
        spaces = false;
      } else if (c === ' ') {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && i > 0 && i < chars.length - 1) {
          this.writeIndent();
          if (chars[i + 1] === ' ') this.put('\\');
        } else this.put(c);
        spaces = true;
      } else {
        this.put(c);
        spaces = false;
      }
    }
    this.writeIndicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private writeLiteral(chars: string[]): void {
    this.writeIndicator('|', true, false, false);
    // Block scalar hints: explicit indentation when the text starts with a space or break, and chomping.
    const first = cp(chars[0] ?? '');
    if (first === 0x20 || isBreak(first)) this.writeIndicator(String(BEST_INDENT), false, false, false);
    const last = chars.length ? cp(chars[chars.length - 1]) : 0;
    if (chars.length === 0 || !isBreak(last)) this.writeIndicator('-', false, false, false);
    else if (chars.length === 1 || isBreak(cp(chars[chars.length - 2]))) this.writeIndicator('+', false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    let breaks = true;
    for (const c of chars) {
      if (isBreak(cp(c))) {
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.put(c);
        this.indention = false;
        breaks = false;
      }
    }
  }
}

const ESCAPES: Record<number, string> = {
  0x00: '0',
  0x07: 'a',
  0x08: 'b',
  0x09: 't',
  0x0a: 'n',
  0x0b: 'v',
  0x0c: 'f',
  0x0d: 'r',
  0x1b: 'e',
  0x22: '"',
  0x5c: '\\',
  0x85: 'N',
  0xa0: '_',
  0x2028: 'L',
  0x2029: 'P',
};

function escapeChar(c: number): string {
  if (ESCAPES[c] !== undefined) return ESCAPES[c];
  const hex = c.toString(16).toUpperCase();
  if (c <= 0xff) return 'x' + hex.padStart(2, '0');
  if (c <= 0xffff) return 'u' + hex.padStart(4, '0');
  return 'U' + hex.padStart(8, '0');
}
