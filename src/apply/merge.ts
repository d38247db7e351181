/**
 * TypedValue.Merge with upstream's keep-the-right-hand-side rule: the applied
 * configuration (rhs) is merged into the live object (lhs). Leaves (scalars,
 * atomic lists and maps, empty or null containers) are replaced; granular
 * maps merge key by key; associative lists merge item by item (by key or
 * value) and take the applied order for the items it names, as upstream's
 * list merge orders them. Subtrees only one side has are returned as they are.
 * Values nest as deep as requests may: the merge is a tree operation.
 */
import { listItemElement, isAssociative } from './typed.js';
import { ATOMIC_ANY, atomOf, memberType, type ListType, type MapType, type TypeInfo } from './types.js';
import { getOwn, isMap, mapKeys, setOwn, type JsonMap } from './value.js';
import type { PathElement } from './path-element.js';
import { treeOperation } from '../util/tree-operation.js';

/** The merged value, or undefined when the merge leaves nothing there. */
export function merge(lhs: unknown, rhs: unknown, type: TypeInfo): unknown {
  return mergeValues(lhs, rhs, type);
}

type Merge = (l: unknown, r: unknown, t: TypeInfo, depth: number) => unknown;

const mergeValues = treeOperation<unknown, unknown, TypeInfo, unknown>((l, r, type, sub, depth) => {
  if (r === undefined) return l;
  if (l === undefined) return r;
  // When the value changes form (map to string, ...) upstream also merges under the old form, but keeps only this result.
  const a = atomOf(type, r);
  if (a.kind === 'scalar') return r;
  if (a.kind === 'list') {
    const ll = Array.isArray(l) ? l : undefined;
    const rl = Array.isArray(r) ? r : undefined;
    if (!isAssociative(a) || (!ll?.length && !rl?.length)) return r;
    return listItems(a, ll ?? [], rl ?? [], sub, depth + 1);
  }
  const lm = isMap(l) ? l : undefined;
  const rm = isMap(r) ? r : undefined;
  const lk = lm ? mapKeys(lm) : [];
  const rk = rm ? mapKeys(rm) : [];
  if (a.atomic || (lk.length === 0 && rk.length === 0)) return r;
  return mapItems(a, lm, lk, rm, rk, sub, depth + 1);
}, undefined);

function mapItems(t: MapType, lm: JsonMap | undefined, lk: string[], rm: JsonMap | undefined, rk: string[], sub: Merge, depth: number): JsonMap | undefined {
  const out: JsonMap = {};
  let n = 0;
  const put = (key: string) => {
    const v = sub(lm ? getOwn(lm, key) : undefined, rm ? getOwn(rm, key) : undefined, memberType(t, key) ?? ATOMIC_ANY, depth);
    if (v !== undefined) {
      setOwn(out, key, v);
      n++;
    }
  };
  for (const k of lk) put(k);
  for (const k of rk) if (!lm || getOwn(lm, k) === undefined) put(k);
  return n > 0 ? out : undefined;
}

interface Indexed {
  pes: PathElement[];
  observed: Map<string, unknown>;
}

function index(t: ListType, list: unknown[], allowDuplicates: boolean): Indexed {
  const pes: PathElement[] = [];
  const observed = new Map<string, unknown>();
  for (const item of list) {
    const pe = listItemElement(t, item);
    if (typeof pe === 'string') throw new MergeError(pe);
    if (observed.has(pe.key)) {
      if (!allowDuplicates) throw new MergeError(`duplicate entries for key ${pe.key}`);
      // A duplicated live item is not merged with the applied one: it stands for nothing (null).
      observed.set(pe.key, null);
    } else observed.set(pe.key, item);
    pes.push(pe);
  }
  return { pes, observed };
}

export class MergeError extends Error {}

// mergingWalker.visitListItems: live items keep their place unless the applied list names
// them, in which case they move to the applied list's order.
function listItems(t: ListType, ll: unknown[], rl: unknown[], sub: Merge, depth: number): unknown[] | undefined {
  const rhs = index(t, rl, false);
  const lhs = index(t, ll, true);
  const out: unknown[] = [];
  const shared = rhs.pes.filter((pe) => lhs.observed.has(pe.key));
  let sharedAt = 0;
  let nextShared: PathElement | undefined = shared[sharedAt++];
  const mergedRHS = new Set<string>();
  const item = (l: unknown, r: unknown) => {
    const v = sub(l, r, t.elements, depth);
    if (v !== undefined) out.push(v);
  };
  const lLen = lhs.pes.length;
  const rLen = rhs.pes.length;
  for (let lI = 0, rI = 0; lI < lLen || rI < rLen; ) {
    if (lI < lLen && rI < rLen) {
      const pe = lhs.pes[lI];
      if (pe.key === rhs.pes[rI].key) {
        mergedRHS.add(pe.key);
        item(lhs.observed.get(pe.key), rhs.observed.get(pe.key));
        lI++;
        rI++;
        nextShared = shared[sharedAt++];
        continue;
      }
      if (rhs.observed.has(pe.key) && nextShared && nextShared.key !== pe.key) {
        lI++;
        continue;
      }
    }
    if (lI < lLen) {
      const pe = lhs.pes[lI];
      if (!rhs.observed.has(pe.key)) {
        item(ll[lI], undefined);
        lI++;
        continue;
      } else if (mergedRHS.has(pe.key)) lI++;
    }
    if (rI < rLen) {
      const pe = rhs.pes[rI];
      mergedRHS.add(pe.key);
      item(lhs.observed.get(pe.key), rhs.observed.get(pe.key));
      rI++;
      if (nextShared && nextShared.key === pe.key) nextShared = shared[sharedAt++];
    }
  }
  return out.length > 0 ? out : undefined;
}
