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
  c.run(lhs, rhs, type);
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

/** What the Comparer's stack holds: a pair of values to compare, a leaf to compare, or a path to add to a set. */
const enum Task {
  Node,
  Leaf,
  Insert,
}

/**
 * A depth-first walk over both values with its own stack (values nest as deep as requests
 * may), doing what a recursive walk does in the same order. Each task carries the length of
 * its path and the last element of it; `path` holds the elements of the task at hand.
 */
class Comparer {
  private readonly removals = new PathBuilder();
  private readonly modifications = new PathBuilder();
  private readonly additions = new PathBuilder();
  readonly removed = this.removals.set;
  readonly modified = this.modifications.set;
  readonly added = this.additions.set;
  private readonly path: PathElement[] = [];
  // The stack, as parallel arrays.
  private readonly tasks: Task[] = [];
  private readonly lefts: unknown[] = [];
  /** A Node's or Leaf's right value; an Insert's set (builder). */
  private readonly rights: unknown[] = [];
  private readonly types: (TypeInfo | undefined)[] = [];
  private readonly depths: number[] = [];
  private readonly elements: (PathElement | undefined)[] = [];
  /** The depth of the task at hand (its path's length). */
  private depth = 0;

  run(lhs: unknown, rhs: unknown, type: TypeInfo): void {
    this.push(Task.Node, lhs, rhs, type, 0, undefined);
    const tasks = this.tasks;
    while (tasks.length > 0) {
      const task = tasks.pop() as Task;
      const l = this.lefts.pop();
      const r = this.rights.pop();
      const t = this.types.pop();
      const depth = this.depths.pop() as number;
      const pe = this.elements.pop();
      // (Popping is cheaper than setting the length.)
      while (this.path.length > depth) this.path.pop();
      if (pe) this.path[depth - 1] = pe;
      this.depth = depth;
      // The path's elements from depth - 1 on are new.
      const same = depth > 0 ? depth - 1 : 0;
      this.removals.keep(same);
      this.modifications.keep(same);
      this.additions.keep(same);
      if (task === Task.Node) this.node(l, r, t as TypeInfo);
      else if (task === Task.Leaf) this.leaf(l, r);
      else (r as PathBuilder).insert(this.path);
    }
  }

  private push(task: Task, l: unknown, r: unknown, t: TypeInfo | undefined, depth: number, pe: PathElement | undefined): void {
    this.tasks.push(task);
    this.lefts.push(l);
    this.rights.push(r);
    this.types.push(t);
    this.depths.push(depth);
    this.elements.push(pe);
  }

  private node(l: unknown, r: unknown, t: TypeInfo): void {
    if (l === r || (l === undefined && r === undefined)) return;
    const al = atomOf(t, l);
    const ar = atomOf(t, r);
    const form = r === undefined ? al : ar;
    // A value that changed form (e.g. map to string): the old form's contents go (first), the new form is compared.
    const old = l !== undefined && r !== undefined && al.kind !== ar.kind ? al : undefined;
    const leaf = isLeaf(form, l, r);
    // Last, after its contents: a granular list or map that appeared or went.
    if (!leaf && l === undefined) this.push(Task.Insert, undefined, this.additions, undefined, this.depth, this.path[this.depth - 1]);
    else if (!leaf && r === undefined) this.push(Task.Insert, undefined, this.removals, undefined, this.depth, this.path[this.depth - 1]);
    if (!leaf) this.pushItems(form, l, r);
    else if (old) this.push(Task.Leaf, l, r, undefined, this.depth, this.path[this.depth - 1]);
    else this.leaf(l, r);
    if (old) {
      if (isLeaf(old, l, r)) this.leaf(l, r);
      else this.pushItems(old, l, r);
    }
  }

  private pushItems(a: Atom, l: unknown, r: unknown): void {
    if (a.kind === 'list') this.listItems(a, Array.isArray(l) ? l : [], Array.isArray(r) ? r : []);
    else if (a.kind === 'map') this.mapItems(a, isMap(l) ? l : undefined, isMap(r) ? r : undefined);
  }

