/**
 * Where storage keys live in etcd.
 *
 * kapi's keys start with `/registry/`, as kube-apiserver's etcd keys do; the
 * configured prefix takes the place of `/registry`, so the default prefix
 * `/registry` stores `/registry/apps/deployments/ns/x` under exactly that etcd
 * key, and prefix `/kapi-b` stores it under `/kapi-b/apps/deployments/ns/x`.
 * Installations sharing one etcd use prefixes where neither is a prefix of the
 * other.
 *
 * Keys outside `/registry/` (tests use `/r/...`) are stored beside the
 * registry keys with a one-character marker that keeps etcd's byte order equal
 * to the storage order, so every storage range is one etcd range:
 *
 *   key < '/registry/'           →  prefix + '!' + key     ('!' sorts before '/')
 *   key = '/registry/' + rest    →  prefix + '/' + rest
 *   key > '/registry/…' (others) →  prefix + '0' + key     ('0' sorts after '/')
 *
 * The backend's own bookkeeping keys use prefix + '~', outside every range.
 */

const ROOT = '/registry/';

export interface EtcdRange {
  key: Buffer;
  rangeEnd: Buffer;
}

export class Keyspace {
  private readonly prefix: Buffer;

  constructor(prefix = '/registry') {
    this.prefix = Buffer.from(prefix.replace(/\/+$/, ''), 'utf8');
  }

  /** The etcd key for a storage key. */
  toEtcd(key: string): Buffer {
    if (key.startsWith(ROOT)) return this.join('/', key.slice(ROOT.length));
    return this.join(key < ROOT ? '!' : '0', key);
  }

  /** The storage key for an etcd key under this prefix. */
  fromEtcd(key: Buffer): string {
    const marker = key[this.prefix.length];
    const rest = key.toString('utf8', this.prefix.length + 1);
    return marker === 0x2f /* '/' */ ? ROOT + rest : rest;
  }

  /** The etcd range holding the storage keys that start with prefix, from startKey on when it lies further. */
  range(prefix: string, startKey?: string): EtcdRange {
    let key: Buffer;
    let rangeEnd: Buffer;
    if (prefix.startsWith(ROOT) || !ROOT.startsWith(prefix)) {
      // Every key under the prefix has the same marker.
      key = this.toEtcd(prefix);
      rangeEnd = bytesPrefixEnd(key);
    } else {
      // A prefix of '/registry/' itself ('' or '/'): low keys, registry keys, high keys.
      key = this.join('!', prefix);
      rangeEnd = bytesPrefixEnd(this.join('0', prefix));
    }
    if (startKey !== undefined && startKey > prefix) {
      const start = this.toEtcd(startKey);
      if (Buffer.compare(start, key) > 0) key = start;
    }
    return { key, rangeEnd };
  }

  /** A key of the backend's own, outside every storage range. */
  internal(name: string): Buffer {
    return this.join('~', name);
  }

  private join(marker: string, rest: string): Buffer {
    return Buffer.concat([this.prefix, Buffer.from(marker + rest, 'utf8')]);
  }
}

/** The smallest byte string greater than every string that starts with prefix. */
export function bytesPrefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  // All 0xff: no upper bound, which etcd spells as a single zero byte.
  return Buffer.from([0]);
}
