/**
 * Resource lists as quota adds and compares them (k8s.io/apiserver's quota helpers): quantities with their
 * format (a sum keeps the format of its first term unless that is zero, as resource.Quantity's Add does), written in canonical form
 * (Quantity.String). Arithmetic is the CEL quantity's (linear in the digits).
 */
import { parseQuantity, Quantity } from '../../schema/cel/quantity.js';
import { formatQuantity, quantityFormat, type QuantityFormat } from '../../schema/cel/quantity-format.js';
import { isRecord } from '../../util/json-object.js';

export interface Amount {
  readonly q: Quantity;
  readonly format: QuantityFormat;
}

/** A ResourceList: resource name → amount. */
export type Amounts = Map<string, Amount>;

/** A quantity's text as an amount (undefined: not a quantity). */
export function amountOf(value: unknown): Amount | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const text = String(value);
  const q = parseQuantity(text);
  return q ? { q, format: quantityFormat(text) } : undefined;
}

export const ONE: Amount = { q: Quantity.ofInt(1n), format: 'DecimalSI' };
export const countOf = (n: number): Amount => ({ q: Quantity.ofInt(BigInt(n)), format: 'DecimalSI' });

/** A ResourceList's JSON (`{cpu: '500m'}`) as amounts; entries that are not quantities are left out. */
export function amountsOf(list: unknown): Amounts {
  const out: Amounts = new Map();
  if (!isRecord(list)) return out;
  for (const [name, value] of Object.entries(list)) {
    const a = amountOf(value);
    if (a) out.set(name, a);
  }
  return out;
}

/** quota.Add, into `into` (changed in place: a sum over many lists is linear in them all). */
export function addInto(into: Amounts, b: Amounts): Amounts {
  for (const [name, v] of b) {
    const mine = into.get(name);
    // A zero takes the other's format, as resource.Quantity's Add does.
    into.set(name, mine ? { q: mine.q.add(v.q), format: mine.q.sign() === 0 ? v.format : mine.format } : v);
  }
  return into;
}

/** quota.Add. */
export const addAmounts = (a: Amounts, b: Amounts): Amounts => addInto(new Map(a), b);

/** quota.Max, into `into` (changed in place). */
export function maxInto(into: Amounts, b: Amounts): Amounts {
  for (const [name, v] of b) {
    const mine = into.get(name);
    if (!mine || v.q.cmp(mine.q) > 0) into.set(name, v);
  }
  return into;
}

/** quota.SubtractWithNonNegativeResult. */
export function subtractNonNegative(a: Amounts, b: Amounts): Amounts {
  const out: Amounts = new Map();
  for (const [name, v] of a) {
    const other = b.get(name);
    const diff = other ? v.q.sub(other.q) : v.q;
    out.set(name, { q: diff.sign() < 0 ? Quantity.ofInt(0n) : diff, format: v.q.sign() === 0 && other ? other.format : v.format });
  }
  return out;
}

/** quota.Mask: only these names. */
export function maskAmounts(a: Amounts, names: Iterable<string>): Amounts {
  const out: Amounts = new Map();
  for (const n of names) {
    const v = a.get(n);
    if (v) out.set(n, v);
  }
  return out;
}

export const removeZeros = (a: Amounts): Amounts => new Map([...a].filter(([, v]) => v.q.sign() !== 0));
export const negativeNames = (a: Amounts): string[] => [...a].filter(([, v]) => v.q.sign() < 0).map(([n]) => n);
export const sameAmounts = (a: Amounts, b: Amounts): boolean => a.size === b.size && [...a].every(([n, v]) => b.get(n)?.q.cmp(v.q) === 0);

/** quota.LessThanOrEqual: whether every amount of `a` is at most `b`'s (a name `b` lacks is not limited), and the names over. */
export function lessThanOrEqual(a: Amounts, b: Amounts): { allowed: boolean; exceeded: string[] } {
  const exceeded = [...a].filter(([n, v]) => {
    const limit = b.get(n);
    return limit !== undefined && v.q.cmp(limit.q) > 0;
  });
  return { allowed: exceeded.length === 0, exceeded: exceeded.map(([n]) => n) };
}

/** A ResourceList's JSON, in canonical text. */
export function amountsJson(a: Amounts): Record<string, string> {
  return Object.fromEntries([...a].map(([n, v]) => [n, formatAmount(v)]));
}

/** The names, sorted, with their amounts (`cpu=500m,pods=1`), as the quota errors print them. */
export function prettyAmounts(a: Amounts): string {
  return [...a.keys()]
    .sort()
    .map((n) => `${n}=${formatAmount(a.get(n)!)}`)
    .join(',');
}

/** Quantity.String of an amount. */
export function formatAmount({ q, format }: Amount): string {
  return formatQuantity(q, format);
}
