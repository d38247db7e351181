/**
 * The CEL environment shared by all schemas: @marcbachmann/cel-js configured like
 * cel-go in Kubernetes (optional types, heterogeneous literals), with the
 * Kubernetes libraries; a cost meter on the interpreter (every evaluated node costs
 * one unit, strings and lists cost by size) so that a rule can be stopped at
 * upstream's limits; and cel-go style compile error texts.
 */
import { Environment } from '@marcbachmann/cel-js';
import { MATCHES_ALIAS, registerLibrary } from './library.js';

/** apiserver's celconfig. */
export const PER_CALL_LIMIT = 1_000_000;
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;

export class CostLimitExceeded extends Error {
  constructor() {
    super('operation cancelled: actual cost limit exceeded');
  }
}

interface Meter {
  used: number;
  limit: number;
}

let meter: Meter | undefined;
let base: Environment | undefined;

/** The environment with the libraries; clone it to add types and variables. */
export function baseEnvironment(): Environment {
  if (base) return base;
  const env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false, limits: { maxAstNodes: 20000, maxDepth: 250 } });
  registerLibrary(env);
  let evaluator: { run: (ast: unknown, ctx: unknown) => unknown } | undefined;
  env.registerFunction('__kapiProbe(ast): bool', () => ({
    typeCheck: (checker: { getType(t: string): unknown }) => checker.getType('bool'),
    evaluate: (ev: { run: (ast: unknown, ctx: unknown) => unknown }) => {
      evaluator = ev;
      return true;
    },
  }));
  env.evaluate('__kapiProbe(true)');
  if (evaluator) instrument(Object.getPrototypeOf(evaluator));
  base = env;
  return env;
}

/** Wraps the interpreter's node evaluation with the cost meter (once, on the shared prototype). */
function instrument(proto: { run: (ast: unknown, ctx: unknown) => unknown; __kapiMetered?: boolean }): void {
  if (proto.__kapiMetered) return;
  const run = proto.run;
  proto.run = function metered(this: unknown, ast: unknown, ctx: unknown) {
    const m = meter;
    if (m === undefined) return run.call(this, ast, ctx);
    if (++m.used > m.limit) throw new CostLimitExceeded();
    const r = run.call(this, ast, ctx);
    if (typeof r === 'string') {
      if (r.length > 64) m.used += r.length >> 4;
    } else if (Array.isArray(r)) m.used += r.length;
    return r;
  };
  proto.__kapiMetered = true;
}

/** Runs fn with a cost meter; returns the result (or the thrown error) and the cost. */
export function metered<T>(limit: number, fn: () => T): { value?: T; error?: unknown; cost: number } {
  const prev = meter;
  const m: Meter = { used: 0, limit };
  meter = m;
  try {
    return { value: fn(), cost: m.used };
  } catch (error) {
    return { error, cost: m.used };
  } finally {
    meter = prev;
  }
}

/**
 * Renames matches() calls (same length) so they reach the linear-time RE2 engine
 * instead of JavaScript's backtracking RegExp. String literals and comments are skipped.
 */
export function rewriteSource(src: string): { src: string; idents: Set<string> } {
  const idents = new Set<string>();
  let out = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '/' && src[i + 1] === '/') {
      const end = src.indexOf('\n', i);
      const j = end < 0 ? src.length : end;
      out += src.slice(i, j);
      i = j;
      continue;
    }
    if (c === '"' || c === "'") {
      const raw = /[rR]/.test(src[i - 1] ?? '') && !/[A-Za-z0-9_]/.test(src[i - 2] ?? '');
      const triple = src.slice(i, i + 3) === c.repeat(3);
      const q = triple ? c.repeat(3) : c;
      let j = i + q.length;
      while (j < src.length && src.slice(j, j + q.length) !== q) j += !raw && src[j] === '\\' ? 2 : 1;
      j = Math.min(src.length, j + q.length);
      out += src.slice(i, j);
      i = j;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < src.length && /[A-Za-z0-9_]/.test(src[j])) j++;
      const word = src.slice(i, j);
      if (src[i - 1] !== '.') idents.add(word);
      let k = j;
      while (k < src.length && /\s/.test(src[k])) k++;
      out += word === 'matches' && src[k] === '(' ? MATCHES_ALIAS : word;
      i = j;
      continue;
    }
    out += c;
    i++;
  }
  return { src: out, idents };
}

