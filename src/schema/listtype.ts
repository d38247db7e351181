/**
 * ValidateListSetsAndMaps: lists with x-kubernetes-list-type=set must not repeat
 * an item, lists with list-type=map must not repeat a key (and hold only objects).
 * Only the second (and later) occurrences are reported, each distinct value once.
 */
import { fe, type FieldError } from './errors.js';
import { HAS_LIST_TYPE, type Structural } from './types.js';
import { append, goJSON, isObject, Kind, kindOf, type JsonObject } from './values.js';

export function validateListSetsAndMaps(path: string, s: Structural | undefined, obj: unknown): FieldError[] {
  const errs: FieldError[] = [];
  if (s && s.subtree & HAS_LIST_TYPE && isObject(obj)) walkObject(path, s, obj, errs);
  return errs;
}

/** The properties with list types below them, per schema node. */
const listProps = new WeakMap<Structural, [string, Structural][]>();

function walkObject(path: string, s: Structural, obj: JsonObject, errs: FieldError[]): void {
  const ap = s.additionalProperties?.schema;
  if (ap && ap.subtree & HAS_LIST_TYPE) for (const k of Object.keys(obj)) walk(`${path}[${k}]`, ap, obj[k], errs);
  if (s.properties) {
    let props = listProps.get(s);
    if (!props) listProps.set(s, (props = [...s.properties].filter(([, p]) => p.subtree & HAS_LIST_TYPE)));
    for (const [k, sub] of props) if (Object.prototype.hasOwnProperty.call(obj, k)) walk(path === '' ? k : `${path}.${k}`, sub, obj[k], errs);
  }
}

function walk(path: string, s: Structural, v: unknown, errs: FieldError[]): void {
  if (!(s.subtree & HAS_LIST_TYPE)) return;
  if (Array.isArray(v)) walkArray(path, s, v, errs);
  else if (isObject(v)) walkObject(path, s, v, errs);
}

function walkArray(path: string, s: Structural, list: unknown[], errs: FieldError[]): void {
  if (s.listType === 'set') {
    for (const i of nonUnique(list)) errs.push(fe.duplicate(`${path}[${i}]`, list[i]));
  } else if (s.listType === 'map') {
    append(errs, validateListMap(path, s.listMapKeys ?? [], list));
  }
  if (s.items && s.items.subtree & HAS_LIST_TYPE) for (let i = 0; i < list.length; i++) walk(`${path}[${i}]`, s.items, list[i], errs);
}

const UNSPECIFIED = Symbol('unspecified key');

/** Identity of a set element: scalars by Go type and value, compounds by their JSON. */
function identity(x: unknown): string {
  if (x === UNSPECIFIED) return 'u';
  switch (kindOf(x)) {
    case Kind.Null:
      return 'n';
    case Kind.Bool:
      return `b${x}`;
    case Kind.Int:
      return `i${x}`;
    case Kind.Float:
      return `f${x}`;
    case Kind.String:
      return `s${x as string}`;
    default:
      return `c${compoundIdentity(x)}`;
  }
}

/** goJSON, with a shortcut for flat objects of scalars (list-map keys). */
function compoundIdentity(x: unknown): string {
  if (isObject(x)) {
    let out = '';
    for (const k of Object.keys(x).sort()) {
      const v = x[k];
      const kind = kindOf(v);
      if (kind === Kind.Array || kind === Kind.Object) return goJSON(x);
      out += `\0${k}\0${identity(v)}`;
    }
    return out;
  }
  return goJSON(x);
}

/** Indexes of the first repetition of each repeated value. */
function nonUnique(list: unknown[]): number[] {
  if (list.length <= 1) return [];
  const seen = new Map<string, number>();
  const out: number[] = [];
  list.forEach((x, i) => {
    const id = identity(x);
    const times = seen.get(id);
    if (times === undefined) seen.set(id, 1);
    else {
      seen.set(id, times + 1);
      if (times === 1) out.push(i);
    }
  });
  return out;
}

function validateListMap(path: string, keys: string[], list: unknown[]): FieldError[] {
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    if (x !== null && !isObject(x)) return [fe.invalid(`${path}[${i}]`, x, 'must be an object for an array of list-type map')];
  }
  if (list.length <= 1) return [];
  if (keys.length === 1) {
    const k = keys[0];
    const vals = list.map((x) => (isObject(x) && Object.prototype.hasOwnProperty.call(x, k) ? x[k] : UNSPECIFIED));
    return nonUnique(vals).map((i) => fe.duplicate(`${path}[${i}]`, vals[i] === UNSPECIFIED ? {} : { [k]: vals[i] }));
  }
  const compound = list.map((x) => {
    const key: JsonObject = {};
    if (isObject(x)) for (const k of keys) if (Object.prototype.hasOwnProperty.call(x, k)) key[k] = x[k];
    return key;
  });
  return nonUnique(compound).map((i) => fe.duplicate(`${path}[${i}]`, compound[i]));
}
