/**
 * CorrelatedObject (apiserver cel/common): pairs each node of a new object with
 * the node of the old object it updates, following the schema: object fields by
 * name (only fields the schema knows), list items only for list-type=map lists (by
 * their keys). Validation ratcheting drops errors under a node whose value is
 * unchanged; "unchanged" is computed lazily, once, the way upstream does.
 */
import type { Structural } from './types.js';
import { isObject, jsonEqual, kindOf, Kind, type JsonObject } from './values.js';

export class Correlation {
  private equal: boolean | undefined;
  private children: Map<string | number, Correlation | null> | undefined;
  private oldMapList: MapList | undefined;

  constructor(
    readonly value: unknown,
    readonly old: unknown,
    readonly schema: Structural | undefined,
  ) {}

  key(field: string): Correlation | undefined {
    const cached = this.children?.get(field);
    if (cached !== undefined) return cached ?? undefined;
    let res: Correlation | null = null;
    if (this.schema && isObject(this.value) && isObject(this.old) && Object.prototype.hasOwnProperty.call(this.old, field) && Object.prototype.hasOwnProperty.call(this.value, field)) {
      const sub = this.schema.properties?.get(field) ?? this.schema.additionalProperties?.schema;
      if (sub) res = new Correlation(this.value[field], this.old[field], sub);
    }
    (this.children ??= new Map()).set(field, res);
    return res ?? undefined;
  }

  index(i: number): Correlation | undefined {
    const cached = this.children?.get(i);
    if (cached !== undefined) return cached ?? undefined;
    let res: Correlation | null = null;
    const s = this.schema;
    if (s?.items && Array.isArray(this.value) && Array.isArray(this.old) && i < this.value.length && s.listType === 'map') {
      this.oldMapList ??= new MapList(s, this.old);
      const old = this.oldMapList.get(this.value[i]);
      if (old !== undefined) res = new Correlation(this.value[i], old, s.items);
    }
    (this.children ??= new Map()).set(i, res);
    return res ?? undefined;
  }

  /** CachedDeepEqual */
  unchanged(): boolean {
    if (this.equal === undefined) this.equal = this.compute();
    return this.equal;
  }

  private compute(): boolean {
    const v = this.value;
    const o = this.old;
    if (v === null || v === undefined || o === null || o === undefined) return (v ?? null) === (o ?? null);
    const va = Array.isArray(v);
    const oa = Array.isArray(o);
    const vm = isObject(v);
    const om = isObject(o);
    if (va !== oa || vm !== om) return false;
    if (va) {
      const nv = v as unknown[];
      if (nv.length !== (o as unknown[]).length) return false;
      for (let i = 0; i < nv.length; i++) {
        const c = this.index(i);
        if (!c) return this.oldMapList ? false : jsonEqual(o, v);
        if (!c.unchanged()) return false;
      }
      return true;
    }
    if (vm) {
      const keys = Object.keys(v);
      if (keys.length !== Object.keys(o).length) return false;
      for (const k of keys) {
        const c = this.key(k);
        if (!c || !c.unchanged()) return false;
      }
      return true;
    }
    return jsonEqual(o, v);
  }
}

/** Identity of a list-type=map item: its key fields, typed like Go's interface values. */
export function mapKeyOf(keys: string[], item: unknown): string | undefined {
  if (!isObject(item)) return undefined;
  let out = '';
  for (const k of keys) {
    if (!Object.prototype.hasOwnProperty.call(item, k)) return undefined;
    const v = item[k];
    switch (kindOf(v)) {
      case Kind.Bool:
        out += `\0b${v}`;
        break;
      case Kind.Int:
        out += `\0i${v}`;
        break;
      case Kind.Float:
        out += `\0f${v}`;
        break;
      case Kind.String:
        out += `\0s${JSON.stringify(v)}`;
        break;
      default:
        return undefined;
    }
  }
  return out;
}

/** The old items of a map list by key; the first occurrence of a key wins. */
export class MapList {
  private readonly byKey = new Map<string, JsonObject>();
  private next = 0;

  constructor(
    private readonly schema: Structural,
    private readonly items: unknown[],
  ) {}

  get(item: unknown): JsonObject | undefined {
    const keys = this.schema.listMapKeys;
    if (this.schema.type !== 'array' || this.schema.listType !== 'map' || !keys?.length) return undefined;
    const key = mapKeyOf(keys, item);
    if (key === undefined) return undefined;
    const hit = this.byKey.get(key);
    if (hit) return hit;
    while (this.next < this.items.length) {
      const x = this.items[this.next++];
      const k = mapKeyOf(keys, x);
      if (k === undefined) continue;
      if (!this.byKey.has(k)) this.byKey.set(k, x as JsonObject);
      if (k === key) return x as JsonObject;
    }
    return undefined;
  }
}
