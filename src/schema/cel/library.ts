/**
 * Kubernetes' CEL libraries on top of @marcbachmann/cel-js: cel-go string
 * extensions (replace, charAt, reverse, format, strings.quote), lists (isSorted,
 * sum, min, max, indexOf, lastIndexOf, distinct, flatten, reverse, slice, sort),
 * regex (find, findAll; matches() is rerouted to the RE2 engine), urls, quantity,
 * ip/cidr, sets, math.greatest/least and friends, base64.
 */
import { stringifyJson } from '../../machinery/json.js';
import type { Environment } from '@marcbachmann/cel-js';
import { Budget, compileRegex } from '../regex/index.js';
import { cidrOf, ipOf, IPValue, CIDRValue } from './net.js';
import { parseQuantity, Quantity } from './quantity.js';

/** The name matches() is renamed to in rule sources (same length, so error positions hold). */
export const MATCHES_ALIAS = '_kmatch';

class CelError extends Error {}

const num = (v: unknown): number => Number(v);

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  const x = num(a);
  const y = num(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A shared budget for regex work inside CEL (bounded by the CEL cost meter anyway). */
const regexBudget = new Budget(Number.MAX_SAFE_INTEGER);

function regex(pattern: string) {
  try {
    return compileRegex(pattern);
  } catch (e) {
    throw new CelError((e as Error).message);
  }
}

function cpIndex(s: string, i: number): string {
  const cps = Array.from(s);
  if (i < 0 || i > cps.length) throw new CelError(`index out of range: ${i}`);
  return i === cps.length ? '' : cps[i];
}

function goFormat(fmt: string, args: unknown[]): string {
  let i = 0;
  return fmt.replace(/%([%sdfeExXob])|%\.(\d+)([fe])/g, (m, verb: string | undefined, prec: string | undefined, pverb: string | undefined) => {
    if (verb === '%') return '%';
    if (i >= args.length) throw new CelError(`index ${i} out of range`);
    const a = args[i++];
    const v = verb ?? pverb;
    switch (v) {
      case 's':
        return typeof a === 'string' ? a : String(a);
      case 'd':
        return String(a);
      case 'f':
        return num(a).toFixed(prec ? Number(prec) : 6);
      case 'e':
        return num(a).toExponential(prec ? Number(prec) : 6).replace(/e([+-])(\d)$/, 'e$10$2');
      case 'x':
        return typeof a === 'string' ? Buffer.from(a).toString('hex') : BigInt(a as bigint).toString(16);
      case 'X':
        return typeof a === 'string' ? Buffer.from(a).toString('hex').toUpperCase() : BigInt(a as bigint).toString(16).toUpperCase();
      case 'o':
        return BigInt(a as bigint).toString(8);
      case 'b':
        return typeof a === 'boolean' ? String(a) : BigInt(a as bigint).toString(2);
    }
    return m;
  });
}

function sorted(l: unknown[]): boolean {
  for (let i = 1; i < l.length; i++) if (compare(l[i - 1], l[i]) > 0) return false;
  return true;
}

const listKey = (v: unknown): string => (typeof v === 'bigint' ? `i${v}` : typeof v === 'number' ? `f${v}` : typeof v === 'string' ? `s${v}` : `o${objectKey(v)}`);

/** An object's key as JSON (integers as strings); nested deeper than the native encoder's stack, without recursion. */
function objectKey(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x));
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return stringifyJson(v);
  }
}

