/**
 * TypedValue.Compare: the fields an update removed, modified and added.
 * Leaves (scalars, atomic lists and maps, and empty or null containers) are
 * compared by value; a granular map or associative list that appears or
 * disappears is itself added or removed, besides its contents. Duplicate
 * items in associative lists are compared as a whole, as upstream does.
 */
import { FieldSet } from './field-set.js';
import { fieldElement, type PathElement } from './path-element.js';
import { isAssociative, listItemElement } from './typed.js';
import { ATOMIC_ANY, atomOf, memberType, type Atom, type ListType, type MapType, type TypeInfo } from './types.js';
import { equalValues, getOwn, hasOwn, isMap } from './value.js';

export interface Comparison {
  removed: FieldSet;
  modified: FieldSet;
  added: FieldSet;
}

export function compare(lhs: unknown, rhs: unknown, type: TypeInfo): Comparison {
  const c = new Comparer();
  c.node(lhs, rhs, type);
  return { removed: c.removed, modified: c.modified, added: c.added };
}

export function isSame(c: Comparison): boolean {
  return c.removed.isEmpty() && c.modified.isEmpty() && c.added.isEmpty();
}

/** Whether a map has a member that is not undefined. */
function hasMembers(m: Record<string, unknown> | undefined): boolean {
  if (m) for (const k in m) if (m[k] !== undefined && hasOwn(m, k)) return true;
  return false;
}

class Comparer {
  readonly removed = new FieldSet();
  readonly modified = new FieldSet();
  readonly added = new FieldSet();
  private readonly path: PathElement[] = [];

  node(l: unknown, r: unknown, t: TypeInfo): void {
    if (l === r || (l === undefined && r === undefined)) return;
    const al = atomOf(t, l);
    const ar = atomOf(t, r);
    let leaf: boolean;
    if (r === undefined) leaf = this.handle(al, l, r);
    else if (l === undefined || al.kind === ar.kind) leaf = this.handle(ar, l, r);
    else {
      // The value changed form (e.g. map to string): the old form's contents go, the new form is compared.
      this.handle(al, l, r);
      leaf = this.handle(ar, l, r);
    }
    if (!leaf) {
      if (l === undefined) this.added.insert(this.path);
      else if (r === undefined) this.removed.insert(this.path);
    }
  }

  /** Compares under one form; returns whether the node was a leaf. */
  private handle(a: Atom, l: unknown, r: unknown): boolean {
    if (a.kind === 'scalar') {
      this.leaf(l, r);
      return true;
    }
    if (a.kind === 'list') {
      const ll = Array.isArray(l) ? l : undefined;
      const rl = Array.isArray(r) ? r : undefined;
      if (!isAssociative(a) || (!ll?.length && !rl?.length)) {
        this.leaf(l, r);
        return true;
      }
      this.listItems(a, ll ?? [], rl ?? []);
      return false;
    }
    const lm = isMap(l) ? l : undefined;
    const rm = isMap(r) ? r : undefined;
    if (a.atomic || (!hasMembers(lm) && !hasMembers(rm))) {
      this.leaf(l, r);
      return true;
    }
    this.mapItems(a, lm, rm);
    return false;
  }

  private leaf(l: unknown, r: unknown): void {
    if (l === undefined) this.added.insert(this.path);
    else if (r === undefined) this.removed.insert(this.path);
    else if (!equalValues(l, r)) this.modified.insert(this.path);
  }

  private mapItems(t: MapType, lm: Record<string, unknown> | undefined, rm: Record<string, unknown> | undefined): void {
    if (lm) for (const k in lm) if (lm[k] !== undefined && hasOwn(lm, k)) this.member(t, k, lm[k], rm ? getOwn(rm, k) : undefined);
    if (rm) for (const k in rm) if (rm[k] !== undefined && hasOwn(rm, k) && (!lm || getOwn(lm, k) === undefined)) this.member(t, k, undefined, rm[k]);
  }

  private member(t: MapType, key: string, l: unknown, r: unknown): void {
    this.path.push(fieldElement(key));
    this.node(l, r, memberType(t, key) ?? ATOMIC_ANY);
    this.path.pop();
  }

  private listItems(t: ListType, ll: unknown[], rl: unknown[]): void {
    const all: PathElement[] = [];
    const lValues = new Map<string, unknown[]>();
    const rValues = new Map<string, unknown[]>();
    for (const item of ll) {
      const pe = listItemElement(t, item);
      if (typeof pe === 'string') continue;
      const list = lValues.get(pe.key);
      if (list) list.push(item);
      else {
        lValues.set(pe.key, [item]);
        all.push(pe);
      }
    }
    for (const item of rl) {
      const pe = listItemElement(t, item);
      if (typeof pe === 'string') continue;
      const list = rValues.get(pe.key);
      if (list) list.push(item);
      else {
        rValues.set(pe.key, [item]);
        if (!lValues.has(pe.key)) all.push(pe);
      }
    }
    for (const pe of all) {
      const l = lValues.get(pe.key) ?? [];
      const r = rValues.get(pe.key) ?? [];
      this.path.push(pe);
      if (l.length <= 1 && r.length <= 1) this.node(l[0], r[0], t.elements);
      else if (l.length >= 2 && r.length >= 2) {
        // Duplicates before and after: compared as one atomic value.
        if (l.length !== r.length || l.some((v, i) => !equalValues(v, r[i]))) this.modified.insert(this.path);
      } else if (l.length >= 2) {
        if (r.length) this.node(undefined, r[0], t.elements);
        this.removed.insert(this.path);
      } else {
        if (l.length) this.node(l[0], undefined, t.elements);
        this.added.insert(this.path);
      }
      this.path.pop();
    }
  }
}
