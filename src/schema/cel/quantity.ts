/**
 * resource.Quantity for the CEL quantity library, with ParseQuantity's value: the number (decimal SI, binary SI or
 * exponent suffix) rounded up, away from zero, to a whole number of nano units, and a binary SI value capped at
 * 2^63-1. So a quantity is held exactly as a count of nano units, kept as decimal digits: parsing, comparing,
 * adding and subtracting are each linear in the digits (a quantity can be as long as a request; a BigInt would
 * take more than linear time to read 3 million digits, and a rational's reductions more still).
 */
import { scanQuantity } from '../../machinery/quantity-syntax.js';

const LIMB = 1e9;
const LIMB_DIGITS = 9;
const NANO_DIGITS = 9;
/** 2^63-1 units, as nano units: the cap upstream puts on a binary SI amount. */
const MAX_BINARY_NANO = `${2n ** 63n - 1n}${'0'.repeat(NANO_DIGITS)}`;
const MIN_INT64 = -(2n ** 63n);
const MAX_INT64 = 2n ** 63n - 1n;

/** Base-1e9 limbs, least significant first, of a string of decimal digits. */
function toLimbs(digits: string): number[] {
  const limbs: number[] = [];
  for (let end = digits.length; end > 0; end -= LIMB_DIGITS) {
    limbs.push(Number(digits.slice(Math.max(0, end - LIMB_DIGITS), end)));
  }
  return limbs;
}

/** Decimal digits (no leading zeros; '0' for zero) of base-1e9 limbs. */
function fromLimbs(limbs: number[]): string {
  let top = limbs.length - 1;
  while (top > 0 && limbs[top] === 0) top--;
  const parts = [String(limbs[top] ?? 0)];
  for (let i = top - 1; i >= 0; i--) parts.push(String(limbs[i]).padStart(LIMB_DIGITS, '0'));
  return parts.join('');
}

function stripZeros(digits: string): string {
  let i = 0;
  while (i < digits.length - 1 && digits.charCodeAt(i) === 0x30) i++;
  return i === 0 ? digits : digits.slice(i);
}

/** Compares two magnitudes written without leading zeros. */
function compareDigits(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function addDigits(a: string, b: string): string {
  const x = toLimbs(a);
  const y = toLimbs(b);
  const sum: number[] = [];
  let carry = 0;
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const s = (x[i] ?? 0) + (y[i] ?? 0) + carry;
    carry = s >= LIMB ? 1 : 0;
    sum.push(s - carry * LIMB);
  }
  if (carry) sum.push(carry);
  return fromLimbs(sum);
}

/** a - b, for a >= b. */
function subtractDigits(a: string, b: string): string {
  const x = toLimbs(a);
  const y = toLimbs(b);
  let borrow = 0;
  for (let i = 0; i < x.length; i++) {
    let d = x[i] - (y[i] ?? 0) - borrow;
    borrow = d < 0 ? 1 : 0;
    d += borrow * LIMB;
    x[i] = d;
  }
  return fromLimbs(x);
}

/** digits × 2^exponent, by factors of at most 2^10 (a limb times 1024 plus a carry stays an exact double). */
function shiftDigits(digits: string, exponent: number): string {
  const limbs = toLimbs(digits);
  for (let left = exponent; left > 0; left -= 10) {
    const factor = 2 ** Math.min(10, left);
    let carry = 0;
    for (let i = 0; i < limbs.length; i++) {
      const v = limbs[i] * factor + carry;
      carry = Math.floor(v / LIMB);
      limbs[i] = v - carry * LIMB;
    }
    while (carry) {
      limbs.push(carry % LIMB);
      carry = Math.floor(carry / LIMB);
    }
  }
  return fromLimbs(limbs);
}

