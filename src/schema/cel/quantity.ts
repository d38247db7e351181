/**
 * resource.Quantity for the CEL quantity library: parsed like ParseQuantity
 * (decimal SI, binary SI and exponent suffixes) into an exact rational, so that
 * comparisons and sums are exact.
 */

const BINARY: Record<string, bigint> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);

function gcd(a: bigint, b: bigint): bigint {
  if (a < 0n) a = -a;
  while (b) [a, b] = [b, a % b];
  return a || 1n;
}

export class Quantity {
  readonly num: bigint;
  readonly den: bigint;

  constructor(num: bigint, den: bigint) {
    const g = gcd(num, den);
    this.num = num / g;
    this.den = den / g;
  }

  static ofInt(i: bigint): Quantity {
    return new Quantity(i, 1n);
  }

  sign(): number {
    return this.num > 0n ? 1 : this.num < 0n ? -1 : 0;
  }

  cmp(o: Quantity): number {
    const a = this.num * o.den;
    const b = o.num * this.den;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  add(o: Quantity): Quantity {
    return new Quantity(this.num * o.den + o.num * this.den, this.den * o.den);
  }

  sub(o: Quantity): Quantity {
    return new Quantity(this.num * o.den - o.num * this.den, this.den * o.den);
  }

  isInteger(): boolean {
    return this.den === 1n && this.num >= MIN_INT64 && this.num <= MAX_INT64;
  }

  asInteger(): bigint | undefined {
    return this.isInteger() ? this.num : undefined;
  }

  asFloat(): number {
    return Number(this.num) / Number(this.den);
  }
}

/** ParseQuantity; undefined when s is not a quantity. */
export function parseQuantity(s: string): Quantity | undefined {
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)$/.exec(s);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const [, sign, int, frac = '', suffix] = m;
  let num = BigInt((int || '0') + frac);
  let den = 10n ** BigInt(frac.length);
  if (Object.prototype.hasOwnProperty.call(BINARY, suffix)) num *= BINARY[suffix];
  else if (Object.prototype.hasOwnProperty.call(DECIMAL, suffix)) {
    const e = DECIMAL[suffix];
    if (e >= 0) num *= 10n ** BigInt(e);
    else den *= 10n ** BigInt(-e);
  } else {
    const em = /^[eE]([-+]?[0-9]+)$/.exec(suffix);
    if (!em) return undefined;
    const e = Number(em[1]);
    if (Math.abs(e) > 1000) return undefined;
    if (e >= 0) num *= 10n ** BigInt(e);
    else den *= 10n ** BigInt(-e);
  }
  return new Quantity(sign === '-' ? -num : num, den);
}
