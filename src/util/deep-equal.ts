/**
 * Structural equality of JSON values: key order does not matter, keys holding
 * `undefined` count as absent, and a bigint equals the integer number it holds.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    if (typeof a === typeof b) return false;
    const [big, num] = typeof a === 'bigint' ? [a, b as number] : [b as bigint, a as number];
    return Number.isInteger(num) && BigInt(num) === big;
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  // Members whose value is undefined do not count (JSON leaves them out). for-in on a plain
  // object visits its own keys without building key arrays: this runs on every update.
  let defined = 0;
  for (const k in a) {
    const v = a[k];
    if (v === undefined) continue;
    defined++;
    if (!Object.prototype.hasOwnProperty.call(b, k) || !deepEqual(v, b[k])) return false;
  }
  for (const k in b) if (b[k] !== undefined) defined--;
  return defined === 0;
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

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
