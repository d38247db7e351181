/**
 * Type-aware operations on field sets and values used when an applier drops
 * fields: RemoveItems (take the set's map members and list items out of a
 * value), EnsureNamedFieldsAreMembers (a declared field with owned children
 * counts as owned itself), and ReconcileFieldSetWithSchema (ownership of a
 * field that became atomic collapses to the field itself). Values and sets
 * nest as deep as requests may: nothing here recurses.
 */
import { FieldSet, type ChildSet } from './field-set.js';
import { fieldElement, type PathElement } from './path-element.js';
import { isAssociative, listItemElement } from './typed.js';
import { ATOMIC_ANY, DEDUCED, atomOf, isDeclared, memberType, type ListType, type MapType, type TypeInfo } from './types.js';
import { isMap, mapKeys, setOwn, type JsonMap } from './value.js';
import { treeOperation } from '../util/tree-operation.js';

/** The value without the set's members; undefined stands for Go's nil (null inside a container). */
export function removeItems(value: unknown, toRemove: FieldSet, type: TypeInfo): unknown {
  return removeFrom(value, toRemove, type);
}

const removeFrom = treeOperation<unknown, FieldSet, TypeInfo, unknown>((value, toRemove, type, sub, depth) => {
  const a = atomOf(type, value);
  if (a.kind === 'scalar') return value;
  if (a.kind === 'list') {
    if (!Array.isArray(value) || value.length === 0 || !isAssociative(a)) return undefined;
    const out: unknown[] = [];
    for (const item of value) {
      const pe = listItemElement(a, item);
      if (typeof pe === 'string') {
        out.push(item);
        continue;
      }
      if (toRemove.hasMember(pe)) continue;
      const below = toRemove.withPrefix(pe);
      out.push(below.isEmpty() ? item : (sub(item, below, a.elements, depth + 1) ?? null));
    }
    return out.length > 0 ? out : undefined;
  }
  if (!isMap(value) || a.atomic) return undefined;
  const keys = mapKeys(value);
  if (keys.length === 0) return undefined;
  const out: JsonMap = {};
  let n = 0;
  for (const key of keys) {
    const pe = fieldElement(key);
    if (toRemove.hasMember(pe)) continue;
    const below = toRemove.withPrefix(pe);
    setOwn(out, key, below.isEmpty() ? value[key] : (sub(value[key], below, memberType(a, key) ?? ATOMIC_ANY, depth + 1) ?? null));
    n++;
  }
  return n > 0 ? out : undefined;
}, undefined);

function mapPart(t: TypeInfo | undefined): MapType | undefined {
  return t?.kind === 'map' ? t : t?.kind === 'any' ? t.map : undefined;
}

function listPart(t: TypeInfo | undefined): ListType | undefined {
  return t?.kind === 'list' ? t : t?.kind === 'any' ? t.list : undefined;
}

/** Set.EnsureNamedFieldsAreMembers: declared fields that have owned children become members too. */
export function ensureNamedFieldsAreMembers(set: FieldSet, type: TypeInfo | undefined): FieldSet {
  return ensureNamed(set, type, undefined);
}

const ensureNamed = treeOperation<FieldSet, TypeInfo | undefined, undefined, FieldSet>((set, type, _, sub, depth) => {
  if (!type || set.children.size === 0) return set;
  const m = mapPart(type);
  const l = listPart(type);
  const members = new Map(set.members);
  const children = new Map<string, ChildSet>();
  for (const [k, c] of set.children) {
    let childType: TypeInfo | undefined;
    if (c.pe.type === 'f' && m) {
      if (isDeclared(m, c.pe.name)) members.set(c.pe.key, c.pe);
      childType = memberType(m, c.pe.name);
    } else if (c.pe.type === 'k' && l) childType = l.elements;
    children.set(k, { pe: c.pe, set: sub(c.set, childType, undefined, depth + 1) });
  }
  return new FieldSet(members, children);
}, new FieldSet());

