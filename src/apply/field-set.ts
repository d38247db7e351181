/**
 * Sets of field paths (fieldpath.Set): a trie whose nodes hold the path
 * elements that are members and the child sets below other elements. Set
 * operations follow upstream exactly (Difference only looks at the other
 * set's children; RecursiveDifference drops whole subtrees), and fieldsV1
 * encoding and decoding produce and read upstream's JSON (`{"f:spec":{".":{},
 * "f:replicas":{}}}`, elements sorted by upstream's order).
 *
 * Sets are immutable once built: operations return new sets that may share
 * subtrees with their inputs. Only `insert` mutates, for building a new set.
 *
 * Sets nest as deep as the fields they name (and fieldsV1 written by clients
 * as deep as a request may nest, 10,000 levels): no operation recurses past
 * tree-operation.ts's limit, and none is quadratic in the depth.
 */
import { compareElements, parseElement, PathElementError, UNKNOWN_ELEMENT, type Path, type PathElement } from './path-element.js';
import { hasOwn, isMap, type JsonMap } from './value.js';
import { treeOperation } from '../util/tree-operation.js';
import { runSteps, type Steps } from '../util/turns.js';

export interface ChildSet {
  readonly pe: PathElement;
  readonly set: FieldSet;
}

/**
 * Sets decoded from fieldsV1 objects. Objects in stored managedFields are
 * shared and never changed, and an update decodes the live object's entries:
 * most are the very objects an earlier write encoded.
 */
const decoded = new WeakMap<object, FieldSet>();

/**
 * fieldsV1 objects by their JSON: equal sets encode to one shared object, so
 * 10,000 objects written alike hold one copy of their managedFields sets, not
 * 10,000 (and `decoded` holds one set for them). Bounded; cleared when full.
 */
const interned = new Map<string, JsonMap>();
const MAX_INTERNED = 4096;

/** Objects frozen, or set members written, between two pauses of the encoding (a few milliseconds). */
const ITEMS_PER_STEP = 4096;

/** Freezes a parsed fieldsV1 value and every object in it, pausing every ITEMS_PER_STEP objects. */
function* freezing(root: JsonMap): Steps<JsonMap> {
  const stack: JsonMap[] = [root];
  let done = 0;
  while (stack.length > 0) {
    const m = stack.pop() as JsonMap;
    for (const k in m) {
      const v = m[k];
      if (isMap(v)) stack.push(v);
    }
    Object.freeze(m);
    if (++done % ITEMS_PER_STEP === 0) yield;
  }
  return root;
}

/** fieldpath's reader (json-iterator) refuses fieldsV1 nested deeper than this. */
export const MAX_FIELDS_V1_DEPTH = 10000;

// Shared by every set without members (or children) until it gets some: most sets lack one
// of the two, and a write builds dozens of sets. Never changed (only read through ReadonlyMap).
const NO_MEMBERS = new Map<string, PathElement>();
const NO_CHILDREN = new Map<string, ChildSet>();

export class FieldSet {
  private ownMembers: Map<string, PathElement>;
  private ownChildren: Map<string, ChildSet>;
  /** This set's fieldsV1 object, once made (sets are not changed after they are built). */
  private encoded?: JsonMap;
  /** Whether the set has no member at any depth, once asked (building a set forgets it). */
  private empty?: boolean;

  /** The maps become the set's own: the caller does not change them afterwards. */
  constructor(members?: Map<string, PathElement>, children?: Map<string, ChildSet>) {
    this.ownMembers = members ?? NO_MEMBERS;
    this.ownChildren = children ?? NO_CHILDREN;
  }

  get members(): ReadonlyMap<string, PathElement> {
    return this.ownMembers;
  }

  get children(): ReadonlyMap<string, ChildSet> {
    return this.ownChildren;
  }

  /** Adds a member element (building only). */
  addMember(pe: PathElement): void {
    this.encoded = undefined;
    this.empty = false;
    if (this.ownMembers === NO_MEMBERS) this.ownMembers = new Map();
    this.ownMembers.set(pe.key, pe);
  }

  /** Sets the child set below `pe` (building only). */
  setChild(pe: PathElement, set: FieldSet): void {
    this.encoded = undefined;
    this.empty = undefined;
    if (this.ownChildren === NO_CHILDREN) this.ownChildren = new Map();
    this.ownChildren.set(pe.key, { pe, set });
  }

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (not its parents). The empty path (the whole object) is never owned. */
  insert(path: Path, length = path.length): void {
    if (length === 0) return;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    let node: FieldSet = this;
    for (let i = 0; i < length - 1; i++) {
      // A member goes in below each set on the way.
      node.encoded = undefined;
      node.empty = false;
      node = node.descend(path[i]);
    }
    node.addMember(path[length - 1]);
  }