const OPERATORS: Record<string, string> = {
  '+': '_+_',
  '-': '_-_',
  '*': '_*_',
  '/': '_/_',
  '%': '_%_',
  '==': '_==_',
  '!=': '_!=_',
  '<': '_<_',
  '<=': '_<=_',
  '>': '_>_',
  '>=': '_>=_',
  in: '@in',
};

interface CelJsError {
  name?: string;
  code?: string;
  summary?: string;
  message: string;
  range?: { start: number; end: number };
  node?: { pos?: number; start?: number; op?: unknown; args?: Array<{ end?: number }> };
}

/** cel-go's message for a cel-js check or parse failure. */
function goMessage(e: CelJsError): string {
  const summary = (e.summary ?? e.message.split('\n')[0]).replaceAll(MATCHES_ALIAS, 'matches');
  let m: RegExpExecArray | null;
  switch (e.code) {
    case 'no_such_key':
      if ((m = /^No such key: (.*)$/.exec(summary))) return `undefined field '${m[1]}'`;
      break;
    case 'unknown_variable':
      if ((m = /^Unknown variable: (.*)$/.exec(summary))) return `undeclared reference to '${m[1]}' (in container '')`;
      break;
    case 'no_such_overload':
      if ((m = /^no such overload: (\S+) (\S+) (\S+)$/.exec(summary))) return `found no matching overload for '${OPERATORS[m[2]] ?? m[2]}' applied to '(${m[1]}, ${m[3]})'`;
      break;
    case 'no_matching_overload':
      if ((m = /^found no matching overload for '(?:(.+)\.)?([A-Za-z_]\w*)\((.*)\)'$/.exec(summary))) {
        return `found no matching overload for '${m[2]}' applied to '${m[1] ? m[1] + '.' : ''}(${m[3]})'`;
      }
      break;
  }
  return e.name === 'ParseError' ? `Syntax error: ${summary}` : summary;
}

/** issues.String() of cel-go: `ERROR: <input>:L:C: msg` and the source line with a caret. */
export function formatIssue(src: string, err: unknown): string {
  const e = err as CelJsError;
  let pos = e.range?.start ?? e.node?.start ?? e.node?.pos ?? 0;
  // cel-go places a binary operator's overload error at the operator.
  const left = e.node?.args?.[0];
  if (e.code === 'no_such_overload' && e.node?.args?.length === 2 && typeof e.node.op === 'string' && typeof left?.end === 'number') {
    const at = src.indexOf(e.node.op, left.end);
    if (at >= 0) pos = at;
  }
  if (e.code === 'no_such_key' && pos > 0 && src[pos - 1] === '.') pos--;
  if (e.code === 'no_such_key' && pos > 1 && src.slice(pos - 2, pos) === '.?') pos -= 2;
  pos = Math.max(0, Math.min(pos, src.length));
  const before = src.slice(0, pos);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const col = Array.from(src.slice(lineStart, pos)).length;
  const lineText = src.slice(lineStart).split('\n')[0];
  return `ERROR: <input>:${line}:${col + 1}: ${goMessage(e)}\n | ${lineText}\n | ${'.'.repeat(col)}^`;
}

/** A runtime error's text like cel-go's (e.g. "no such key: x"). */
export function runtimeMessage(err: unknown): string {
  const e = err as CelJsError;
  const summary = (e.summary ?? String(e.message ?? err).split('\n')[0]).replaceAll(MATCHES_ALIAS, 'matches');
  const m = /^No such key: (.*)$/.exec(summary);
  if (m) return `no such key: ${m[1]}`;
  return summary;
}
