/**
 * Type-aware operations on field sets and values used when an applier drops
 * fields: RemoveItems (take the set's map members and list items out of a
 * value), EnsureNamedFieldsAreMembers (a declared field with owned children
 * counts as owned itself), and ReconcileFieldSetWithSchema (ownership of a
 * field that became atomic collapses to the field itself).
 */
import { FieldSet, type ChildSet } from './field-set.js';
import { fieldElement, type PathElement } from './path-element.js';
import { isAssociative, listItemElement } from './typed.js';
import { ATOMIC_ANY, DEDUCED, atomOf, isDeclared, memberType, type ListType, type MapType, type TypeInfo } from './types.js';
import { isMap, mapKeys, setOwn, type JsonMap } from './value.js';

/** The value without the set's members; undefined stands for Go's nil (null inside a container). */
export function removeItems(value: unknown, toRemove: FieldSet, type: TypeInfo): unknown {
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
      const sub = toRemove.withPrefix(pe);
      out.push(sub.isEmpty() ? item : (removeItems(item, sub, a.elements) ?? null));
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
    const sub = toRemove.withPrefix(pe);
    setOwn(out, key, sub.isEmpty() ? value[key] : (removeItems(value[key], sub, memberType(a, key) ?? ATOMIC_ANY) ?? null));
    n++;
  }
  return n > 0 ? out : undefined;
}

function mapPart(t: TypeInfo | undefined): MapType | undefined {
  return t?.kind === 'map' ? t : t?.kind === 'any' ? t.map : undefined;
}

function listPart(t: TypeInfo | undefined): ListType | undefined {
  return t?.kind === 'list' ? t : t?.kind === 'any' ? t.list : undefined;
}

/** Set.EnsureNamedFieldsAreMembers: declared fields that have owned children become members too. */
export function ensureNamedFieldsAreMembers(set: FieldSet, type: TypeInfo | undefined): FieldSet {
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
    children.set(k, { pe: c.pe, set: ensureNamedFieldsAreMembers(c.set, childType) });
  }
  return new FieldSet(members, children);
}

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
  r.node(set, type, false);
  if (!r.toRemove && !r.toAdd) return undefined;
  let out = set;
  if (r.toRemove) out = out.recursiveDifference(r.toRemove);
  if (r.toAdd) out = out.union(r.toAdd);
  return out;
}

class Reconciler {
  toRemove?: FieldSet;
  toAdd?: FieldSet;
  private readonly path: PathElement[] = [];

  node(set: FieldSet | undefined, t: TypeInfo, isAtomic: boolean): void {
    const m = mapPart(t);
    if (m) {
      if (isUntypedDeducedMap(m)) return;
      if (!isAtomic && m.atomic) {
        if (set && set.size() > 0) this.collapse();
        return;
      }
      if (set) this.items(set, (pe) => (pe.type === 'f' ? memberType(m, pe.name) : m.elements));
      return;
    }
    if (t.kind !== 'list') return;
    if (!isAtomic && t.listType === 'atomic') {
      this.collapse();
      return;
    }
    if (set) this.items(set, () => t.elements);
  }

  private items(set: FieldSet, typeOf: (pe: PathElement) => TypeInfo | undefined): void {
    const visit = (pe: PathElement, isMember: boolean) => {
      const t = typeOf(pe);
      if (!t) return;
      const child = set.children.get(pe.key)?.set;
      this.path.push(pe);
      this.node(child, t, isMember && !child);
      this.path.pop();
    };
    for (const c of set.children.values()) if (!set.members.has(c.pe.key)) visit(c.pe, false);
    for (const pe of set.members.values()) visit(pe, true);
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