  /** The child set below `pe`, created when missing (building only). */
  descend(pe: PathElement): FieldSet {
    const c = this.children.get(pe.key);
    if (c) return c.set;
    const set = new FieldSet();
    this.setChild(pe, set);
    return set;
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    let node: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && node; i++) node = node.children.get(path[i].key)?.set;
    return !!node && node.members.has(path[path.length - 1].key);
  }

  hasMember(pe: PathElement): boolean {
    return this.members.has(pe.key);
  }

  /** The subset below `pe` (without the prefix); empty when there is none. */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(pe.key)?.set ?? EMPTY;
  }

  isEmpty(): boolean {
    if (this.ownMembers.size > 0) return false;
    if (this.ownChildren.size === 0) return true;
    if (this.empty === undefined) {
      // Subsets asked before answer at once: operations ask it of every result they build.
      let empty = true;
      const stack: FieldSet[] = [];
      for (const c of this.ownChildren.values()) stack.push(c.set);
      while (stack.length > 0) {
        const s = stack.pop() as FieldSet;
        if (s.ownMembers.size > 0 || s.empty === false) {
          empty = false;
          break;
        }
        if (s.empty) continue;
        for (const c of s.ownChildren.values()) stack.push(c.set);
      }
      this.empty = empty;
    }
    return this.empty;
  }

  /** The number of member paths. */
  size(): number {
    let n = 0;
    const stack: FieldSet[] = [this];
    while (stack.length > 0) {
      const s = stack.pop() as FieldSet;
      n += s.ownMembers.size;
      for (const c of s.ownChildren.values()) stack.push(c.set);
    }
    return n;
  }

  // The operations return `this` (or `o`) when the result would equal it: the set keeps
  // its fieldsV1 encoding, and an update that changes no ownership allocates nothing.

  union(o: FieldSet): FieldSet {
    return FieldSet.unionOf(this, o, undefined);
  }

  private static readonly unionOf = treeOperation<FieldSet, FieldSet, undefined, FieldSet>((a, o, _, sub, depth) => {
    if (o === a || o.isEmptyStructure()) return a;
    if (a.isEmptyStructure()) return o;
    let members: Map<string, PathElement> | undefined;
    for (const [k, pe] of o.members) if (!a.members.has(k)) (members ??= new Map(a.members)).set(k, pe);
    let children: Map<string, ChildSet> | undefined;
    for (const [k, c] of o.children) {
      const mine = a.children.get(k);
      if (!mine) (children ??= new Map(a.children)).set(k, c);
      else {
        const u = sub(mine.set, c.set, undefined, depth + 1);
        if (u !== mine.set) (children ??= new Map(a.children)).set(k, { pe: mine.pe, set: u });
      }
    }
    return members || children ? new FieldSet(members ?? a.ownMembers, children ?? a.ownChildren) : a;
  }, new FieldSet());

  intersection(o: FieldSet): FieldSet {
    return FieldSet.intersectionOf(this, o, undefined);
  }

  private static readonly intersectionOf = treeOperation<FieldSet, FieldSet, undefined, FieldSet>((a, o, _, sub, depth) => {
    if (o === a) return a;
    let members: Map<string, PathElement> | undefined;
    for (const [k, pe] of a.members) if (o.members.has(k)) (members ??= new Map()).set(k, pe);
    let children: Map<string, ChildSet> | undefined;
    let same = (members?.size ?? 0) === a.members.size;
    for (const [k, c] of a.children) {
      const other = o.children.get(k);
      if (!other) {
        same = false;
        continue;
      }
      const s = sub(c.set, other.set, undefined, depth + 1);
      if (s !== c.set) same = false;
      if (!s.isEmpty()) (children ??= new Map()).set(k, s === c.set ? c : { pe: c.pe, set: s });
    }
    if (same) return a;
    return !members && !children ? EMPTY : new FieldSet(members, children);
  }, new FieldSet());

  /** Members not in `o`; children minus `o`'s children (a member of `o` does not remove a subtree). */
  difference(o: FieldSet): FieldSet {
    return FieldSet.minus(this, o, false);
  }

  /** Like difference, but a member of `o` also removes everything below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    return FieldSet.minus(this, o, true);
  }

  private static readonly minus = treeOperation<FieldSet, FieldSet, boolean, FieldSet>((a, o, recursive, sub, depth) => {
    if (o.isEmptyStructure()) return a;
    let members: Map<string, PathElement> | undefined;
    for (const k of a.members.keys()) if (o.members.has(k)) (members ??= new Map(a.members)).delete(k);
    let children: Map<string, ChildSet> | undefined;
    for (const [k, c] of a.children) {
      if (recursive && o.members.has(k)) {
        (children ??= new Map(a.children)).delete(k);
        continue;
      }
      const other = o.children.get(k);
      if (!other) continue;
      const s = sub(c.set, other.set, recursive, depth + 1);
      if (s === c.set) continue;
      children ??= new Map(a.children);
      if (s.isEmpty()) children.delete(k);
      else children.set(k, { pe: c.pe, set: s });
    }
    return members || children ? new FieldSet(members ?? a.ownMembers, children ?? a.ownChildren) : a;
  }, new FieldSet());

  equals(o: FieldSet): boolean {
    const stack: FieldSet[] = [this, o];
    while (stack.length > 0) {
      const b = stack.pop() as FieldSet;
      const a = stack.pop() as FieldSet;
      if (a === b) continue;
      if (a.members.size !== b.members.size || a.children.size !== b.children.size) return false;
      for (const k of a.members.keys()) if (!b.members.has(k)) return false;
      for (const [k, c] of a.children) {
        const other = b.children.get(k);
        if (!other) return false;
        stack.push(c.set, other.set);
      }
    }
    return true;
  }

  /** Member paths in upstream's order (pre-order: an element's members, then its children, each sorted). */
  paths(): Path[] {
    const out: Path[] = [];
    // Pre-order, children pushed in reverse; `prefix` holds the elements leading to the set
    // being visited (each entry knows its depth and the element that leads to it).
    const prefix: PathElement[] = [];
    const stack: { set: FieldSet; depth: number; pe?: PathElement }[] = [{ set: this, depth: 0 }];
    while (stack.length > 0) {
      const { set, depth, pe } = stack.pop() as (typeof stack)[number];
      while (prefix.length > depth) prefix.pop();
      if (pe) prefix[depth - 1] = pe;
      for (const m of sortedElements(set.members.values())) out.push([...prefix, m]);
      const children = sortedChildren(set.children.values());
      for (let i = children.length - 1; i >= 0; i--) stack.push({ set: children[i].set, depth: depth + 1, pe: children[i].pe });
    }
    return out;
  }

  /**
   * The fieldsV1 JSON object (`Set.ToJSON`): shared, and frozen, so copies of the
   * objects that hold it (deepClone) share it too and it stays known to `decoded`.
   */
  toFieldsV1(): JsonMap {
    return this.encoded ?? runSteps(this.encoding());
  }

  /** toFieldsV1 in steps (util/turns.ts): the text, its parse and its freezing each take one. */
  *encoding(): Steps<JsonMap> {
    if (!this.encoded) {
      // The JSON text finds the shared object; only a set not seen before builds one.
      const json = yield* emittingText(this, false);
      let shared = interned.get(json);
      if (!shared) {
        yield;
        const parsed = JSON.parse(json) as JsonMap;
        yield;
        shared = yield* freezing(parsed);
        if (interned.size >= MAX_INTERNED) interned.clear();
        interned.set(json, shared);
        decoded.set(shared, this);
      }
      this.encoded = shared;
    }
    return this.encoded;
  }

  /** Set.FromJSON of a parsed fieldsV1 value; throws FieldsV1Error for malformed input. The set is shared: do not insert into it. */
  static fromFieldsV1(v: unknown): FieldSet {
    if (!isMap(v)) throw new FieldsV1Error(`expected a JSON object, got ${v === null ? 'null' : typeof v}`);
    let set = decoded.get(v);
    if (!set) {
      set = read(v, 1, undefined).children ?? new FieldSet();
      // A frozen object is one toFieldsV1 made, or a copy that shares it: the set's encoding.
      if (Object.isFrozen(v)) set.encoded = v;
      decoded.set(v, set);
    }
    return set;
  }

  private isEmptyStructure(): boolean {
    return this.members.size === 0 && this.children.size === 0;
  }
}