/**
 * ReconcileFieldSetWithSchema: a manager that owned the contents of a map or list that
 * is now atomic owns the field itself instead. Undefined when nothing changes.
 */
export function reconcileFieldSet(set: FieldSet, type: TypeInfo): FieldSet | undefined {
  // Sets never change and the live object's come back decoded as the same objects: the
  // answer for the last type each set was reconciled with is kept.
  const known = reconciled.get(set);
  if (known?.type === type) return known.result;
  const result = reconcile(set, type);
  reconciled.set(set, { type, result });
  return result;
}

const reconciled = new WeakMap<FieldSet, { type: TypeInfo; result: FieldSet | undefined }>();

function reconcile(set: FieldSet, type: TypeInfo): FieldSet | undefined {
  const r = new Reconciler();
  r.run(set, type);
  if (!r.toRemove && !r.toAdd) return undefined;
  let out = set;
  if (r.toRemove) out = out.recursiveDifference(r.toRemove);
  if (r.toAdd) out = out.union(r.toAdd);
  return out;
}

/**
 * A depth-first walk over a set with its type (types of CRDs' own schemas nest as deep as the
 * schemas do), with its own stack: each entry is a set (or none, for a member), its type,
 * whether it is atomic, and its path's length and last element.
 */
class Reconciler {
  toRemove?: FieldSet;
  toAdd?: FieldSet;
  private readonly path: PathElement[] = [];

  run(root: FieldSet, type: TypeInfo): void {
    const stack: { set: FieldSet | undefined; t: TypeInfo; isAtomic: boolean; depth: number; pe?: PathElement }[] = [
      { set: root, t: type, isAtomic: false, depth: 0 },
    ];
    while (stack.length > 0) {
      const { set, t, isAtomic, depth, pe } = stack.pop() as (typeof stack)[number];
      while (this.path.length > depth) this.path.pop();
      if (pe) this.path[depth - 1] = pe;
      let typeOf: ((pe: PathElement) => TypeInfo | undefined) | undefined;
      const m = mapPart(t);
      if (m) {
        if (isUntypedDeducedMap(m)) continue;
        if (!isAtomic && m.atomic) {
          if (set && set.size() > 0) this.collapse();
          continue;
        }
        typeOf = (e) => (e.type === 'f' ? memberType(m, e.name) : m.elements);
      } else {
        if (t.kind !== 'list') continue;
        if (!isAtomic && t.listType === 'atomic') {
          this.collapse();
          continue;
        }
        typeOf = () => t.elements;
      }
      if (!set) continue;
      // Children that are not members, then members; pushed in reverse, the first on top.
      const items: { pe: PathElement; isMember: boolean }[] = [];
      for (const c of set.children.values()) if (!set.members.has(c.pe.key)) items.push({ pe: c.pe, isMember: false });
      for (const e of set.members.values()) items.push({ pe: e, isMember: true });
      for (let i = items.length - 1; i >= 0; i--) {
        const item = items[i];
        const it = typeOf(item.pe);
        if (!it) continue;
        const child = set.children.get(item.pe.key)?.set;
        stack.push({ set: child, t: it, isAtomic: item.isMember && !child, depth: depth + 1, pe: item.pe });
      }
    }
  }

  private collapse(): void {
    (this.toRemove ??= new FieldSet()).insert(this.path);
    (this.toAdd ??= new FieldSet()).insert(this.path);
  }
}

// Maps of only unknown, deduced fields (preserve-unknown-fields without properties) are not reconciled.
function isUntypedDeducedMap(m: MapType): boolean {
  if (m.fields) return false;
  const e = m.elements;
  if (!e) return false;
  if (e === DEDUCED) return true;
  if (e === ATOMIC_ANY) return false;
  return e.kind === 'any' || (e.kind === 'scalar' && e.scalar === 'untyped');
}
