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
import { equalValues, getOwn, isMap } from './value.js';
import { runSteps, type Steps } from '../util/turns.js';

export interface Comparison {
  removed: FieldSet;
  modified: FieldSet;
  added: FieldSet;
}

export function compare(lhs: unknown, rhs: unknown, type: TypeInfo): Comparison {
  return runSteps(comparing(lhs, rhs, type));
}

/** Nodes compared between two pauses of `comparing` (a few milliseconds, with a busy heap's collections). */
const NODES_PER_STEP = 2048;

/** compare, pausing every NODES_PER_STEP nodes (util/turns.ts). */
export function* comparing(lhs: unknown, rhs: unknown, type: TypeInfo): Steps<Comparison> {
  const c = new Comparer();
  c.start(lhs, rhs, type);
  while (!c.run(NODES_PER_STEP)) yield;
  return { removed: c.removed, modified: c.modified, added: c.added };
}

export function isSame(c: Comparison): boolean {
  return c.removed.isEmpty() && c.modified.isEmpty() && c.added.isEmpty();
}

/** Whether a map (with its own keys) has a member that is not undefined. */
function hasMembers(m: Record<string, unknown> | undefined, keys: string[] | undefined): boolean {
  if (m && keys) for (const k of keys) if (m[k] !== undefined) return true;
  return false;
}

/**
 * A map's own keys, when a granular map form needs them (undefined otherwise). V8 enumerates a large map
 * whole even to find its first key (about 10 ms for 60,000 keys), so each map is enumerated once per node.
 */
function keysFor(a: Atom | undefined, v: unknown): string[] | undefined {
  return a !== undefined && a.kind === 'map' && !a.atomic && isMap(v) ? Object.keys(v) : undefined;
}

/** What the Comparer's stack holds: a pair of values to compare, a leaf to compare, or a path to add to a set. */
const enum Task {
  Node,
  Leaf,
  Insert,
  Members,
}

/** Members of a map pushed at once; a larger map is gone through by a cursor, a part at a time. */
const MEMBERS_AT_ONCE = 256;

/** A large map's members still to push: of the left map (`other` the right one), or the right one's that the left lacks. */
interface MemberCursor {
  keys: string[];
  next: number;
  map: Record<string, unknown>;
  other: Record<string, unknown> | undefined;
  left: boolean;
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

  start(lhs: unknown, rhs: unknown, type: TypeInfo): void {
    this.push(Task.Node, lhs, rhs, type, 0, undefined);
  }

  /** Works through up to `budget` tasks; true when none are left. */
  run(budget: number): boolean {
    const tasks = this.tasks;
    while (tasks.length > 0) {
      if (budget-- === 0) return false;
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
      else if (task === Task.Members) this.members(r as MemberCursor, t as MapType);
      else (r as PathBuilder).insert(this.path);
    }
    return true;
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
    const mapForm = form.kind === 'map' ? form : old;
    const lk = keysFor(mapForm, l);
    const rk = keysFor(mapForm, r);
    const leaf = isLeaf(form, l, r, lk, rk);
    // Last, after its contents: a granular list or map that appeared or went.
    if (!leaf && l === undefined) this.push(Task.Insert, undefined, this.additions, undefined, this.depth, this.path[this.depth - 1]);
    else if (!leaf && r === undefined) this.push(Task.Insert, undefined, this.removals, undefined, this.depth, this.path[this.depth - 1]);
    if (!leaf) this.pushItems(form, l, r, lk, rk);
    else if (old) this.push(Task.Leaf, l, r, undefined, this.depth, this.path[this.depth - 1]);
    else this.leaf(l, r);
    if (old) {
      if (isLeaf(old, l, r, lk, rk)) this.leaf(l, r);
      else this.pushItems(old, l, r, lk, rk);
    }
  }

  private pushItems(a: Atom, l: unknown, r: unknown, lk: string[] | undefined, rk: string[] | undefined): void {
    if (a.kind === 'list') this.listItems(a, Array.isArray(l) ? l : [], Array.isArray(r) ? r : []);
    else if (a.kind === 'map') this.mapItems(a, isMap(l) ? l : undefined, lk, isMap(r) ? r : undefined, rk);
  }

  private leaf(l: unknown, r: unknown): void {
    if (l === undefined) this.additions.insert(this.path);
    else if (r === undefined) this.removals.insert(this.path);
    else if (!equalValues(l, r)) this.modifications.insert(this.path);
  }

  /** Pushes the members to compare, the first on top: the left map's, then those only the right one has. */
  private mapItems(t: MapType, lm: Record<string, unknown> | undefined, lk: string[] | undefined, rm: Record<string, unknown> | undefined, rk: string[] | undefined): void {
    if (rm) this.members({ keys: rk ?? Object.keys(rm), next: 0, map: rm, other: lm, left: false }, t);
    if (lm) this.members({ keys: lk ?? Object.keys(lm), next: 0, map: lm, other: rm, left: true }, t);
  }

  /** Pushes the cursor's next members (and, under them, the cursor for the rest). */
  private members(c: MemberCursor, t: MapType): void {
    const start = c.next;
    const end = Math.min(c.keys.length, start + MEMBERS_AT_ONCE);
    c.next = end;
    if (end < c.keys.length) this.push(Task.Members, undefined, c, t, this.depth, this.path[this.depth - 1]);
    const depth = this.depth + 1;
    const { keys, map, other } = c;
    for (let i = end - 1; i >= start; i--) {
      const k = keys[i];
      const v = map[k];
      if (v === undefined) continue;
      if (c.left) this.push(Task.Node, v, other ? getOwn(other, k) : undefined, memberType(t, k) ?? ATOMIC_ANY, depth, fieldElement(k));
      else if (!other || getOwn(other, k) === undefined) this.push(Task.Node, undefined, v, memberType(t, k) ?? ATOMIC_ANY, depth, fieldElement(k));
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
function isLeaf(a: Atom, l: unknown, r: unknown, lk: string[] | undefined, rk: string[] | undefined): boolean {
  if (a.kind === 'scalar') return true;
  if (a.kind === 'list') {
    if (!isAssociative(a)) return true;
    const ll = Array.isArray(l) ? l : undefined;
    const rl = Array.isArray(r) ? r : undefined;
    return !ll?.length && !rl?.length;
  }
  return a.atomic || (!hasMembers(isMap(l) ? l : undefined, lk) && !hasMembers(isMap(r) ? r : undefined, rk));
}