export const EMPTY: FieldSet = new FieldSet();

export class FieldsV1Error extends Error {}

function sortedElements(it: Iterable<PathElement>): PathElement[] {
  return [...it].sort(compareElements);
}

function sortedChildren(it: Iterable<ChildSet>): ChildSet[] {
  return [...it].sort((a, b) => compareElements(a.pe, b.pe));
}

// emitContentsV1, as JSON text: "." first when the element is also a member, then members
// and children merged in order. (No key is an array index, so JSON.parse keeps this order.)
// An explicit stack holds what is still to write: text, or a set. Pauses every ITEMS_PER_STEP entries.
function* emittingText(root: FieldSet, rootIncludeSelf: boolean): Steps<string> {
  let entries = 0;
  type Item = string | { s: FieldSet; includeSelf: boolean };
  const out: string[] = [];
  const stack: Item[] = [{ s: root, includeSelf: rootIncludeSelf }];
  while (stack.length > 0) {
    const item = stack.pop() as Item;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const { s, includeSelf } = item;
    // The set's contents in order (text runs between its child sets), pushed in reverse below.
    const parts: Item[] = [];
    let text = includeSelf && (s.members.size > 0 || s.children.size > 0) ? '{".":{}' : '{';
    let written = text.length > 1;
    const members = sortedElements(s.members.values());
    const children = sortedChildren(s.children.values());
    let mi = 0;
    let ci = 0;
    while (mi < members.length || ci < children.length) {
      if (written) text += ',';
      written = true;
      const m = members[mi];
      const c = children[ci];
      const cmp = !m ? 1 : !c ? -1 : compareElements(m, c.pe);
      if (++entries % ITEMS_PER_STEP === 0) yield;
      if (cmp < 0) {
        text += quotedKey(m.key) + '{}';
        mi++;
      } else {
        parts.push(text + quotedKey(c.pe.key), { s: c.set, includeSelf: cmp === 0 });
        text = '';
        if (cmp === 0) mi++;
        ci++;
      }
    }
    parts.push(text + '}');
    for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]);
  }
  return out.join('');
}

