/**
 * A set of string keys kept in sorted order, for ranges with a start key.
 *
 * The keys are held in blocks of at most MAX_BLOCK sorted keys, the blocks in key order: a write
 * finds its block by a binary search and moves at most a block's keys, a range starts with two
 * binary searches, and counting the keys of a range adds up the sizes of the blocks before its
 * ends. With a million keys, every operation costs microseconds; one array kept sorted (or sorted
 * again after writes) cost a pass over all of them.
 */
const MAX_BLOCK = 1024;
/** A block this small after a delete joins its neighbour when both fit in one. */
const MIN_BLOCK = MAX_BLOCK / 4;

export class SortedKeys {
  private blocks: string[][] = [];
  private total = 0;

  get size(): number {
    return this.total;
  }

  /** Adds a key (nothing if present). */
  add(key: string): void {
    const blocks = this.blocks;
    if (blocks.length === 0) {
      blocks.push([key]);
      this.total = 1;
      return;
    }
    // The first block whose last key is >= key, else the last block (the key goes at its end).
    const b = Math.min(this.blockFor(key), blocks.length - 1);
    const block = blocks[b];
    const i = lowerBound(block, key);
    if (block[i] === key) return;
    block.splice(i, 0, key);
    this.total++;
    if (block.length > MAX_BLOCK) blocks.splice(b + 1, 0, block.splice(block.length >> 1));
  }

  /** Removes a key (nothing if absent). */
  delete(key: string): void {
    const b = this.blockFor(key);
    const block = this.blocks[b];
    if (block === undefined) return;
    const i = lowerBound(block, key);
    if (block[i] !== key) return;
    block.splice(i, 1);
    this.total--;
    if (block.length === 0) this.blocks.splice(b, 1);
    else if (block.length < MIN_BLOCK && b + 1 < this.blocks.length && block.length + this.blocks[b + 1].length <= MAX_BLOCK) {
      block.push(...this.blocks[b + 1]);
      this.blocks.splice(b + 1, 1);
    }
  }

  /** How many keys are < key. */
  rank(key: string): number {
    const b = this.blockFor(key);
    let n = 0;
    for (let i = 0; i < b && i < this.blocks.length; i++) n += this.blocks[i].length;
    return b < this.blocks.length ? n + lowerBound(this.blocks[b], key) : n;
  }

  /** How many keys are in [start, end) ('' end: no end). */
  count(start: string, end: string): number {
    return Math.max(0, (end === '' ? this.total : this.rank(end)) - this.rank(start));
  }

  /** The keys in [start, end) ('' end: no end), in order. */
  *range(start: string, end: string): Generator<string, void, undefined> {
    const blocks = this.blocks;
    const first = this.blockFor(start);
    for (let b = first; b < blocks.length; b++) {
      const block = blocks[b];
      for (let i = b === first ? lowerBound(block, start) : 0; i < block.length; i++) {
        const key = block[i];
        if (end !== '' && key >= end) return;
        yield key;
      }
    }
  }

  /** Every key, in order (a copy). */
  keys(): string[] {
    return this.blocks.flat();
  }

  /** The index of the first block whose last key is >= key (blocks.length when none is). */
  private blockFor(key: string): number {
    const blocks = this.blocks;
    let lo = 0;
    let hi = blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const block = blocks[mid];
      if (block[block.length - 1] < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Index of the first element >= start in a sorted array. */
export function lowerBound(keys: readonly string[], start: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] < start) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
