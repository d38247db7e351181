/**
 * Walking a value with its type (structured-merge-diff's typed package):
 * the path element of each associative-list item, validation of a value
 * against its type (with upstream's messages, e.g. `.spec.foo: field not
 * declared in schema`), and the field set a value sets (ToFieldSet): leaves,
 * atomic lists and maps whole, list items by key or value, null and empty
 * maps, and undeclared map keys as members of their own.
 */
import { FieldSet } from './field-set.js';
import { elementString, fieldElement, indexElement, keyElement, valueElement, type KeyField, type PathElement } from './path-element.js';
import { ATOMIC_ANY, DEDUCED, atomOf, memberType, isDeclared, type ListType, type MapType, type ScalarKind, type TypeInfo } from './types.js';
import { getOwn, goFormatV, goTypeName, hasOwn, isMap, isScalar, mapKeys, type JsonMap } from './value.js';

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
  v.node(value, type);
  return v.errs;
}

/** A walk that keeps the path as a stack of elements, made into text only for an error. */
class Validator {
  readonly errs: ValidationError[] = [];
  private readonly path: (string | PathElement)[] = [];

  constructor(private readonly dups: boolean) {}

  private error(message: string, member?: string): void {
    let path = '';
    for (const e of this.path) path += typeof e === 'string' ? '.' + e : elementString(e);
    if (member !== undefined) path += '.' + member;
    this.errs.push({ path, message });
  }

  node(v: unknown, t: TypeInfo): void {
    // Untyped values take any JSON (managedFields' fieldsV1, preserved unknown fields).
    if (t === ATOMIC_ANY || t === DEDUCED) return;
    const a = atomOf(t, v);
    if (a.kind === 'scalar') {
      const msg = scalarError(a.scalar, v);
      if (msg) this.error(msg);
      return;
    }
    if (v === null || v === undefined) return;
    if (a.kind === 'list') this.list(v, a);
    else this.map(v, a);
  }

  private list(v: unknown, a: ListType): void {
    if (!Array.isArray(v)) {
      this.error(`expected list, got &{${goFormatV(v)}}`);
      return;
    }
    const seen = isAssociative(a) ? new Set<string>() : undefined;
    for (let i = 0; i < v.length; i++) {
      let pe: PathElement;
      if (!seen) pe = indexElement(i);
      else {
        const r = listItemElement(a, v[i]);
        if (typeof r === 'string') {
          this.error(`element ${i}: ${r}`);
          return;
        }
        pe = r;
        if (seen.has(pe.key) && !this.dups) this.error(`duplicate entries for key ${elementString(pe)}`);
        seen.add(pe.key);
      }
      this.path.push(pe);
      this.node(v[i], a.elements);
      this.path.pop();
    }
  }

  private map(v: unknown, a: MapType): void {
    if (!isMap(v)) {
      this.error(`expected map, got &{${goFormatV(v)}}`);
      return;
    }
    for (const key in v) {
      const member = v[key];
      if (member === undefined || !hasOwn(v, key)) continue;
      const ft = memberType(a, key);
      if (!ft) {
        this.error('field not declared in schema', key);
        return;
      }
      this.path.push(key);
      this.node(member, ft);
      this.path.pop();
    }
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
  const root = new FieldSet();
  const a = atomOf(type, value);
  if (a.kind === 'map' && !a.atomic && isMap(value)) mapItems(value, a, root);
  else if (a.kind === 'list' && isAssociative(a) && Array.isArray(value)) listItems(value, a, root);
  return root;
}

/** Adds what the value at `pe` sets to `parent`, the set of its container. */
function visit(v: unknown, t: TypeInfo, parent: FieldSet, pe: PathElement): void {
  const a = atomOf(t, v);
  if (a.kind === 'scalar' || (a.kind === 'list' ? !isAssociative(a) : a.atomic)) {
    parent.addMember(pe);
    return;
  }
  if (a.kind === 'list') {
    if (Array.isArray(v) && v.length > 0) attach(parent, pe, (node) => listItems(v, a, node));
  } else if (isMap(v)) attach(parent, pe, (node) => mapItems(v, a, node));
}

function attach(parent: FieldSet, pe: PathElement, fill: (node: FieldSet) => void): void {
  const node = new FieldSet();
  fill(node);
  if (node.members.size > 0 || node.children.size > 0) parent.setChild(pe, node);
}

function listItems(list: unknown[], t: ListType, node: FieldSet): void {
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
    visit(list[i], t.elements, node, pe);
    node.addMember(pe);
  }
}

function mapItems(m: JsonMap, t: MapType, node: FieldSet): void {
  for (const key of mapKeys(m)) {
    const v = m[key];
    const pe = fieldElement(key);
    const ft = memberType(t, key);
    if (ft) visit(v, ft, node, pe);
    if (v === null || (isMap(v) && mapKeys(v).length === 0) || !isDeclared(t, key)) node.addMember(pe);
  }
}
