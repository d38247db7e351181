/**
 * YAML output as kubectl -o yaml / sigs.k8s.io/yaml.Marshal writes it: the
 * value goes through JSON, then go-yaml v2 (libyaml's emitter) prints it with
 * sorted keys, two-space indentation, sequences flush with their parent key,
 * `[]`/`{}` for empty collections, quoting only where a plain scalar would
 * read back as something else, and long lines folded at 80 columns.
 *
 * Block style indents every level by two more columns, so a value nested d
 * levels deep prints about d² bytes (go-yaml prints the same). The emitter
 * writes into a byte buffer (indentation is one fill, text is copied in
 * runs), so its cost stays a small constant per output byte; an output larger
 * than MAX_YAML_BYTES is refused rather than built.
 */
import { byteLength } from './go-text.js';
import { analyze, compareYamlKeys, cp, escapeChar, isBreak, isPrintable, numberText, requestedStringStyle, type Style } from './yaml-emit-scalars.js';

export { compareYamlKeys } from './yaml-emit-scalars.js';

const BEST_WIDTH = 80;
const BEST_INDENT = 2;
const MAX_SIMPLE_KEY_LENGTH = 128;

/**
 * The largest YAML document kapi writes (512 MiB). go-yaml has none; kube-apiserver's YAML is bounded
 * only by the 10,000 levels of flow nesting sigs.k8s.io/yaml's JSONToYAML reads back. An object that
 * deep prints some 10⁸ bytes per chain of nesting (300 MB for one chain with its managedFields), and
 * an object can hold dozens of chains: past this limit a response would cost seconds of the event
 * loop and the memory of the whole document.
 */
export const MAX_YAML_BYTES = 512 * 1024 * 1024;

/** Raised when a value's YAML would be larger than MAX_YAML_BYTES. */
export class YamlTooLargeError extends RangeError {
  constructor(readonly limit: number) {
    super(`the YAML encoding of the object is larger than ${limit} bytes`);
    this.name = 'YamlTooLargeError';
  }
}

interface Context {
  mapping: boolean;
  simpleKey: boolean;
}

const KEY: Context = { mapping: true, simpleKey: true };
const COMPLEX_KEY: Context = { mapping: true, simpleKey: false };
const IN_MAPPING: Context = { mapping: true, simpleKey: false };
const IN_SEQUENCE: Context = { mapping: false, simpleKey: false };

export function stringifyYaml(value: unknown): string {
  return encodeYaml(value).toString('utf8');
}

/** The YAML document of a value, as UTF-8 bytes; `limit` bounds its size (YamlTooLargeError). */
export function encodeYaml(value: unknown, limit = MAX_YAML_BYTES): Buffer {
  const e = new Emitter(limit);
  e.run(value);
  e.writeIndent(); // document end
  return e.bytes();
}

/** What JSON.stringify would serialize for v: toJSON() applied; undefined for values it drops. */
function jsonView(v: unknown): unknown {
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON: () => unknown }).toJSON();
  }
  return typeof v === 'function' || typeof v === 'symbol' ? undefined : v;
}

/** How many code points a string holds (libyaml counts columns in characters). */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Whether a string needs no care in any scalar style: printable ASCII without spaces, quotes or backslashes. */
function isSimpleRun(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f || c === 0x22 || c === 0x27 || c === 0x5c) return false;
  }
  return true;
}

class Emitter {
  private buf = Buffer.allocUnsafe(4096);
  private len = 0;
  private column = 0;
  private whitespace = true;
  private indention = true;
  private indent = -1;
  private readonly indents: number[] = [];

  constructor(private readonly limit: number) {}

