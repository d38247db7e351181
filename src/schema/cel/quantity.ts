/**
 * resource.Quantity for the CEL quantity library: parsed like ParseQuantity
 * (decimal SI, binary SI and exponent suffixes) into an exact rational, so that
 * comparisons and sums are exact.
 */
import { scanQuantity } from '../../machinery/quantity-syntax.js';

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

/** ParseQuantity; undefined when s is not a quantity. One linear scan (quantity-syntax.ts), then exact arithmetic. */
export function parseQuantity(s: string): Quantity | undefined {
  const parts = scanQuantity(s);
  if ('error' in parts) return undefined;
  const { negative, int, frac, base, exponent } = parts;
  // Decimal exponents as upstream's int32; beyond a thousand digits of scale no resource means anything.
  if (Math.abs(exponent) > 1000) return undefined;
  let num = BigInt(int + frac);
  let den = 10n ** BigInt(frac.length);
  if (base === 2) num *= 1n << BigInt(exponent);
  else if (exponent >= 0) num *= 10n ** BigInt(exponent);
  else den *= 10n ** BigInt(-exponent);
  return new Quantity(negative ? -num : num, den);
}
