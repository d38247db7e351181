/**
 * IP addresses and CIDRs for the CEL ip/cidr libraries, parsed as Go's netip does
 * (no leading zeros in IPv4, no zones).
 */

function parseV4(s: string): number[] | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255) return undefined;
    out.push(Number(p));
  }
  return out;
}

function parseV6(s: string): number[] | undefined {
  if (s.includes('%')) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (t: string): number[] | undefined => {
    if (t === '') return [];
    const out: number[] = [];
    const parts = t.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = parseV4(p);
        if (!v4) return undefined;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(p)) out.push(parseInt(p, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  const n = head.length + tail.length;
  if (halves.length === 2 ? n > 7 : n !== 8) return undefined;
  const all = [...head, ...new Array(8 - n).fill(0), ...tail];
  return all.flatMap((g) => [g >> 8, g & 0xff]);
}

export class IPValue {
  constructor(readonly bytes: number[]) {}
  get family(): number {
    return this.bytes.length === 4 ? 4 : 6;
  }
  isUnspecified(): boolean {
    return this.bytes.every((b) => b === 0);
  }
  isLoopback(): boolean {
    return this.family === 4 ? this.bytes[0] === 127 : this.bytes.slice(0, 15).every((b) => b === 0) && this.bytes[15] === 1;
  }
  isMulticast(): boolean {
    return this.family === 4 ? this.bytes[0] >> 4 === 14 : this.bytes[0] === 0xff;
  }
  isLinkLocalMulticast(): boolean {
    return this.family === 4 ? this.bytes[0] === 224 && this.bytes[1] === 0 && this.bytes[2] === 0 : this.bytes[0] === 0xff && (this.bytes[1] & 0x0f) === 0x02;
  }
  isLinkLocalUnicast(): boolean {
    return this.family === 4 ? this.bytes[0] === 169 && this.bytes[1] === 254 : this.bytes[0] === 0xfe && (this.bytes[1] & 0xc0) === 0x80;
  }
  isGlobalUnicast(): boolean {
    if (this.family === 4 && this.bytes.every((b) => b === 255)) return false;
    return !this.isUnspecified() && !this.isLoopback() && !this.isMulticast() && !this.isLinkLocalUnicast();
  }
  toString(): string {
    if (this.family === 4) return this.bytes.join('.');
    const g = Array.from({ length: 8 }, (_v, i) => (this.bytes[2 * i] << 8) | this.bytes[2 * i + 1]);
    let best = -1;
    let bestLen = 1;
    for (let i = 0; i < 8; ) {
      let j = i;
      while (j < 8 && g[j] === 0) j++;
      if (j - i > bestLen) {
        best = i;
        bestLen = j - i;
      }
      i = j === i ? i + 1 : j;
    }
    const hex = (a: number[]): string => a.map((x) => x.toString(16)).join(':');
    return best < 0 ? hex(g) : `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
  }
}

export function ipOf(s: string): IPValue | undefined {
  const b = s.includes(':') ? parseV6(s) : parseV4(s);
  return b ? new IPValue(b) : undefined;
}

export class CIDRValue {
  constructor(
    readonly ip: IPValue,
    readonly bits: number,
  ) {}
  private prefixOf(ip: IPValue): boolean {
    if (ip.family !== this.ip.family) return false;
    for (let i = 0; i < this.bits; i++) {
      const m = 0x80 >> (i % 8);
      if ((ip.bytes[i >> 3] & m) !== (this.ip.bytes[i >> 3] & m)) return false;
    }
    return true;
  }
  containsIP(ip: IPValue): boolean {
    return this.prefixOf(ip);
  }
  containsCIDR(o: CIDRValue): boolean {
    return o.ip.family === this.ip.family && o.bits >= this.bits && this.prefixOf(o.ip);
  }
  masked(): CIDRValue {
    const b = this.ip.bytes.map((x, i) => {
      const keep = Math.max(0, Math.min(8, this.bits - i * 8));
      return x & ((0xff << (8 - keep)) & 0xff);
    });
    return new CIDRValue(new IPValue(b), this.bits);
  }
  toString(): string {
    return `${this.ip.toString()}/${this.bits}`;
  }
}

export function cidrOf(s: string): CIDRValue | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const ip = ipOf(s.slice(0, slash));
  const bits = s.slice(slash + 1);
  if (!ip || !/^(0|[1-9][0-9]*)$/.test(bits) || Number(bits) > (ip.family === 4 ? 32 : 128)) return undefined;
  return new CIDRValue(ip, Number(bits));
}
