/**
 * Services as kube-apiserver's service REST writes them: a cluster IP allocated from
 * `--service-cluster-ip-range` (a random free address; one given must be free and in the range),
 * `clusterIPs`, `ipFamilies` and `ipFamilyPolicy` filled in, node ports allocated from
 * `--service-node-port-range` for NodePort and LoadBalancer services, and on update the allocated
 * values kept when the new object leaves them out (so `kubectl replace` of a manifest keeps them).
 * Addresses in use are those of the stored Services (the watch cache), checked on every write.
 */
import { randomInt } from 'node:crypto';
import { field, type FieldError } from '../../machinery/field-errors.js';
import type { Strategy } from '../../registry/types.js';
import type { KObject } from '../../api/object.js';
import { errors } from '../../machinery/status.js';
import { validateServiceSpec } from './pod-spec-validation.js';
import { isRecord as isObject, records, type JsonRecord } from '../../util/json-object.js';
import type { ViewHandlers } from '../../cache/cache-view.js';

type Obj = JsonRecord;
const ports = (spec: Obj): Obj[] => records(spec.ports);

/** Records a value a write takes, and gives it back. */
type Take = <T extends string | number>(v: T) => T;
/** Values taken: by other Services, or by this write so far. */
interface InUse<V> {
  has(v: V): boolean;
  add(v: V): void;
}

export interface ServiceRanges {
  /** IPv4 CIDR, e.g. 10.0.0.0/24 (kube-apiserver's default). */
  clusterIPRange: string;
  /** Inclusive port range, e.g. 30000-32767. */
  nodePortRange: string;
}

export const DEFAULT_SERVICE_RANGES: ServiceRanges = { clusterIPRange: '10.0.0.0/24', nodePortRange: '30000-32767' };

interface Cidr {
  base: number;
  size: number;
  text: string;
}

function ipToNumber(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3];
}

const numberToIp = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/** The ranges parsed; firstIP is the kubernetes Service's address. Throws on a malformed flag. */
export function parseServiceRanges(r: ServiceRanges): { cidr: Cidr; nodePorts: [number, number]; firstIP: string } {
  const m = /^([\d.]+)\/(\d{1,2})$/.exec(r.clusterIPRange);
  const base = m ? ipToNumber(m[1]) : undefined;
  const bits = m ? Number(m[2]) : NaN;
  if (base === undefined || !(bits >= 8 && bits <= 30)) throw new Error(`--service-cluster-ip-range: ${r.clusterIPRange} is not an IPv4 CIDR with a prefix of 8 to 30 bits`);
  const size = 2 ** (32 - bits);
  const np = /^(\d+)-(\d+)$/.exec(r.nodePortRange);
  const lo = np ? Number(np[1]) : NaN;
  const hi = np ? Number(np[2]) : NaN;
  if (!(lo >= 1 && hi <= 65535 && lo <= hi)) throw new Error(`--service-node-port-range: ${r.nodePortRange} is not a port range like 30000-32767`);
  const start = base - (base % size);
  return { cidr: { base: start, size, text: `${numberToIp(start)}/${bits}` }, nodePorts: [lo, hi], firstIP: numberToIp(start + 1) };
}

/**
 * The Service strategy over `base`, allocating from the ranges; `follow` keeps a view of the stored Services (the
 * addresses and node ports each holds) up to date Service by Service: a write reads no other Service (with tens of
 * thousands of Services, reading them all cost each write 40-50 ms).
 */