/** The whole number of nano units of digits × 10^-scale, rounded up (as inf.RoundUp on the magnitude). */
function nanoRoundedUp(digits: string, scale: number): string {
  const keep = digits.length - scale + NANO_DIGITS;
  if (keep >= digits.length) return stripZeros(digits + '0'.repeat(keep - digits.length));
  const whole = keep > 0 ? digits.slice(0, keep) : '0';
  const rest = keep > 0 ? digits.slice(keep) : digits;
  return /[1-9]/.test(rest) ? addDigits(stripZeros(whole), '1') : stripZeros(whole);
}

export class Quantity {
  /** The magnitude in nano units, decimal digits without leading zeros. */
  readonly nano: string;
  readonly negative: boolean;

  constructor(negative: boolean, nano: string) {
    this.nano = nano;
    this.negative = negative && nano !== '0';
  }

  static ofInt(i: bigint): Quantity {
    return new Quantity(i < 0n, stripZeros(`${i < 0n ? -i : i}${'0'.repeat(NANO_DIGITS)}`));
  }

  sign(): number {
    return this.nano === '0' ? 0 : this.negative ? -1 : 1;
  }

  cmp(o: Quantity): number {
    if (this.sign() !== o.sign()) return this.sign() < o.sign() ? -1 : 1;
    const magnitude = compareDigits(this.nano, o.nano);
    return this.negative && magnitude !== 0 ? -magnitude : magnitude;
  }

  add(o: Quantity): Quantity {
    if (this.negative === o.negative) return new Quantity(this.negative, addDigits(this.nano, o.nano));
    const magnitude = compareDigits(this.nano, o.nano);
    if (magnitude === 0) return new Quantity(false, '0');
    return magnitude > 0
      ? new Quantity(this.negative, subtractDigits(this.nano, o.nano))
      : new Quantity(o.negative, subtractDigits(o.nano, this.nano));
  }

  sub(o: Quantity): Quantity {
    return this.add(new Quantity(!o.negative, o.nano));
  }

  /** The value as an int64, when it is a whole number in that range. */
  asInteger(): bigint | undefined {
    const units = this.nano.length > NANO_DIGITS ? this.nano.slice(0, -NANO_DIGITS) : '0';
    if (units.length > 19 || (this.nano !== '0' && !this.nano.endsWith('0'.repeat(NANO_DIGITS)))) return undefined;
    const value = this.negative ? -BigInt(units) : BigInt(units);
    return value >= MIN_INT64 && value <= MAX_INT64 ? value : undefined;
  }

  isInteger(): boolean {
    return this.asInteger() !== undefined;
  }

  asFloat(): number {
    const units = this.nano.length > NANO_DIGITS ? this.nano.slice(0, -NANO_DIGITS) : '0';
    const value = Number(`${units}.${this.nano.slice(-NANO_DIGITS).padStart(NANO_DIGITS, '0')}`);
    return this.negative ? -value : value;
  }
}

/** ParseQuantity; undefined when s is not a quantity. One linear scan (quantity-syntax.ts), then linear arithmetic. */
export function parseQuantity(s: string): Quantity | undefined {
  const parts = scanQuantity(s);
  if ('error' in parts) return undefined;
  const { negative, int, frac, base, exponent } = parts;
  // Decimal exponents as upstream's int32. A negative one of any size costs nothing (below a nano unit, a value
  // rounds up to one); a positive one over a thousand is refused: upstream holds 1e2000000000 as a scale, this as
  // the digits it stands for, and no resource means a number of a thousand digits.
  if (exponent > 1000) return undefined;
  const digits = stripZeros(int + frac);
  if (base === 10) return new Quantity(negative, nanoRoundedUp(digits, frac.length - exponent));
  // Binary SI: at least 1024 times the integer part, so more than 20 digits of it is over the cap already.
  if (int.length > 20) return new Quantity(negative, MAX_BINARY_NANO);
  const nano = nanoRoundedUp(shiftDigits(digits, exponent), frac.length);
  return new Quantity(negative, compareDigits(nano, MAX_BINARY_NANO) > 0 ? MAX_BINARY_NANO : nano);
}
