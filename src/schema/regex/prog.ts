/**
 * Compiles a parsed regexp into a Thompson NFA program (as Go's regexp/syntax
 * compiler does): rune-set, split, empty-width, no-op and match instructions.
 * Programs are capped in size so that matching stays cheap and memory bounded.
 */
import type { CharSet } from './charset.js';
import { EMPTY_BEGIN_TEXT, RegexSyntaxError, type Node } from './parse.js';

export const OP_RUNE = 0;
export const OP_SPLIT = 1;
export const OP_EMPTY = 2;
export const OP_NOP = 3;
export const OP_MATCH = 4;

/** Go accepts up to ~3.3M instructions; we stop earlier, the matcher visits every instruction per step at worst. */
export const MAX_INSTRUCTIONS = 50_000;

export interface Prog {
  op: Uint8Array;
  out: Int32Array;
  out1: Int32Array;
  /** OP_RUNE: index into sets; OP_EMPTY: the empty-width flag. */
  arg: Int32Array;
  sets: CharSet[];
  start: number;
  size: number;
  hasEmptyWidth: boolean;
  /** The pattern begins with \A or ^ (without (?m)): no match can start after position 0. */
  anchoredStart: boolean;
}

interface Frag {
  start: number;
  /** Dangling exits: pc * 2 (out) or pc * 2 + 1 (out1). */
  exits: number[];
}

export function compileProg(node: Node, pattern: string): Prog {
  const c = new Compiler(pattern);
  const f = c.frag(node);
  const match = c.emit(OP_MATCH, 0);
  c.patch(f.exits, match);
  const n = c.ops.length;
  return {
    op: Uint8Array.from(c.ops),
    out: Int32Array.from(c.outs),
    out1: Int32Array.from(c.outs1),
    arg: Int32Array.from(c.args),
    sets: c.sets,
    start: f.start,
    size: n,
    hasEmptyWidth: c.ops.includes(OP_EMPTY),
    anchoredStart: startsAnchored(node),
  };
}

function startsAnchored(n: Node): boolean {
  if (n.op === 'assert') return n.flag === EMPTY_BEGIN_TEXT;
  if (n.op === 'cat') return startsAnchored(n.subs[0]);
  if (n.op === 'group') return startsAnchored(n.sub);
  return false;
}

class Compiler {
  readonly ops: number[] = [];
  readonly outs: number[] = [];
  readonly outs1: number[] = [];
  readonly args: number[] = [];
  readonly sets: CharSet[] = [];
  private readonly setIndex = new Map<CharSet, number>();

  constructor(private readonly pattern: string) {}

  emit(op: number, arg: number): number {
    if (this.ops.length >= MAX_INSTRUCTIONS) throw new RegexSyntaxError('expression too large', this.pattern);
    this.ops.push(op);
    this.outs.push(-1);
    this.outs1.push(-1);
    this.args.push(arg);
    return this.ops.length - 1;
  }

  patch(exits: number[], to: number): void {
    for (const e of exits) {
      if (e & 1) this.outs1[e >> 1] = to;
      else this.outs[e >> 1] = to;
    }
  }

  frag(n: Node): Frag {
    switch (n.op) {
      case 'set': {
        let idx = this.setIndex.get(n.set);
        if (idx === undefined) {
          idx = this.sets.length;
          this.sets.push(n.set);
          this.setIndex.set(n.set, idx);
        }
        const pc = this.emit(OP_RUNE, idx);
        return { start: pc, exits: [pc * 2] };
      }
      case 'empty': {
        const pc = this.emit(OP_NOP, 0);
        return { start: pc, exits: [pc * 2] };
      }
      case 'assert': {
        const pc = this.emit(OP_EMPTY, n.flag);
        return { start: pc, exits: [pc * 2] };
      }
      case 'group':
        return this.frag(n.sub);
      case 'cat': {
        const first = this.frag(n.subs[0]);
        let exits = first.exits;
        for (let i = 1; i < n.subs.length; i++) {
          const f = this.frag(n.subs[i]);
          this.patch(exits, f.start);
          exits = f.exits;
        }
        return { start: first.start, exits };
      }
      case 'alt': {
        // a|b|c = split(a, split(b, c)), earlier alternatives preferred
        const frags = n.subs.map((s) => this.frag(s));
        let acc = frags[frags.length - 1];
        for (let i = frags.length - 2; i >= 0; i--) {
          const pc = this.emit(OP_SPLIT, 0);
          this.outs[pc] = frags[i].start;
          this.outs1[pc] = acc.start;
          acc = { start: pc, exits: [...frags[i].exits, ...acc.exits] };
        }
        return acc;
      }
      case 'rep':
        return this.repeat(n.sub, n.min, n.max, n.greedy);
    }
  }

  private split(body: number, greedy: boolean): { pc: number; exit: number } {
    const pc = this.emit(OP_SPLIT, 0);
    if (greedy) this.outs[pc] = body;
    else this.outs1[pc] = body;
    return { pc, exit: greedy ? pc * 2 + 1 : pc * 2 };
  }

  private star(sub: Node, greedy: boolean): Frag {
    const body = this.frag(sub);
    const s = this.split(body.start, greedy);
    this.patch(body.exits, s.pc);
    return { start: s.pc, exits: [s.exit] };
  }

  private plus(sub: Node, greedy: boolean): Frag {
    const body = this.frag(sub);
    const s = this.split(body.start, greedy);
    this.patch(body.exits, s.pc);
    return { start: body.start, exits: [s.exit] };
  }

  private quest(sub: Node, greedy: boolean): Frag {
    const body = this.frag(sub);
    const s = this.split(body.start, greedy);
    return { start: s.pc, exits: [...body.exits, s.exit] };
  }

  private repeat(sub: Node, min: number, max: number, greedy: boolean): Frag {
    if (min === 0 && max === -1) return this.star(sub, greedy);
    if (min === 1 && max === -1) return this.plus(sub, greedy);
    if (min === 0 && max === 1) return this.quest(sub, greedy);
    if (max === 0) return this.frag({ op: 'empty', h: 1 });
    const parts: Frag[] = [];
    const copies = max === -1 ? min - 1 : min;
    for (let i = 0; i < copies; i++) parts.push(this.frag(sub));
    if (max === -1) parts.push(this.plus(sub, greedy));
    else if (max > min) {
      // x{n,m} = x^n (x(x(x)?)?)? with m-n optional levels, built inside out
      let inner: Frag | undefined;
      for (let i = 0; i < max - min; i++) {
        const body = this.frag(sub);
        if (inner) this.patch(body.exits, inner.start);
        const s = this.split(body.start, greedy);
        inner = { start: s.pc, exits: [...(inner ? inner.exits : body.exits), s.exit] };
      }
      parts.push(inner as Frag);
    }
    if (!parts.length) return this.frag({ op: 'empty', h: 1 });
    for (let i = 1; i < parts.length; i++) this.patch(parts[i - 1].exits, parts[i].start);
    return { start: parts[0].start, exits: parts[parts.length - 1].exits };
  }
}