export function serviceStrategy(base: Strategy, ranges: ServiceRanges, follow: (on: ViewHandlers) => { refresh(): void }): Strategy {
  const { cidr, nodePorts } = parseServiceRanges(ranges);
  // Values handed out lately, which the cache may not show yet (its events trail the writes), with the
  // object they went to (its own retry, as a generated name's, may have them again). A dry run takes none.
  const recent = new Map<string | number, { until: number; owner: object }>();
  const remember = (v: string | number, owner: object) => {
    const now = Date.now();
    for (const [k, r] of recent) if (r.until < now) recent.delete(k);
    recent.set(v, { until: now + 10_000, owner });
  };

  // What each stored Service holds (by its key, and by namespace/name), and how many hold each address and port.
  type Holding = { id: string; ips: string[]; ports: number[] };
  const byKey = new Map<string, Holding>();
  const byId = new Map<string, Holding>();
  const ipHolders = new Map<string, number>();
  const portHolders = new Map<number, number>();
  const count = <V>(holders: Map<V, number>, v: V, by: number) => {
    const n = (holders.get(v) ?? 0) + by;
    if (n > 0) holders.set(v, n);
    else holders.delete(v);
  };
  const view = follow({
    reset() {
      byKey.clear();
      byId.clear();
      ipHolders.clear();
      portHolders.clear();
    },
    set(key, svc) {
      const old = byKey.get(key);
      if (old) {
        for (const ip of old.ips) count(ipHolders, ip, -1);
        for (const p of old.ports) count(portHolders, p, -1);
        byKey.delete(key);
        byId.delete(old.id);
      }
      if (!svc) return;
      const spec = isObject(svc.spec) ? svc.spec : {};
      const holding: Holding = {
        id: `${String(svc.metadata?.namespace)}/${String(svc.metadata?.name)}`,
        ips: (Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [spec.clusterIP]).filter((ip): ip is string => typeof ip === 'string'),
        ports: ports(spec).flatMap((p) => (typeof p.nodePort === 'number' ? [p.nodePort] : [])),
      };
      byKey.set(key, holding);
      byId.set(holding.id, holding);
      for (const ip of holding.ips) count(ipHolders, ip, 1);
      for (const p of holding.ports) count(portHolders, p, 1);
    },
  });

  /** The addresses and ports other Services hold (the stored version of `self` aside), or were lately given. */
  const inUse = (self: KObject) => {
    view.refresh();
    const own = byId.get(`${String(self.metadata?.namespace)}/${String(self.metadata?.name)}`);
    const used = <V extends string | number>(holders: Map<V, number>, mine: readonly V[]): InUse<V> => {
      const added = new Set<V>();
      return {
        has(v) {
          if (added.has(v) || (holders.get(v) ?? 0) - mine.filter((m) => m === v).length > 0) return true;
          const r = recent.get(v);
          return r !== undefined && r.owner !== self;
        },
        add: (v) => void added.add(v),
      };
    };
    return { ips: used(ipHolders, own?.ips ?? []), usedPorts: used(portHolders, own?.ports ?? []) };
  };

  /** A free address: random, preferring the upper part of the range as upstream's allocator does. */
  const allocateIP = (ips: InUse<string>, taken: Take): string => {
    const first = cidr.base + 1;
    const last = cidr.base + cidr.size - 2;
    const lowerBand = Math.min(Math.max(16, Math.floor(cidr.size / 16)), 256);
    const bands: Array<[number, number]> = [[Math.min(first + lowerBand, last), last], [first, last]];
    for (const [lo, hi] of bands) {
      for (let i = 0; i < 64; i++) {
        const ip = numberToIp(randomInt(lo, hi + 1));
        if (!ips.has(ip)) return taken(ip);
      }
      for (let n = lo; n <= hi; n++) if (!ips.has(numberToIp(n))) return taken(numberToIp(n));
    }
    throw errors.internal(`failed to allocate a serviceIP: range is full`);
  };

  const allocatePort = (used: InUse<number>, taken: Take): number => {
    const [lo, hi] = nodePorts;
    for (let i = 0; i < 64; i++) {
      const p = randomInt(lo, hi + 1);
      if (!used.has(p)) return taken(p);
    }
    for (let p = lo; p <= hi; p++) if (!used.has(p)) return taken(p);
    throw errors.internal('failed to allocate a nodePort: range is full');
  };

  /** A requested cluster IP: free, and a host address of the range (not its network or broadcast address). */
  const checkIP = (requested: string, ips: InUse<string>, taken: Take): FieldError | undefined => {
    const n = ipToNumber(requested);
    if (n === undefined || n <= cidr.base || n >= cidr.base + cidr.size - 1) {
      return field.invalid('spec.clusterIPs', [requested], `failed to allocate IP ${requested}: provided IP is not in the valid range. The range of valid IPs is ${cidr.text}`);
    }
    if (ips.has(requested)) return field.invalid('spec.clusterIPs', [requested], `failed to allocate IP ${requested}: provided IP is already allocated`);
    taken(requested);
    return undefined;
  };

  /** The cluster IP, its families and policy (NormalizeClusterIPs, then the allocator's); errors for a requested one that cannot be had. */
  const allocateClusterIP = (spec: Obj, oldSpec: Obj | undefined, ips: InUse<string>, taken: Take): FieldError[] => {
    if (spec.type === 'ExternalName') {
      delete spec.clusterIP;
      delete spec.clusterIPs;
      delete spec.ipFamilies;
      delete spec.ipFamilyPolicy;
      return [];
    }
    const listed = Array.isArray(spec.clusterIPs) && typeof spec.clusterIPs[0] === 'string' ? spec.clusterIPs[0] : '';
    let requested = typeof spec.clusterIP === 'string' && spec.clusterIP ? spec.clusterIP : listed;
    // An update that leaves the address out keeps the allocated one (headless included).
    if (requested === '' && typeof oldSpec?.clusterIP === 'string' && oldSpec.clusterIP && oldSpec.type !== 'ExternalName') requested = oldSpec.clusterIP;
    const errs: FieldError[] = [];
    if (requested === '') requested = allocateIP(ips, taken);
    else if (requested !== 'None' && requested !== oldSpec?.clusterIP) {
      const err = checkIP(requested, ips, taken);
      if (err) errs.push(err);
    }
    spec.clusterIP = requested;
    spec.clusterIPs = [requested];
    const selectorless = !isObject(spec.selector) || Object.keys(spec.selector).length === 0;
    // A headless Service without a selector needs no address of either family: it asks for both.
    if (requested === 'None' && selectorless) spec.ipFamilyPolicy ??= 'RequireDualStack';
    spec.ipFamilyPolicy ??= 'SingleStack';
    const families = Array.isArray(spec.ipFamilies) && spec.ipFamilies.length > 0 ? spec.ipFamilies : ['IPv4'];
    if (requested === 'None' && selectorless && spec.ipFamilyPolicy === 'RequireDualStack' && families.length === 1) families.push(families[0] === 'IPv6' ? 'IPv4' : 'IPv6');
    spec.ipFamilies = families;
    return errs;
  };

  /**
   * Node ports (initNodePorts): the ports of one port number share one node port; a port keeps the
   * node port it had; one given must be in the range and not another Service's.
   */
  const allocateNodePorts = (spec: Obj, oldSpec: Obj | undefined, usedPorts: InUse<number>, taken: Take): FieldError[] => {
    const errs: FieldError[] = [];
    const wantsNodePorts = spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
    const mayHaveNodePorts = spec.type === 'NodePort' || spec.type === 'LoadBalancer';
    const own = new Set(oldSpec ? ports(oldSpec).map((o) => o.nodePort) : []);
    const byPort = new Map<unknown, number>();
    const [lo, hi] = nodePorts;
    ports(spec).forEach((p, i) => {
      if (!mayHaveNodePorts) {
        delete p.nodePort;
        return;
      }
      if (typeof p.nodePort === 'number' && p.nodePort !== 0) {
        const np = p.nodePort;
        if (!own.has(np) && byPort.get(p.port) !== np) {
          if (np < lo || np > hi) errs.push(field.invalid(`spec.ports[${i}].nodePort`, np, `provided port is not in the valid range. The range of valid ports is ${lo}-${hi}`));
          else if (usedPorts.has(np)) errs.push(field.invalid(`spec.ports[${i}].nodePort`, np, 'provided port is already allocated'));
          else taken(np);
        }
        byPort.set(p.port, np);
        return;
      }
      if (!wantsNodePorts) return;
      const kept = oldSpec ? ports(oldSpec).find((o) => o.port === p.port && typeof o.nodePort === 'number')?.nodePort : undefined;
      const np = byPort.get(p.port) ?? kept ?? allocatePort(usedPorts, taken);
      p.nodePort = np;
      byPort.set(p.port, np as number);
    });
    for (const np of byPort.values()) usedPorts.add(np);
    return errs;
  };

  /** Allocate what the spec needs; errors for requested values that cannot be had. */
  const allocate = (svc: KObject, old: KObject | undefined, dryRun: boolean): FieldError[] => {
    const spec = (isObject(svc.spec) ? svc.spec : (svc.spec = {})) as Obj;
    const { ips, usedPorts } = inUse(svc);
    const oldSpec = old && isObject(old.spec) ? old.spec : undefined;
    // What this write takes is remembered for it (a dry run takes nothing).
    const taken: Take = (v) => {
      if (!dryRun) remember(v, svc);
      return v;
    };
    return [...allocateClusterIP(spec, oldSpec, ips, taken), ...allocateNodePorts(spec, oldSpec, usedPorts, taken)];
  };

  return {
    ...base,
    // The spec is checked first: a Service that is refused takes no address or port.
    validate(svc, ctx) {
      const invalid = validateServiceSpec(svc.spec);
      if (invalid.length > 0) return invalid;
      return [...allocate(svc, undefined, ctx.dryRun === true), ...(base.validate?.(svc, ctx) ?? [])];
    },
    validateUpdate(svc, old, ctx) {
      const invalid = ctx.subresource ? [] : validateServiceSpec(svc.spec);
      if (invalid.length > 0) return invalid;
      const errs = allocate(svc, old, ctx.dryRun === true);
      const before = isObject(old.spec) ? old.spec.clusterIP : undefined;
      const now = isObject(svc.spec) ? svc.spec.clusterIP : undefined;
      if (before && now !== before && (svc.spec as Obj).type !== 'ExternalName' && (old.spec as Obj).type !== 'ExternalName') {
        errs.push(field.invalid('spec.clusterIPs[0]', now, 'may not change once set'));
      }
      return [...errs, ...(base.validateUpdate?.(svc, old, ctx) ?? [])];
    },
  };
}
