/**
 * Walking a value with its type (structured-merge-diff's typed package):
 * the path element of each associative-list item, validation of a value
 * against its type (with upstream's messages, e.g. `.spec.foo: field not
 * declared in schema`), and the field set a value sets (ToFieldSet): leaves,
 * atomic lists and maps whole, list items by key or value, null and empty
 * maps, and undeclared map keys as members of their own. Values nest as deep
 * as requests may (10,000 levels): the walks keep their own stacks.
 */
import { FieldSet } from './field-set.js';
import { elementString, fieldElement, indexElement, keyElement, valueElement, type KeyField, type PathElement } from './path-element.js';
import { ATOMIC_ANY, DEDUCED, atomOf, memberType, isDeclared, type ListType, type MapType, type ScalarKind, type TypeInfo } from './types.js';
import { getOwn, goFormatV, goTypeName, isMap, isScalar, mapKeys, type JsonMap } from './value.js';
import { treeOperation } from '../util/tree-operation.js';

/** The path element of a set or map-list item, or the reason it has none. */
export function listItemElement(t: ListType, item: unknown): PathElement | string {
  if (t.keys.length > 0 && t.listType !== 'set') return keyedItemElement(t, item);
  if (isMap(item)) return "associative list without keys has an element that's a map type";
  if (Array.isArray(item)) return 'not supported: associative list with lists as elements';
  if (item === null || item === undefined) return "associative list without keys has an element that's an explicit null";
  return valueElement(item);
}

function keyedItemElement(t: ListType, item: unknown): PathElement | string {
  if (item === null || item === undefined) return 'associative list with keys may not have a null element';
  if (!isMap(item)) return 'associative list with keys may not have non-map elements';
  const fields: KeyField[] = [];
  let elementMap: MapType | undefined;
  for (const name of t.keys) {
    const v = getOwn(item, name);
    if (v !== undefined) {
      fields.push({ name, value: v });
      continue;
    }
    elementMap ??= t.elements.kind === 'map' ? t.elements : t.elements.kind === 'any' ? t.elements.map : undefined;
    if (!elementMap) return `couldn't find default value for ${name}: associative list may not have non-map types`;
    const def = elementMap.defaults?.get(name);
    if (def !== undefined) fields.push({ name, value: def });
  }
  if (fields.length === 0) {
    return `associative list with keys has an element that omits all key fields [${t.keys.map((k) => JSON.stringify(k)).join(' ')}] (and doesn't have default values for any key fields)`;
  }
  return keyElement(fields);
}

export function isAssociative(t: ListType): boolean {
  return t.listType !== 'atomic';
}

// ---- validation ----

export interface ValidationError {
  path: string;
  message: string;
}

/** ValidationErrors.Error(): one as `path: message`, several under `errors:`. */
export function validationMessage(errs: ValidationError[]): string {
  const one = (e: ValidationError) => (e.path ? `${e.path}: ${e.message}` : e.message);
  if (errs.length === 1) return one(errs[0]);
  return ['errors:', ...errs.map((e) => '  ' + one(e))].join('\n');
}

/** TypedValue.Validate: the value conforms to its type; duplicates in associative lists are errors unless allowed. */
export function validate(value: unknown, type: TypeInfo, allowDuplicates: boolean): ValidationError[] {
  const v = new Validator(allowDuplicates);
  v.run(value, type);
  return v.errs;
}

/** A list or map being validated: its items are checked one at a time, in order, below `depth` elements of path. */
type Container =
  | { depth: number; list: unknown[]; type: ListType; i: number; seen?: Set<string> }
  | { depth: number; list?: undefined; map: JsonMap; type: MapType; keys: string[]; i: number };

/**
 * A depth-first walk with its own stack of the containers it is in, so that errors come in
 * the order a recursive walk finds them. The path is kept as a stack of elements, made into
 * text only for an error.
 */
class Validator {
  readonly errs: ValidationError[] = [];
  private readonly path: (string | PathElement)[] = [];
  private readonly containers: Container[] = [];

  constructor(private readonly dups: boolean) {}

  private error(message: string, member?: string): void {
    let path = '';
    for (const e of this.path) path += typeof e === 'string' ? '.' + e : elementString(e);
    if (member !== undefined) path += '.' + member;
    this.errs.push({ path, message });
  }

