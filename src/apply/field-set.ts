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
 */
import { compareElements, parseElement, PathElementError, UNKNOWN_ELEMENT, type Path, type PathElement } from './path-element.js';
import { hasOwn, isMap, type JsonMap } from './value.js';

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

function deepFreeze(m: JsonMap): JsonMap {
  for (const k in m) if (isMap(m[k])) deepFreeze(m[k]);
  return Object.freeze(m);
}

// Shared by every set without members (or children) until it gets some: most sets lack one
// of the two, and a write builds dozens of sets. Never changed (only read through ReadonlyMap).
const NO_MEMBERS = new Map<string, PathElement>();
const NO_CHILDREN = new Map<string, ChildSet>();

export class FieldSet {
  private ownMembers: Map<string, PathElement>;
  private ownChildren: Map<string, ChildSet>;
  /** This set's fieldsV1 object, once made (sets are not changed after they are built). */
  private encoded?: JsonMap;

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
    if (this.ownMembers === NO_MEMBERS) this.ownMembers = new Map();
    this.ownMembers.set(pe.key, pe);
  }

  /** Sets the child set below `pe` (building only). */
  setChild(pe: PathElement, set: FieldSet): void {
    this.encoded = undefined;
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
    this.encoded = undefined;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    let node: FieldSet = this;
    for (let i = 0; i < length - 1; i++) node = node.descend(path[i]);
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
    if (this.members.size > 0) return false;
    for (const c of this.children.values()) if (!c.set.isEmpty()) return false;
    return true;
  }

  /** The number of member paths. */
  size(): number {
    let n = this.members.size;
    for (const c of this.children.values()) n += c.set.size();
    return n;
  }

  // The operations return `this` (or `o`) when the result would equal it: the set keeps
  // its fieldsV1 encoding, and an update that changes no ownership allocates nothing.

  union(o: FieldSet): FieldSet {
    if (o === this || o.isEmptyStructure()) return this;
    if (this.isEmptyStructure()) return o;
    let members: Map<string, PathElement> | undefined;
    for (const [k, pe] of o.members) if (!this.members.has(k)) (members ??= new Map(this.members)).set(k, pe);
    let children: Map<string, ChildSet> | undefined;
    for (const [k, c] of o.children) {
      const mine = this.children.get(k);
      if (!mine) (children ??= new Map(this.children)).set(k, c);
      else {
        const u = mine.set.union(c.set);
        if (u !== mine.set) (children ??= new Map(this.children)).set(k, { pe: mine.pe, set: u });
      }
    }
    return members || children ? new FieldSet(members ?? this.ownMembers, children ?? this.ownChildren) : this;
  }

  intersection(o: FieldSet): FieldSet {
    if (o === this) return this;
    let members: Map<string, PathElement> | undefined;
    for (const [k, pe] of this.members) if (o.members.has(k)) (members ??= new Map()).set(k, pe);
    let children: Map<string, ChildSet> | undefined;
    let same = (members?.size ?? 0) === this.members.size;
    for (const [k, c] of this.children) {
      const other = o.children.get(k);
      if (!other) {
        same = false;
        continue;
      }
      const s = c.set.intersection(other.set);
      if (s !== c.set) same = false;
      if (!s.isEmpty()) (children ??= new Map()).set(k, s === c.set ? c : { pe: c.pe, set: s });
    }
    if (same) return this;
    return !members && !children ? EMPTY : new FieldSet(members, children);
  }

  /** Members not in `o`; children minus `o`'s children (a member of `o` does not remove a subtree). */
  difference(o: FieldSet): FieldSet {
    return this.minus(o, false);
  }

  /** Like difference, but a member of `o` also removes everything below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    return this.minus(o, true);
  }

  private minus(o: FieldSet, recursive: boolean): FieldSet {
    if (o.isEmptyStructure()) return this;
    let members: Map<string, PathElement> | undefined;
    for (const k of this.members.keys()) if (o.members.has(k)) (members ??= new Map(this.members)).delete(k);
    let children: Map<string, ChildSet> | undefined;
    for (const [k, c] of this.children) {
      if (recursive && o.members.has(k)) {
        (children ??= new Map(this.children)).delete(k);
        continue;
      }
      const other = o.children.get(k);
      if (!other) continue;
      const s = c.set.minus(other.set, recursive);
      if (s === c.set) continue;
      children ??= new Map(this.children);
      if (s.isEmpty()) children.delete(k);
      else children.set(k, { pe: c.pe, set: s });
    }
    return members || children ? new FieldSet(members ?? this.ownMembers, children ?? this.ownChildren) : this;
  }

  equals(o: FieldSet): boolean {
    if (this.members.size !== o.members.size || this.children.size !== o.children.size) return false;
    for (const k of this.members.keys()) if (!o.members.has(k)) return false;
    for (const [k, c] of this.children) {
      const other = o.children.get(k);
      if (!other || !c.set.equals(other.set)) return false;
    }
    return true;
  }

  /** Member paths in upstream's order (pre-order: an element's members, then its children, each sorted). */
  paths(): Path[] {
    const out: Path[] = [];
    const walk = (s: FieldSet, prefix: PathElement[]) => {
      for (const pe of sortedElements(s.members.values())) out.push([...prefix, pe]);
      for (const c of sortedChildren(s.children.values())) walk(c.set, [...prefix, c.pe]);
    };
    walk(this, []);
    return out;
  }

  /**
   * The fieldsV1 JSON object (`Set.ToJSON`): shared, and frozen, so copies of the
   * objects that hold it (deepClone) share it too and it stays known to `decoded`.
   */
  toFieldsV1(): JsonMap {
    if (!this.encoded) {
      // The JSON text finds the shared object; only a set not seen before builds one.
      const json = emitText(this, false);
      let shared = interned.get(json);
      if (!shared) {
        if (interned.size >= MAX_INTERNED) interned.clear();
        interned.set(json, (shared = deepFreeze(JSON.parse(json) as JsonMap)));
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
      set = read(v).children ?? new FieldSet();
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
function emitText(s: FieldSet, includeSelf: boolean): string {
  let out = includeSelf && (s.members.size > 0 || s.children.size > 0) ? '{".":{}' : '{';
  const members = sortedElements(s.members.values());
  const children = sortedChildren(s.children.values());
  let mi = 0;
  let ci = 0;
  while (mi < members.length || ci < children.length) {
    if (out.length > 1) out += ',';
    const m = members[mi];
    const c = children[ci];
    const cmp = !m ? 1 : !c ? -1 : compareElements(m, c.pe);
    if (cmp < 0) {
      out += quotedKey(m.key) + '{}';
      mi++;
    } else {
      out += quotedKey(c.pe.key) + emitText(c.set, cmp === 0);
      if (cmp === 0) mi++;
      ci++;
    }
  }
  return out + '}';
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

// readIterV1: returns the child set (undefined when the node has no children) and whether the node is a member.
function read(obj: JsonMap): { children?: FieldSet; member: boolean } {
  let children: FieldSet | undefined;
  let member = false;
  for (const key of Object.keys(obj)) {
    if (!hasOwn(obj, key)) continue;
    const value = obj[key];
    if (key === '.') {
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
    if (pe === UNKNOWN_ELEMENT) continue;
    if (!isMap(value)) throw new FieldsV1Error(`expected a JSON object for ${JSON.stringify(key)}`);
    const sub = read(value);
    if (sub.member) (children ??= new FieldSet()).addMember(pe);
    if (sub.children) {
      children ??= new FieldSet();
      const existing = children.children.get(pe.key);
      children.setChild(pe, existing ? existing.set.union(sub.children) : sub.children);
    }
  }
  if (!children) member = true;
  return { children, member };
}
