/**
 * Linear-time matching of compiled programs, never backtracking:
 * - test(): unanchored "does it match anywhere" (Go's MatchString) over a lazily
 *   built DFA whose states are sets of NFA instructions, cached per program, so a
 *   hot pattern costs one table lookup per character;
 * - find(): leftmost-first match bounds (Go's FindStringIndex) with a Pike VM.
 * Both charge a Budget, so that a huge input against a huge program is cut off.
 */
import {
  EMPTY_BEGIN_LINE,
  EMPTY_BEGIN_TEXT,
  EMPTY_END_LINE,
  EMPTY_END_TEXT,
  EMPTY_NO_WORD_BOUNDARY,
  EMPTY_WORD_BOUNDARY,
} from './parse.js';
import { OP_EMPTY, OP_MATCH, OP_NOP, OP_RUNE, OP_SPLIT, type Prog } from './prog.js';

export class BudgetExceeded extends Error {
  constructor() {
    super('regular expression matching exceeded its budget');
  }
}

/** A pool of work units shared by all matching done for one request. */
export class Budget {
  constructor(public remaining: number) {}
  charge(n: number): void {
    this.remaining -= n;
    if (this.remaining < 0) throw new BudgetExceeded();
  }
}

const isWord = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

function codePointAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdfff) return c;
  const cp = s.codePointAt(i) as number;
  return cp > 0xffff ? cp : 0xfffd;
}

function prevCodePoint(s: string, i: number): number {
  const c = s.charCodeAt(i - 1);
  if (c >= 0xdc00 && c <= 0xdfff && i >= 2) {
    const hi = s.charCodeAt(i - 2);
    if (hi >= 0xd800 && hi <= 0xdbff) return ((hi - 0xd800) << 10) + (c - 0xdc00) + 0x10000;
  }
  return c >= 0xd800 && c <= 0xdfff ? 0xfffd : c;
}

/** The empty-width conditions that hold at position i of s. */
function contextAt(s: string, i: number): number {
  const prev = i > 0 ? prevCodePoint(s, i) : -1;
  const next = i < s.length ? codePointAt(s, i) : -1;
  let f = 0;
  if (i === 0) f |= EMPTY_BEGIN_TEXT | EMPTY_BEGIN_LINE;
  else if (prev === 10) f |= EMPTY_BEGIN_LINE;
  if (i === s.length) f |= EMPTY_END_TEXT | EMPTY_END_LINE;
  else if (next === 10) f |= EMPTY_END_LINE;
  f |= isWord(prev) !== isWord(next) ? EMPTY_WORD_BOUNDARY : EMPTY_NO_WORD_BOUNDARY;
  return f;
}

// ---- lazy DFA ----

interface DState {
  /** RUNE instructions alive in this state. */
  runes: Int32Array;
  match: boolean;
  ascii: (TState | undefined)[];
  other: Map<number, TState>;
}

/** The instructions reached by consuming one character, before following empty transitions. */
interface TState {
  pcs: Int32Array;
  closures: (DState | undefined)[];
}

const MAX_STATES = 4096;

export class Matcher {
  private tstates = new Map<string, TState>();
  private dstates = new Map<string, DState>();
  private readonly mark: Uint32Array;
  private gen = 1;
  private startT: TState;
  /** The empty-width conditions the program tests; 0 when it has none. */
  private readonly emptyMask: number;

  constructor(private readonly prog: Prog) {
    this.mark = new Uint32Array(prog.size);
    this.startT = this.internT([prog.start]);
    let mask = 0;
    for (let pc = 0; pc < prog.size; pc++) if (prog.op[pc] === OP_EMPTY) mask |= prog.arg[pc];
    this.emptyMask = mask;
  }

  private flagsAt(s: string, i: number): number {
    const mask = this.emptyMask;
    if (mask === 0) return 0;
    if ((mask & ~(EMPTY_BEGIN_TEXT | EMPTY_END_TEXT)) === 0) return (i === 0 ? EMPTY_BEGIN_TEXT : 0) | (i === s.length ? EMPTY_END_TEXT : 0);
    return contextAt(s, i) & mask;
  }

  /** Whether the program matches anywhere in s. */
  test(s: string, budget: Budget): boolean {
    const prog = this.prog;
    const f0 = this.flagsAt(s, 0);
    let state = this.startT.closures[f0] ?? this.closure(this.startT, f0, budget);
    if (state.match) return true;
    const n = s.length;
    for (let i = 0; i < n; ) {
      let c = s.charCodeAt(i);
      let w = 1;
      if (c >= 0xd800 && c <= 0xdfff) {
        c = codePointAt(s, i);
        w = c > 0xffff ? 2 : 1;
      }
      let t = c < 128 ? state.ascii[c] : state.other.get(c);
      if (t === undefined) {
        t = this.step(state, c, budget);
        if (this.dstates.size > MAX_STATES) this.reset();
        else if (c < 128) state.ascii[c] = t;
        else if (state.other.size < 256) state.other.set(c, t);
      }
      i += w;
      budget.remaining--;
      const flags = this.flagsAt(s, i);
      state = t.closures[flags] ?? this.closure(t, flags, budget);
      if (state.match) return true;
      if (prog.anchoredStart && state.runes.length === 0) return false;
    }
    if (budget.remaining < 0) budget.charge(0);
    return false;
  }

