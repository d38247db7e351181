/**
 * Structural equality of JSON values: key order does not matter, keys holding
 * `undefined` count as absent, and a bigint equals the integer number it holds.
 * Iterative (pairs still to compare wait on an explicit stack): objects nest as
 * deep as requests may (10,000 levels), far deeper than the call stack goes.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object') return scalarsEqual(a, b);
  const stack: unknown[] = [a, b];
  while (stack.length > 0) {
    const y = stack.pop();
    const x = stack.pop();
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object') {
      if (!scalarsEqual(x, y)) return false;
      continue;
    }
    if (x === null || y === null) return false;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = x.length - 1; i >= 0; i--) stack.push(x[i], y[i]);
      continue;
    }
    if (Array.isArray(y)) return false;
    const ox = x as Record<string, unknown>;
    const oy = y as Record<string, unknown>;
    // Members whose value is undefined do not count (JSON leaves them out). for-in on a plain
    // object visits its own keys without building key arrays: this runs on every update.
    let defined = 0;
    for (const k in ox) {
      const v = ox[k];
      if (v === undefined) continue;
      defined++;
      if (!Object.prototype.hasOwnProperty.call(oy, k)) return false;
      const w = oy[k];
      if (v === w) continue;
      if (typeof v !== 'object' || typeof w !== 'object') {
        if (!scalarsEqual(v, w)) return false;
      } else stack.push(v, w);
    }
    for (const k in oy) if (oy[k] !== undefined) defined--;
    if (defined !== 0) return false;
  }
  return true;
}

/** Equality of two values that are not both objects (a === b already failed). */
function scalarsEqual(a: unknown, b: unknown): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    if (typeof a === typeof b) return false;
    const [big, num] = typeof a === 'bigint' ? [a, b as number] : [b as bigint, a as number];
    return Number.isInteger(num) && BigInt(num) === big;
  }
  return false;
}

/** Equality of two objects ignoring some top-level keys. */
export function equalExcept(a: Record<string, unknown>, b: Record<string, unknown>, ignore: readonly string[]): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (ignore.includes(k)) continue;
    if (!deepEqual(a[k], b[k])) return false;
  }
  return true;
}
