/**
 * Pruning of unknown fields (schema/pruning): fields the schema does not specify
 * are removed unless x-kubernetes-preserve-unknown-fields applies; apiVersion, kind
 * and metadata of the root and of embedded resources are left to ObjectMeta
 * coercion. Also PruneNonNullableNullsWithoutDefaults. Pruned paths are reported
 * in upstream's form (`spec.ports[0].unknownNested`), sorted.
 */
import { blankStructural } from './structural.js';
import type { Structural } from './types.js';
import { isObject, type JsonObject } from './values.js';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

class Tracker {
  readonly paths: string[] = [];
  /** The path of the node being pruned: keys (strings) and indexes (numbers). */
  readonly segs: (string | number)[] = [];
  constructor(
    readonly track: boolean,
    /** Also PruneNonNullableNullsWithoutDefaults, in the same walk. */
    readonly nulls: boolean,
  ) {}

  /** Records parent path + k as upstream's ParentPath prints: `a.b[0].c`. */
  record(k: string): void {
    let p = '';
    for (const s of this.segs) p += typeof s === 'number' ? `[${s}]` : p === '' ? s : '.' + s;
    this.paths.push(p === '' ? k : `${p}.${k}`);
  }

  enterKey(k: string): void {
    if (this.track) this.segs.push(k);
  }

  enterIndex(i: number): void {
    if (this.track) this.segs.push(i);
  }

  leave(): void {
    if (this.track) this.segs.pop();
  }
}

/** A null the schema neither allows (nullable) nor defaults. */
const droppableNull = (v: unknown, s: Structural, t: Tracker): boolean => t.nulls && v === null && !s.nullable && !s.hasDefault;

/**
 * Prunes obj in place against s (the root of a resource when isResourceRoot); with
 * pruneNulls, also removes non-nullable nulls without defaults from objects.
 * Returns the sorted paths of pruned fields (empty unless track).
 */
export function pruneObject(obj: unknown, s: Structural | undefined, isResourceRoot: boolean, track: boolean, pruneNulls = false): string[] {
  let schema = s;
  if (isResourceRoot && !schema?.embeddedResource) schema = { ...(schema ?? blankStructural('', {})), embeddedResource: true };
  const t = new Tracker(track, pruneNulls);
  prune(obj, schema, t);
  return t.paths.sort();
}

/**
 * prune of a list's items where there is no schema (and nothing is kept): every object in it,
 * in lists nested at any depth, loses all its fields. An explicit stack of the lists being walked.
 */
function pruneUnknownItems(list: unknown[], t: Tracker): void {
  const frames: { list: unknown[]; i: number }[] = [{ list, i: 0 }];
  while (frames.length > 0) {
    const f = frames[frames.length - 1];
    if (f.i >= f.list.length) {
      frames.pop();
      if (frames.length > 0) t.leave(); // the list's own index in its parent list
      continue;
    }
    const i = f.i++;
    const item = f.list[i];
    t.enterIndex(i);
    if (Array.isArray(item)) {
      frames.push({ list: item, i: 0 });
      continue;
    }
    if (isObject(item)) {
      for (const k in item) {
        if (t.track) t.record(k);
        delete item[k];
      }
    }
    t.leave();
  }
}

/**
 * keepUnknown (a schema with x-kubernetes-preserve-unknown-fields, and the items of its
 * arrays): fields the schema does not name stay, the ones it names are still pruned.
 */
function prune(x: unknown, s: Structural | undefined, t: Tracker, keepUnknown = false): void {
  keepUnknown ||= s?.preserveUnknownFields === true;
  if (!s && keepUnknown) return;
  if (Array.isArray(x)) {
    const items = s?.items;
    if (!items) {
      // Items without a schema: the schema bounds no more how deep lists nest in lists.
      if (!keepUnknown) pruneUnknownItems(x, t);
      return;
    }
    for (let i = 0; i < x.length; i++) {
      t.enterIndex(i);
      prune(x[i], items, t, keepUnknown);
      t.leave();
    }
    return;
  }
  if (!isObject(x)) return;
  const obj = x as JsonObject;
  if (!s) {
    for (const k in obj) {
      if (t.track) t.record(k);
      delete obj[k];
    }
    return;
  }
  for (const k in obj) {
    if (s.embeddedResource && META_FIELDS.has(k)) continue;
    const sub = s.properties?.get(k) ?? s.additionalProperties?.schema;
    if (sub && droppableNull(obj[k], sub, t)) delete obj[k];
    else if (sub || s.additionalProperties) {
      t.enterKey(k);
      prune(obj[k], sub, t);
      t.leave();
    } else if (!keepUnknown) {
      if (t.track && (!META_FIELDS.has(k) || t.segs.length > 0)) t.record(k);
      delete obj[k];
    }
  }
}
