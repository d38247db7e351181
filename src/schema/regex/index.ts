/**
 * Go-compatible regular expressions for `pattern`, CEL's matches() and the
 * Kubernetes regex library.
 *
 * Why our own engine: ECMAScript regexps differ from Go's RE2 in syntax (\z, \pN,
 * (?i) groups, [[:alpha:]], \Q..\E; JS accepts lookarounds and backreferences RE2
 * rejects) and, worse, they backtrack: a pattern like `(a+)+$` takes exponential
 * time. This engine parses Go's syntax with Go's error texts and matches with an
 * NFA/lazy-DFA in time linear in the input, so a hostile pattern cannot stall the
 * server. Compiled regexps are cached by source text.
 */
import { Budget, Matcher } from './match.js';
import { parseRegex, RegexSyntaxError } from './parse.js';
import { compileProg } from './prog.js';

export { Budget, BudgetExceeded } from './match.js';
export { RegexSyntaxError } from './parse.js';

export class Regex {
  private readonly matcher: Matcher;

  constructor(readonly source: string) {
    this.matcher = new Matcher(compileProg(parseRegex(source), source));
  }

  /** Whether the regexp matches anywhere in s (Go's MatchString). */
  test(s: string, budget: Budget = new Budget(Number.MAX_SAFE_INTEGER)): boolean {
    return this.matcher.test(s, budget);
  }

  /** The leftmost-first match (Go's FindString), or undefined. */
  find(s: string, budget: Budget = new Budget(Number.MAX_SAFE_INTEGER)): string | undefined {
    const m = this.matcher.find(s, 0, budget);
    return m ? s.slice(m[0], m[1]) : undefined;
  }

  /** Successive non-overlapping matches (Go's FindAllString with n<0 or limit n). */
  findAll(s: string, limit: number, budget: Budget = new Budget(Number.MAX_SAFE_INTEGER)): string[] {
    const out: string[] = [];
    let prevEnd = -1;
    for (let pos = 0; pos <= s.length && (limit < 0 || out.length < limit); ) {
      const m = this.matcher.find(s, pos, budget);
      if (!m) break;
      let accept = true;
      if (m[1] === pos) {
        if (m[0] === prevEnd) accept = false;
        const cp = s.codePointAt(pos);
        pos += cp !== undefined && cp > 0xffff ? 2 : 1;
      } else pos = m[1];
      prevEnd = m[1];
      if (accept) out.push(s.slice(m[0], m[1]));
    }
    return out;
  }
}

const cache = new Map<string, Regex | RegexSyntaxError>();
const CACHE_SIZE = 2048;

/** A compiled regexp from the cache; throws RegexSyntaxError with Go's message for invalid syntax. */
export function compileRegex(source: string): Regex {
  let hit = cache.get(source);
  if (hit === undefined) {
    try {
      hit = new Regex(source);
    } catch (e) {
      if (!(e instanceof RegexSyntaxError)) throw e;
      hit = e;
    }
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(source, hit);
  }
  if (hit instanceof RegexSyntaxError) throw hit;
  return hit;
}

/** Go's regexp.Compile error text for source, or undefined when it compiles. */
export function regexError(source: string): string | undefined {
  try {
    compileRegex(source);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
