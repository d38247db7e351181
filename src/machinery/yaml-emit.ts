/**
 * YAML output as kubectl -o yaml / sigs.k8s.io/yaml.Marshal writes it: the
 * value goes through JSON, then go-yaml v2 (libyaml's emitter) prints it with
 * sorted keys, two-space indentation, sequences flush with their parent key,
 * `[]`/`{}` for empty collections, quoting only where a plain scalar would
 * read back as something else, and long lines folded at 80 columns.
 */
import { byteLength } from './go-text.js';
import { analyze, compareYamlKeys, cp, escapeChar, isBreak, isPrintable, numberText, requestedStringStyle, type Style } from './yaml-emit-scalars.js';

export { compareYamlKeys } from './yaml-emit-scalars.js';

const BEST_WIDTH = 80;
const BEST_INDENT = 2;
const MAX_SIMPLE_KEY_LENGTH = 128;

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