  run(value: unknown, type: TypeInfo): void {
    this.node(value, type, 0);
    const containers = this.containers;
    while (containers.length > 0) {
      const c = containers[containers.length - 1];
      // (Popping is cheaper than setting the length.)
      while (this.path.length > c.depth) this.path.pop();
      if (c.list) {
        if (c.i >= c.list.length) {
          containers.pop();
          continue;
        }
        const i = c.i++;
        let pe: PathElement;
        if (!c.seen) pe = indexElement(i);
        else {
          const r = listItemElement(c.type, c.list[i]);
          if (typeof r === 'string') {
            this.error(`element ${i}: ${r}`);
            containers.pop();
            continue;
          }
          pe = r;
          if (c.seen.has(pe.key) && !this.dups) this.error(`duplicate entries for key ${elementString(pe)}`);
          c.seen.add(pe.key);
        }
        this.path.push(pe);
        this.node(c.list[i], c.type.elements, c.depth + 1);
        continue;
      }
      if (c.i >= c.keys.length) {
        containers.pop();
        continue;
      }
      const key = c.keys[c.i++];
      const member = c.map[key];
      if (member === undefined) continue;
      const ft = memberType(c.type, key);
      if (!ft) {
        this.error('field not declared in schema', key);
        containers.pop();
        continue;
      }
      this.path.push(key);
      this.node(member, ft, c.depth + 1);
    }
  }

  /** Checks a value whose path is `depth` elements long (this.path); lists and maps go on the stack. */
  private node(v: unknown, t: TypeInfo, depth: number): void {
    // Untyped values take any JSON (managedFields' fieldsV1, preserved unknown fields).
    if (t === ATOMIC_ANY || t === DEDUCED) return;
    const a = atomOf(t, v);
    if (a.kind === 'scalar') {
      const msg = scalarError(a.scalar, v);
      if (msg) this.error(msg);
      return;
    }
    if (v === null || v === undefined) return;
    if (a.kind === 'list') {
      if (!Array.isArray(v)) this.error(`expected list, got &{${goFormatV(v)}}`);
      else this.containers.push({ depth, list: v, type: a, i: 0, seen: isAssociative(a) ? new Set<string>() : undefined });
    } else if (!isMap(v)) this.error(`expected map, got &{${goFormatV(v)}}`);
    else this.containers.push({ depth, map: v, type: a, keys: Object.keys(v), i: 0 });
  }
}

function scalarError(kind: ScalarKind, v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  switch (kind) {
    case 'numeric':
      return typeof v === 'number' || typeof v === 'bigint' ? undefined : `expected numeric (int or float), got ${goTypeName(v)}`;
    case 'string':
      return typeof v === 'string' ? undefined : `expected string, got &value.valueUnstructured{Value:${goFormatV(v)}}`;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : `expected boolean, got &{${goFormatV(v)}}`;
    default:
      return isScalar(v) ? undefined : `expected any scalar, got &{${goFormatV(v)}}`;
  }
}

// ---- ToFieldSet ----

/** TypedValue.ToFieldSet: every leaf field and list or map item the value mentions. */
export function toFieldSet(value: unknown, type: TypeInfo): FieldSet {
  const a = atomOf(type, value);
  if (a.kind === 'map' && !a.atomic && isMap(value)) return itemsOf(value, a, undefined);
  if (a.kind === 'list' && isAssociative(a) && Array.isArray(value)) return itemsOf(value, a, undefined);
  return new FieldSet();
}

/**
 * The set of what a granular map or associative list sets, relative to it. Lists and maps in it
 * come from `sub` (a tree operation: values nest as deep as requests may) and are attached when
 * they set something.
 */
const itemsOf = treeOperation<unknown, MapType | ListType, undefined, FieldSet>((v, t, _, sub, depth) => {
  const node = new FieldSet();
  // What the value at `pe` sets: itself (a leaf), or the items of a granular list or map.
  const visit = (item: unknown, it: TypeInfo, pe: PathElement) => {
    const a = atomOf(it, item);
    if (a.kind === 'scalar' || (a.kind === 'list' ? !isAssociative(a) : a.atomic)) {
      node.addMember(pe);
      return;
    }
    if (a.kind === 'list' ? Array.isArray(item) && item.length > 0 : isMap(item)) {
      const child = sub(item, a, undefined, depth + 1);
      if (child.members.size > 0 || child.children.size > 0) node.setChild(pe, child);
    }
  };
  if (t.kind === 'list') {
    const list = v as unknown[];
    const pes: (PathElement | undefined)[] = new Array(list.length);
    const seen = new Set<string>();
    let duplicates: Set<string> | undefined;
    for (let i = 0; i < list.length; i++) {
      const r = listItemElement(t, list[i]);
      if (typeof r === 'string') continue;
      pes[i] = r;
      if (seen.has(r.key)) {
        (duplicates ??= new Set()).add(r.key);
        node.addMember(r);
      } else seen.add(r.key);
    }
    for (let i = 0; i < list.length; i++) {
      const pe = pes[i];
      if (!pe || duplicates?.has(pe.key)) continue;
      visit(list[i], t.elements, pe);
      node.addMember(pe);
    }
    return node;
  }
  const m = v as JsonMap;
  for (const key of mapKeys(m)) {
    const value = m[key];
    const pe = fieldElement(key);
    const ft = memberType(t, key);
    if (ft) visit(value, ft, pe);
    if (value === null || (isMap(value) && mapKeys(value).length === 0) || !isDeclared(t, key)) node.addMember(pe);
  }
  return node;
}, new FieldSet());