  bytes(): Buffer {
    return this.buf.subarray(0, this.len);
  }

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
        const ctx = task.mapping ? IN_MAPPING : IN_SEQUENCE;
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
            if (entries.length > 1) entries.sort(([a], [b]) => compareYamlKeys(a, b));
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
        const simple = isSimpleRun(k);
        if ((simple ? k.length : byteLength(k)) <= MAX_SIMPLE_KEY_LENGTH && (simple || !analyze(k).multiline)) {
          this.scalar(k, requestedStringStyle(k), KEY);
          this.writeIndicator(':', false, false, false);
        } else {
          this.writeIndicator('?', true, false, true);
          this.scalar(k, requestedStringStyle(k), COMPLEX_KEY);
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
    this.increaseIndent(true, false);
    // Most scalars (keys, names, numbers) need no analysis: printable ASCII without spaces,
    // quotes or block indicators is written plain, or double-quoted as asked, in one piece.
    if (requested !== 'literal' && value.length > 0 && isSimpleRun(value) && (requested === 'double' || !hasBlockIndicator(value))) {
      if (requested === 'plain') {
        if (!this.whitespace) this.put(' ');
        this.put(value);
        this.whitespace = false;
        this.indention = false;
      } else {
        // A simple run needs no escapes: double quotes around it, as writeDoubleQuoted would.
        this.writeIndicator('"', true, false, false);
        this.put(value);
        this.writeIndicator('"', false, false, false);
        this.whitespace = false;
        this.indention = false;
      }
      this.popIndent();
      return;
    }
    const a = analyze(value);
    let style = requested;
    if (ctx.simpleKey && a.multiline) style = 'double';
    if (style === 'plain') {
      if (!a.blockPlain || (value.length === 0 && ctx.simpleKey)) style = 'single';
    }
    if (style === 'single' && !a.singleQuoted) style = 'double';
    if (style === 'literal' && (!a.block || ctx.simpleKey)) style = 'double';
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

  /** Room for n more bytes (never more room than the limit allows, unless n asks for it). */
  private reserve(n: number): void {
    const need = this.len + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = Buffer.allocUnsafe(Math.min(size, Math.max(need, this.limit)));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  private put(s: string): void {
    const n = s.length;
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (this.len + n * 3 > this.buf.length) this.reserve(n * 3);
    const buf = this.buf;
    const start = this.len;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[start + i] = c;
    }
    if (i === n) {
      this.len = start + n;
      this.column += n;
    } else {
      this.len = start + buf.write(s, start, 'utf8');
      this.column += codePoints(s);
    }
    if (this.len > this.limit) throw new YamlTooLargeError(this.limit);
  }

  private spaces(n: number): void {
    if (this.len + n > this.limit) throw new YamlTooLargeError(this.limit);
    this.reserve(n);
    this.buf.fill(0x20, this.len, this.len + n);
    this.len += n;
    this.column += n;
  }

  private putBreak(): void {
    if (this.len >= this.limit) throw new YamlTooLargeError(this.limit);
    if (this.len >= this.buf.length) this.reserve(1);
    this.buf[this.len++] = 0x0a;
    this.column = 0;
  }

  writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) this.putBreak();
    if (this.column < indent) this.spaces(indent - this.column);
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
      this.put(c);
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

/**
 * Whether a simple run (see isSimpleRun) holds what analyze() calls a block indicator, which
 * rules out the plain style: an indicator first (`?`, `:` and `-` only as the whole text), a
 * `:` last, or a `---`/`...` document marker. (Flow indicators do not matter in block style.)
 */
function hasBlockIndicator(s: string): boolean {
  const c = s.charCodeAt(0);
  if (s.length === 1 && (c === 0x3f || c === 0x3a || c === 0x2d)) return true;
  // #,[]{}&*!|>%@` (quotes and backslashes are not in simple runs).
  if (c === 0x23 || c === 0x2c || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d || c === 0x26 || c === 0x2a) return true;
  if (c === 0x21 || c === 0x7c || c === 0x3e || c === 0x25 || c === 0x40 || c === 0x60) return true;
  if (s.charCodeAt(s.length - 1) === 0x3a) return true;
  return s.startsWith('---') || s.startsWith('...');
}