  private leaf(l: unknown, r: unknown): void {
    if (l === undefined) this.additions.insert(this.path);
    else if (r === undefined) this.removals.insert(this.path);
    else if (!equalValues(l, r)) this.modifications.insert(this.path);
  }

  /** Pushes the members to compare, the first on top. */
  private mapItems(t: MapType, lm: Record<string, unknown> | undefined, rm: Record<string, unknown> | undefined): void {
    const depth = this.depth + 1;
    if (rm) {
      const rk = Object.keys(rm);
      for (let i = rk.length - 1; i >= 0; i--) {
        const k = rk[i];
        if (rm[k] !== undefined && (!lm || getOwn(lm, k) === undefined)) this.push(Task.Node, undefined, rm[k], memberType(t, k) ?? ATOMIC_ANY, depth, fieldElement(k));
      }
    }
    if (lm) {
      const lk = Object.keys(lm);
      for (let i = lk.length - 1; i >= 0; i--) {
        const k = lk[i];
        if (lm[k] !== undefined) this.push(Task.Node, lm[k], rm ? getOwn(rm, k) : undefined, memberType(t, k) ?? ATOMIC_ANY, depth, fieldElement(k));
      }
    }
  }

  /** Pushes the items to compare, the first on top. */
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
    const depth = this.depth + 1;
    for (let i = all.length - 1; i >= 0; i--) {
      const pe = all[i];
      const l = lValues.get(pe.key) ?? [];
      const r = rValues.get(pe.key) ?? [];
      if (l.length <= 1 && r.length <= 1) this.push(Task.Node, l[0], r[0], t.elements, depth, pe);
      else if (l.length >= 2 && r.length >= 2) {
        // Duplicates before and after: compared as one atomic value.
        if (l.length !== r.length || l.some((v, j) => !equalValues(v, r[j]))) this.push(Task.Insert, undefined, this.modifications, undefined, depth, pe);
      } else if (l.length >= 2) {
        // The duplicates go (after the item that stays is compared).
        this.push(Task.Insert, undefined, this.removals, undefined, depth, pe);
        if (r.length) this.push(Task.Node, undefined, r[0], t.elements, depth, pe);
      } else {
        this.push(Task.Insert, undefined, this.additions, undefined, depth, pe);
        if (l.length) this.push(Task.Node, l[0], undefined, t.elements, depth, pe);
      }
    }
  }
}

/**
 * A set built from the paths of a depth-first walk: the sets along the last path inserted are
 * kept, so that an insert walks only the elements that changed since (FieldSet.insert walks the
 * whole path: a value nested d levels deep would cost d² steps).
 */
class PathBuilder {
  readonly set = new FieldSet();
  /** The sets along the last path: nodes[i] is the set below its first i elements. */
  private readonly nodes: FieldSet[] = [this.set];
  /** How many elements of the walk's path `nodes` still follows. */
  private valid = 0;

  /** The walk's path changed after its first `n` elements. */
  keep(n: number): void {
    if (n < this.valid) this.valid = n;
  }

  insert(path: readonly PathElement[]): void {
    const n = path.length;
    if (n === 0) return;
    for (let i = this.valid; i < n - 1; i++) this.nodes[i + 1] = this.nodes[i].descend(path[i]);
    if (this.valid < n - 1) this.valid = n - 1;
    this.nodes[n - 1].addMember(path[n - 1]);
  }
}

/** Whether a node is compared as a leaf under a form: scalars, atomic lists and maps, empty or null containers. */
function isLeaf(a: Atom, l: unknown, r: unknown): boolean {
  if (a.kind === 'scalar') return true;
  if (a.kind === 'list') {
    if (!isAssociative(a)) return true;
    const ll = Array.isArray(l) ? l : undefined;
    const rl = Array.isArray(r) ? r : undefined;
    return !ll?.length && !rl?.length;
  }
  return a.atomic || (!hasMembers(isMap(l) ? l : undefined) && !hasMembers(isMap(r) ? r : undefined));
}
