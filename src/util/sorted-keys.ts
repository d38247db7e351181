/**
 * A set of string keys kept in sorted order, for ranges with a start key.
 *
 * Writes are O(1): changes are noted in `pending` and folded into the sorted
 * array on the next read, in one O(n + k log k) pass. Reads are rare next to
 * writes in a busy store, so this beats keeping the array sorted on every write.
 */
export class SortedKeys {
  private sorted: string[] = [];
  /** Keys changed since the last read: true when present now, false when removed. */
  private pending = new Map<string, boolean>();

  add(key: string): void {
    this.pending.set(key, true);
  }

  delete(key: string): void {
    this.pending.set(key, false);
  }

  /** The keys in ascending order. The array is shared: callers must not change it. */
  keys(): readonly string[] {
    if (this.pending.size > 0) this.fold();
    return this.sorted;
  }

  /** Index of the first key >= start in keys(). */
  lowerBound(start: string): number {
    return lowerBound(this.keys(), start);
  }

  private fold(): void {
    const pending = this.pending;
    this.pending = new Map();
    const kept = this.sorted.filter((k) => !pending.has(k));
    const added: string[] = [];
    for (const [k, present] of pending) if (present) added.push(k);
    if (added.length === 0) {
      this.sorted = kept;
      return;
    }
    added.sort();
    const merged = new Array<string>(kept.length + added.length);
    let i = 0;
    let j = 0;
    let n = 0;
    while (i < kept.length && j < added.length) merged[n++] = kept[i] < added[j] ? kept[i++] : added[j++];
    while (i < kept.length) merged[n++] = kept[i++];
    while (j < added.length) merged[n++] = added[j++];
    this.sorted = merged;
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