  private reset(): void {
    this.tstates = new Map();
    this.dstates = new Map();
    this.startT = this.internT([this.prog.start]);
  }

  private internT(pcs: number[]): TState {
    pcs.sort((a, b) => a - b);
    const key = pcs.join(',');
    let t = this.tstates.get(key);
    if (!t) {
      t = { pcs: Int32Array.from(pcs), closures: [] };
      this.tstates.set(key, t);
    }
    return t;
  }

  private step(state: DState, c: number, budget: Budget): TState {
    const prog = this.prog;
    const next: number[] = [];
    const gen = this.nextGen();
    for (const pc of state.runes) {
      if (prog.sets[prog.arg[pc]].has(c)) {
        const to = prog.out[pc];
        if (this.mark[to] !== gen) {
          this.mark[to] = gen;
          next.push(to);
        }
      }
    }
    budget.charge(state.runes.length + 1);
    if (!prog.anchoredStart && this.mark[prog.start] !== gen) next.push(prog.start);
    return this.internT(next);
  }

  private nextGen(): number {
    if (++this.gen === 0xffffffff) {
      this.mark.fill(0);
      this.gen = 1;
    }
    return this.gen;
  }

  private closure(t: TState, flags: number, budget: Budget): DState {
    const prog = this.prog;
    const gen = this.nextGen();
    const runes: number[] = [];
    let match = false;
    const stack = Array.from(t.pcs);
    let visited = 0;
    while (stack.length) {
      const pc = stack.pop() as number;
      if (pc < 0 || this.mark[pc] === gen) continue;
      this.mark[pc] = gen;
      visited++;
      switch (prog.op[pc]) {
        case OP_RUNE:
          runes.push(pc);
          break;
        case OP_MATCH:
          match = true;
          break;
        case OP_NOP:
          stack.push(prog.out[pc]);
          break;
        case OP_SPLIT:
          stack.push(prog.out1[pc], prog.out[pc]);
          break;
        case OP_EMPTY:
          if ((prog.arg[pc] & flags) === prog.arg[pc]) stack.push(prog.out[pc]);
          break;
      }
    }
    budget.charge(visited + 1);
    runes.sort((a, b) => a - b);
    const key = (match ? 'm' : '') + runes.join(',');
    let d = this.dstates.get(key);
    if (!d) {
      d = { runes: Int32Array.from(runes), match, ascii: new Array(128), other: new Map() };
      this.dstates.set(key, d);
    }
    t.closures[flags] = d;
    return d;
  }

  // ---- Pike VM: leftmost-first match bounds ----

  /** [start, end] (UTF-16 indexes) of the leftmost-first match at or after from, or undefined. */
  find(s: string, from: number, budget: Budget): [number, number] | undefined {
    const prog = this.prog;
    let clist: number[] = [];
    let cstart: number[] = [];
    let nlist: number[] = [];
    let nstart: number[] = [];
    let matched: [number, number] | undefined;
    const add = (list: number[], starts: number[], pc0: number, start: number, flags: number, gen: number): void => {
      const stack = [pc0];
      while (stack.length) {
        const pc = stack.pop() as number;
        if (pc < 0 || this.mark[pc] === gen) continue;
        this.mark[pc] = gen;
        switch (prog.op[pc]) {
          case OP_RUNE:
          case OP_MATCH:
            list.push(pc);
            starts.push(start);
            break;
          case OP_NOP:
            stack.push(prog.out[pc]);
            break;
          case OP_SPLIT:
            stack.push(prog.out1[pc], prog.out[pc]);
            break;
          case OP_EMPTY:
            if ((prog.arg[pc] & flags) === prog.arg[pc]) stack.push(prog.out[pc]);
            break;
        }
      }
    };
    let gen = this.nextGen();
    for (let i = from; ; ) {
      const flags = contextAt(s, i);
      if (!matched && !(prog.anchoredStart && i > 0)) add(clist, cstart, prog.start, i, flags, gen);
      if (clist.length === 0) break;
      budget.charge(clist.length);
      const c = i < s.length ? codePointAt(s, i) : -1;
      const w = c > 0xffff ? 2 : 1;
      const ngen = this.nextGen();
      const nflags = i < s.length ? contextAt(s, i + w) : 0;
      for (let k = 0; k < clist.length; k++) {
        const pc = clist[k];
        if (prog.op[pc] === OP_MATCH) {
          matched = [cstart[k], i];
          break; // lower-priority threads are cut off
        }
        if (c >= 0 && prog.sets[prog.arg[pc]].has(c)) add(nlist, nstart, prog.out[pc], cstart[k], nflags, ngen);
      }
      if (i >= s.length) break;
      [clist, nlist] = [nlist, clist];
      [cstart, nstart] = [nstart, cstart];
      nlist.length = 0;
      nstart.length = 0;
      gen = ngen;
      i += w;
    }
    return matched;
  }
}