/** `"key":` for a path element key (they repeat: the common ones are kept). */
const quotedKeys = new Map<string, string>();

function quotedKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k) + ':';
    if (quotedKeys.size >= 4096) quotedKeys.clear();
    quotedKeys.set(k, q);
  }
  return q;
}

interface ReadResult {
  children?: FieldSet;
  member: boolean;
}

// readIterV1: returns the child set (undefined when the node has no children) and whether the node
// is a member. `level` is the object's depth in the fieldsV1 value (the value itself is 1), which
// json-iterator caps: a deeper fieldsV1 does not decode.
const read = treeOperation<JsonMap, number, undefined, ReadResult>(
  (obj, level, _, sub, depth) => {
    if (level > MAX_FIELDS_V1_DEPTH) throw new FieldsV1Error(TOO_DEEP);
    let children: FieldSet | undefined;
    let member = false;
    for (const key of Object.keys(obj)) {
      if (!hasOwn(obj, key)) continue;
      const value = obj[key];
      if (key === '.') {
        if (skipsTooDeep(value, level)) throw new FieldsV1Error(TOO_DEEP);
        member = true;
        continue;
      }
      let pe: PathElement | typeof UNKNOWN_ELEMENT;
      try {
        pe = parseElement(key);
      } catch (e) {
        if (e instanceof PathElementError) throw new FieldsV1Error(`parsing key as path element: ${e.message}`);
        throw e;
      }
      if (pe === UNKNOWN_ELEMENT) {
        if (skipsTooDeep(value, level)) throw new FieldsV1Error(TOO_DEEP);
        continue;
      }
      if (!isMap(value)) throw new FieldsV1Error(`expected a JSON object for ${JSON.stringify(key)}`);
      const child = sub(value, level + 1, undefined, depth + 1);
      if (child.member) (children ??= new FieldSet()).addMember(pe);
      if (child.children) {
        children ??= new FieldSet();
        const existing = children.children.get(pe.key);
        children.setChild(pe, existing ? existing.set.union(child.children) : child.children);
      }
    }
    if (!children) member = true;
    return { children, member };
  },
  { member: false },
);

/** json-iterator's error for a value nested deeper than it reads (its text, without the input it quotes). */
const TOO_DEEP = 'incrementDepth: exceeded max depth';

/** Whether a value json-iterator skips below `level` (a "." or an unknown element's) nests past its limit. */
function skipsTooDeep(value: unknown, level: number): boolean {
  if (level < MAX_FIELDS_V1_DEPTH && typeof value === 'object' && value !== null && isEmptyObject(value)) return false; // `{}`, one level
  return level + nestingDepth(value) > MAX_FIELDS_V1_DEPTH;
}

function isEmptyObject(v: object): boolean {
  for (const _ in v) return false;
  return true;
}

/** How many levels of objects and arrays a JSON value nests (a scalar: 0). */
function nestingDepth(v: unknown): number {
  if (typeof v !== 'object' || v === null) return 0;
  let max = 0;
  const values: object[] = [v];
  const depths: number[] = [1];
  while (values.length > 0) {
    const x = values.pop() as object;
    const d = depths.pop() as number;
    if (d > max) max = d;
    for (const y of Object.values(x)) {
      if (typeof y === 'object' && y !== null) {
        values.push(y);
        depths.push(d + 1);
      }
    }
  }
  return max;
}