export function registerLibrary(env: Environment): void {
  const fn = (sig: string, handler: (...args: never[]) => unknown): void => {
    env.registerFunction(sig, handler);
  };
  // regex
  fn(`string.${MATCHES_ALIAS}(string): bool`, (s: string, p: string) => regex(p).test(s, regexBudget));
  fn(`${MATCHES_ALIAS}(string, string): bool`, (s: string, p: string) => regex(p).test(s, regexBudget));
  fn('string.find(string): string', (s: string, p: string) => regex(p).find(s, regexBudget) ?? '');
  fn('string.findAll(string): list<string>', (s: string, p: string) => regex(p).findAll(s, -1, regexBudget));
  fn('string.findAll(string, int): list<string>', (s: string, p: string, n: bigint) => regex(p).findAll(s, Number(n), regexBudget));

  // strings
  fn('string.replace(string, string): string', (s: string, a: string, b: string) => s.split(a).join(b));
  fn('string.replace(string, string, int): string', (s: string, a: string, b: string, n: bigint) => {
    let limit = Number(n);
    if (limit < 0) return s.split(a).join(b);
    let out = '';
    let rest = s;
    while (limit-- > 0) {
      const i = rest.indexOf(a);
      if (i < 0) break;
      out += rest.slice(0, i) + b;
      rest = rest.slice(i + a.length);
      if (a === '') {
        out += rest.slice(0, 1);
        rest = rest.slice(1);
      }
    }
    return out + rest;
  });
  fn('string.charAt(int): string', (s: string, i: bigint) => cpIndex(s, Number(i)));
  fn('string.reverse(): string', (s: string) => Array.from(s).reverse().join(''));
  fn('string.format(list<dyn>): string', (s: string, args: unknown[]) => goFormat(s, args));
  class StringsNamespace {}
  env.registerType('StringsNamespace', StringsNamespace).registerConstant('strings', 'StringsNamespace', new StringsNamespace());
  fn('StringsNamespace.quote(string): string', (_ns: unknown, s: string) => JSON.stringify(s));

  // lists
  for (const t of ['int', 'double', 'string', 'bool', 'google.protobuf.Timestamp', 'google.protobuf.Duration']) {
    fn(`list<${t}>.isSorted(): bool`, (l: unknown[]) => sorted(l));
    if (t === 'int' || t === 'double' || t === 'google.protobuf.Duration') {
      fn(`list<${t}>.sum(): ${t}`, (l: unknown[]) => (t === 'int' ? l.reduce((a: bigint, b) => a + (b as bigint), 0n) : t === 'double' ? l.reduce((a: number, b) => a + (b as number), 0) : l.reduce((a, b) => (a as { addDuration(d: unknown): unknown }).addDuration(b))));
    }
    fn(`list<${t}>.min(): ${t}`, (l: unknown[]) => {
      if (!l.length) throw new CelError('min called on empty list');
      return l.reduce((a, b) => (compare(b, a) < 0 ? b : a));
    });
    fn(`list<${t}>.max(): ${t}`, (l: unknown[]) => {
      if (!l.length) throw new CelError('max called on empty list');
      return l.reduce((a, b) => (compare(b, a) > 0 ? b : a));
    });
    fn(`list<${t}>.sort(): list<${t}>`, (l: unknown[]) => [...l].sort(compare));
  }
  fn('list<T>.indexOf(T): int', (l: unknown[], v: unknown) => {
    const key = listKey(v);
    return BigInt(l.findIndex((x) => listKey(x) === key));
  });
  fn('list<T>.lastIndexOf(T): int', (l: unknown[], v: unknown) => {
    const key = listKey(v);
    for (let i = l.length - 1; i >= 0; i--) if (listKey(l[i]) === key) return BigInt(i);
    return -1n;
  });
  fn('list<T>.distinct(): list<T>', (l: unknown[]) => {
    const seen = new Set<string>();
    return l.filter((x) => (seen.has(listKey(x)) ? false : (seen.add(listKey(x)), true)));
  });
  fn('list<T>.reverse(): list<T>', (l: unknown[]) => [...l].reverse());
  fn('list<T>.slice(int, int): list<T>', (l: unknown[], a: bigint, b: bigint) => {
    if (a < 0n || b < a || b > BigInt(l.length)) throw new CelError(`cannot slice(${a}, ${b}), invalid range`);
    return l.slice(Number(a), Number(b));
  });
  fn('list<list<T>>.flatten(): list<T>', (l: unknown[][]) => l.flat());
  class ListsNamespace {}
  env.registerType('ListsNamespace', ListsNamespace).registerConstant('lists', 'ListsNamespace', new ListsNamespace());
  fn('ListsNamespace.range(int): list<int>', (_ns: unknown, n: bigint) => Array.from({ length: Math.max(0, Math.min(Number(n), 1e6)) }, (_v, i) => BigInt(i)));

  // sets
  class SetsNamespace {}
  env.registerType('SetsNamespace', SetsNamespace).registerConstant('sets', 'SetsNamespace', new SetsNamespace());
  const keys = (l: unknown[]): Set<string> => new Set(l.map(listKey));
  fn('SetsNamespace.contains(list<T>, list<T>): bool', (_ns: unknown, a: unknown[], b: unknown[]) => {
    const ka = keys(a);
    return b.every((x) => ka.has(listKey(x)));
  });
  fn('SetsNamespace.equivalent(list<T>, list<T>): bool', (_ns: unknown, a: unknown[], b: unknown[]) => {
    const ka = keys(a);
    const kb = keys(b);
    return ka.size === kb.size && [...ka].every((k) => kb.has(k));
  });
  fn('SetsNamespace.intersects(list<T>, list<T>): bool', (_ns: unknown, a: unknown[], b: unknown[]) => {
    const ka = keys(a);
    return b.some((x) => ka.has(listKey(x)));
  });

  // math
  class MathNamespace {}
  env.registerType('MathNamespace', MathNamespace).registerConstant('math', 'MathNamespace', new MathNamespace());
  const pick = (args: unknown[], dir: number): unknown => {
    if (!args.length) throw new CelError('math.@max(list) argument must not be empty');
    return args.reduce((a, b) => (compare(b, a) * dir > 0 ? b : a));
  };
  for (const t of ['int', 'double']) {
    for (let n = 1; n <= 6; n++) {
      const params = Array(n).fill(t).join(', ');
      fn(`MathNamespace.greatest(${params}): ${t}`, (_ns: unknown, ...a: unknown[]) => pick(a, 1));
      fn(`MathNamespace.least(${params}): ${t}`, (_ns: unknown, ...a: unknown[]) => pick(a, -1));
    }
    fn(`MathNamespace.greatest(list<${t}>): ${t}`, (_ns: unknown, l: unknown[]) => pick(l, 1));
    fn(`MathNamespace.least(list<${t}>): ${t}`, (_ns: unknown, l: unknown[]) => pick(l, -1));
  }
  fn('MathNamespace.ceil(double): double', (_ns: unknown, x: number) => Math.ceil(x));
  fn('MathNamespace.floor(double): double', (_ns: unknown, x: number) => Math.floor(x));
  fn('MathNamespace.round(double): double', (_ns: unknown, x: number) => (x < 0 ? -Math.round(-x) : Math.round(x)));
  fn('MathNamespace.trunc(double): double', (_ns: unknown, x: number) => Math.trunc(x));
  fn('MathNamespace.abs(int): int', (_ns: unknown, x: bigint) => (x < 0n ? -x : x));
  fn('MathNamespace.abs(double): double', (_ns: unknown, x: number) => Math.abs(x));
  fn('MathNamespace.sign(int): int', (_ns: unknown, x: bigint) => (x > 0n ? 1n : x < 0n ? -1n : 0n));
  fn('MathNamespace.sign(double): double', (_ns: unknown, x: number) => Math.sign(x));
  fn('MathNamespace.isNaN(double): bool', (_ns: unknown, x: number) => Number.isNaN(x));
  fn('MathNamespace.isInf(double): bool', (_ns: unknown, x: number) => x === Infinity || x === -Infinity);
  fn('MathNamespace.isFinite(double): bool', (_ns: unknown, x: number) => Number.isFinite(x));

  // base64
  class Base64Namespace {}
  env.registerType('Base64Namespace', Base64Namespace).registerConstant('base64', 'Base64Namespace', new Base64Namespace());
  fn('Base64Namespace.encode(bytes): string', (_ns: unknown, b: Uint8Array) => Buffer.from(b).toString('base64'));
  fn('Base64Namespace.decode(string): bytes', (_ns: unknown, s: string) => {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) throw new CelError('illegal base64 data');
    return new Uint8Array(Buffer.from(s, 'base64'));
  });

  // urls
  class URLValue {
    constructor(readonly u: URL) {}
  }
  env.registerType('net.URL', URLValue);
  const parseURL = (s: string): URL | undefined => {
    try {
      if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) && !s.startsWith('/')) return undefined;
      return new URL(s, 'http://relative.invalid');
    } catch {
      return undefined;
    }
  };
  fn('url(string): net.URL', (s: string) => {
    const u = parseURL(s);
    if (!u) throw new CelError(`URL parse error during conversion from string: ${s}`);
    return new URLValue(u);
  });
  fn('isURL(string): bool', (s: string) => parseURL(s) !== undefined);
  const host = (u: URL): string => (u.host === 'relative.invalid' ? '' : u.host);
  fn('net.URL.getScheme(): string', (v: URLValue) => (host(v.u) === '' && v.u.protocol === 'http:' ? '' : v.u.protocol.slice(0, -1)));
  fn('net.URL.getHost(): string', (v: URLValue) => host(v.u));
  fn('net.URL.getHostname(): string', (v: URLValue) => (host(v.u) ? v.u.hostname.replace(/^\[|\]$/g, '') : ''));
  fn('net.URL.getPort(): string', (v: URLValue) => v.u.port);
  fn('net.URL.getEscapedPath(): string', (v: URLValue) => v.u.pathname);
  fn('net.URL.getQuery(): map<string, list<string>>', (v: URLValue) => {
    const m = new Map<string, string[]>();
    for (const [k, x] of v.u.searchParams) m.set(k, [...(m.get(k) ?? []), x]);
    return m;
  });

  // quantity
  env.registerType('kubernetes.Quantity', Quantity);
  fn('quantity(string): kubernetes.Quantity', (s: string) => {
    const q = parseQuantity(s);
    if (!q) throw new CelError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    return q;
  });
  fn('isQuantity(string): bool', (s: string) => parseQuantity(s) !== undefined);
  fn('kubernetes.Quantity.sign(): int', (q: Quantity) => BigInt(q.sign()));
  fn('kubernetes.Quantity.isGreaterThan(kubernetes.Quantity): bool', (a: Quantity, b: Quantity) => a.cmp(b) > 0);
  fn('kubernetes.Quantity.isLessThan(kubernetes.Quantity): bool', (a: Quantity, b: Quantity) => a.cmp(b) < 0);
  fn('kubernetes.Quantity.compareTo(kubernetes.Quantity): int', (a: Quantity, b: Quantity) => BigInt(a.cmp(b)));
  fn('kubernetes.Quantity.add(kubernetes.Quantity): kubernetes.Quantity', (a: Quantity, b: Quantity) => a.add(b));
  fn('kubernetes.Quantity.add(int): kubernetes.Quantity', (a: Quantity, b: bigint) => a.add(Quantity.ofInt(b)));
  fn('kubernetes.Quantity.sub(kubernetes.Quantity): kubernetes.Quantity', (a: Quantity, b: Quantity) => a.sub(b));
  fn('kubernetes.Quantity.sub(int): kubernetes.Quantity', (a: Quantity, b: bigint) => a.sub(Quantity.ofInt(b)));
  fn('kubernetes.Quantity.isInteger(): bool', (q: Quantity) => q.isInteger());
  fn('kubernetes.Quantity.asInteger(): int', (q: Quantity) => {
    const v = q.asInteger();
    if (v === undefined) throw new CelError('cannot convert value to integer');
    return v;
  });
  fn('kubernetes.Quantity.asApproximateFloat(): double', (q: Quantity) => q.asFloat());

  // ip and cidr
  env.registerType('net.IP', IPValue);
  env.registerType('net.CIDR', CIDRValue);
  fn('ip(string): net.IP', (s: string) => {
    const v = ipOf(s);
    if (!v) throw new CelError(`IP Address ${JSON.stringify(s)} parse error during conversion from string: ParseAddr(${JSON.stringify(s)}): unable to parse IP`);
    return v;
  });
  fn('isIP(string): bool', (s: string) => ipOf(s) !== undefined);
  fn('net.IP.family(): int', (v: IPValue) => BigInt(v.family));
  fn('net.IP.isUnspecified(): bool', (v: IPValue) => v.isUnspecified());
  fn('net.IP.isLoopback(): bool', (v: IPValue) => v.isLoopback());
  fn('net.IP.isLinkLocalMulticast(): bool', (v: IPValue) => v.isLinkLocalMulticast());
  fn('net.IP.isLinkLocalUnicast(): bool', (v: IPValue) => v.isLinkLocalUnicast());
  fn('net.IP.isGlobalUnicast(): bool', (v: IPValue) => v.isGlobalUnicast());
  fn('string(net.IP): string', (v: IPValue) => v.toString());
  fn('cidr(string): net.CIDR', (s: string) => {
    const v = cidrOf(s);
    if (!v) throw new CelError(`network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(s)}): bad prefix`);
    return v;
  });
  fn('isCIDR(string): bool', (s: string) => cidrOf(s) !== undefined);
  fn('net.CIDR.containsIP(net.IP): bool', (c: CIDRValue, ip: IPValue) => c.containsIP(ip));
  fn('net.CIDR.containsIP(string): bool', (c: CIDRValue, s: string) => {
    const ip = ipOf(s);
    if (!ip) throw new CelError(`IP Address ${JSON.stringify(s)} parse error`);
    return c.containsIP(ip);
  });
  fn('net.CIDR.containsCIDR(net.CIDR): bool', (c: CIDRValue, o: CIDRValue) => c.containsCIDR(o));
  fn('net.CIDR.containsCIDR(string): bool', (c: CIDRValue, s: string) => {
    const o = cidrOf(s);
    if (!o) throw new CelError(`network address parse error`);
    return c.containsCIDR(o);
  });
  fn('net.CIDR.ip(): net.IP', (c: CIDRValue) => c.ip);
  fn('net.CIDR.masked(): net.CIDR', (c: CIDRValue) => c.masked());
  fn('net.CIDR.prefixLength(): int', (c: CIDRValue) => BigInt(c.bits));
  fn('string(net.CIDR): string', (c: CIDRValue) => c.toString());
}
