/**
 * Strategic merge patch for built-in resources, as apimachinery's strategicpatch applies it with the
 * Go types' patch metadata (go-types.ts): lists whose field has `patchStrategy: merge` are merged by
 * their `patchMergeKey` (or as sets of primitives), other lists are replaced; the directives kubectl
 * sends are honoured: `$patch: delete|replace|merge` (on maps and list elements), `$retainKeys`,
 * `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`. Where no type is known (a field
 * the Go types lack), lists are merged only when a directive asks for it, by the key its entries share.
 */
import { deref, fieldOf, type Type } from '../api/go-type-expr.js';
import { GO_STRUCTS } from '../api/go-types.js';
import { deepClone, stringifyJson } from './json.js';
import { setOwn } from './json-decoder.js';
import { applyMergePatch } from './merge-patch.js';

type Json = unknown;
type Obj = Record<string, Json>;

/** A patch the metadata forbids (a merge list element without its merge key, ...): the client's mistake. */
export class StrategicMergePatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StrategicMergePatchError';
  }
}

/** Where a value sits: in a struct (its fields' metadata), in a Go map (its values' type), or unknown. */
type Node = { k: 'struct'; id: string } | { k: 'map'; value: Type } | undefined;

const isObj = (v: Json): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function nodeOf(t: Type | undefined): Node {
  if (!t) return undefined;
  const d = deref(t);
  // A struct with a JSON form of its own (JSONSchemaPropsOrBool, ...) has no field metadata.
  if (d.k === 'struct') return GO_STRUCTS[d.id]?.jsonForm ? undefined : { k: 'struct', id: d.id };
  if (d.k === 'map') return { k: 'map', value: d.value };
  return undefined;
}

/** A field's type and list metadata in a node. */
function lookup(node: Node, key: string): { type?: Type; strategy?: string; mergeKey?: string } {
  if (node?.k === 'map') return { type: node.value };
  if (node?.k !== 'struct') return {};
  const info = fieldOf(node.id, key);
  if (!info) return {};
  return { type: info.type, strategy: info.field.patchStrategy, mergeKey: info.field.patchMergeKey };
}

/**
 * Apply a strategic merge patch to `target`, an object of the struct `structId` (e.g.
 * `apps/v1.Deployment`; undefined: no metadata). Returns undefined where the patch deletes.
 */
export function applyStrategicMergePatch(target: Json, patch: Json, structId?: string): Json {
  return mergeMap(target, patch, structId ? { k: 'struct', id: structId } : undefined);
}

/** Past this depth without type metadata (fields the Go types lack), a subtree merges as a merge patch does, iteratively. */
const UNTYPED_DEPTH = 64;
/**
 * Past this depth a subtree merges as a merge patch does whatever its type: only recursive types reach it
 * (JSONSchemaProps in a CRD), whose fields there carry no list strategies, and nothing recurses deeper.
 */
const TYPED_DEPTH = 256;

function mergeMap(target: Json, patch: Json, node: Node, depth = 0): Json {
  if (!isObj(patch)) return patch;
  if ((node === undefined && depth > UNTYPED_DEPTH) || depth > TYPED_DEPTH) return applyMergePatch(target, patch);
  // As handleDirectiveInMergeMap: a map's `$patch` is replace or delete (which leaves an empty map), nothing else.
  const directive = patch.$patch;
  if (directive === 'delete') return {};
  if (directive === 'replace') return withoutDirectives(patch, node, depth);
  if (directive !== undefined) throw new StrategicMergePatchError(`unknown patch type: ${directiveText(directive)} in map: ${goMap(patch)}`);
  const base: Obj = isObj(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    if (value === null) {
      delete base[key];
      continue;
    }
    const meta = lookup(node, key);
    const type = meta.type && deref(meta.type);
    const order = patch[`$setElementOrder/${key}`];
    if (takesAsIs(base, key, value, order)) {
      // As upstream's mergeMap: a value the original lacks (or has as another kind) is the patch's, less its
      // null entries and any map that carries a directive (`$patch: merge` there is no error; it drops the map).
      const taken = withoutDirectiveMaps(value);
      if (taken === undefined) delete base[key];
      else base[key] = taken;
      continue;
    }
    if (Array.isArray(value)) {
      if (type?.k === 'slice') {
        const merge = (meta.strategy ?? '').split(',').includes('merge');
        base[key] = merge ? mergeList(asList(base[key]), value, nodeOf(type.elem), meta.mergeKey, asOrder(order), depth + 1) : value.map((v) => stripped(v, nodeOf(type.elem), depth + 1));
      } else if (!type && (Array.isArray(order) || value.some((v) => isObj(v) && '$patch' in v))) {
        base[key] = mergeList(asList(base[key]), value, undefined, guessKey(value, order), asOrder(order), depth + 1);
      } else {
        base[key] = value;
      }
    } else if (isObj(value)) {
      base[key] = mergeMap(base[key], value, nodeOf(type), depth + 1);
    } else {
      base[key] = value;
    }
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$setElementOrder/')) {
      const field = key.slice('$setElementOrder/'.length);
      if (!(field in patch) && Array.isArray(base[field])) {
        const meta = lookup(node, field);
        base[field] = sortBy(base[field] as Json[], asOrder(value) ?? [], keyFn(meta.mergeKey ?? guessKey([], value)));
      }
    } else if (key.startsWith('$deleteFromPrimitiveList/')) {
      if (!Array.isArray(value)) throw new StrategicMergePatchError('invalid patch format for primitive list: $deleteFromPrimitiveList must be followed by a list');
      const field = key.slice('$deleteFromPrimitiveList/'.length);
      if (Array.isArray(base[field])) {
        const drop = new Set(value);
        base[field] = (base[field] as Json[]).filter((v) => !drop.has(v));
      }
    }
  }
  if ('$retainKeys' in patch) {
    const retain = patch.$retainKeys;
    // mergepatch's errors: a list of names, and every field the patch sets among them.
    if (!Array.isArray(retain) || !retain.every((k) => typeof k === 'string')) throw new StrategicMergePatchError('invalid patch format of retainKeys');
    const keep = new Set<string>(retain as string[]);
    for (const [k, v] of Object.entries(patch)) {
      if (v !== null && !k.startsWith('$') && !keep.has(k)) throw new StrategicMergePatchError("patch content doesn't match retainKeys list");
    }
    for (const k of Object.keys(base)) if (!keep.has(k)) delete base[k];
  }
  return base;
}

/** JSON kind, as Go's reflect.TypeOf tells a decoded value's apart: map, list, null or a scalar. */
const kindOf = (v: Json): string => (v === null ? 'null' : Array.isArray(v) ? 'list' : isObj(v) ? 'map' : 'scalar');

/**
 * Whether the patch's value replaces the original's without a merge: the original lacks the key or holds another
 * kind there (a list with its $setElementOrder still merges, as mergePatchIntoOriginal takes it first).
 */
function takesAsIs(base: Obj, key: string, value: Json, order: Json): boolean {
  if (!isObj(value) && !Array.isArray(value)) return false;
  if (!Object.hasOwn(base, key) || base[key] === undefined) return !(Array.isArray(value) && order !== undefined);
  return kindOf(base[key]) !== kindOf(value);
}

/** A map that is a directive: it has a `$patch` that is not null (a null entry is discarded first). */
const isDirectiveMap = (v: Json): boolean => isObj(v) && Object.hasOwn(v, '$patch') && v.$patch !== null;

/**
 * discardNullValuesFromPatch then removeDirectives on a copy of `value`: null map entries go, and so does every map
 * with a directive (a list's item, a map's value); undefined when `value` is such a map. Iterative: any depth.
 */
function withoutDirectiveMaps(value: Json): Json | undefined {
  if (isDirectiveMap(value)) return undefined;
  const copy = (v: Json): Json => (Array.isArray(v) ? [] : isObj(v) ? {} : v);
  const root = copy(value);
  const stack: Array<[Json, Json]> = [[value, root]];
  while (stack.length > 0) {
    const [from, to] = stack.pop()!;
    if (Array.isArray(from)) {
      const out = to as Json[];
      for (const x of from) {
        if (isDirectiveMap(x)) continue;
        const c = copy(x);
        out.push(c);
        if (c !== x) stack.push([x, c]);
      }
    } else {
      const out = to as Obj;
      for (const [k, x] of Object.entries(from as Obj)) {
        if (x === null || isDirectiveMap(x)) continue;
        const c = copy(x);
        setOwn(out, k, c);
        if (c !== x) stack.push([x, c]);
      }
    }
  }
  return root;
}

/** A directive's value in an error (any JSON, nested as deep as a request may: never through String()). */
const directiveText = (v: Json): string => (typeof v === 'string' ? v : stringifyJson(v));

const asList = (v: Json): Json[] => (Array.isArray(v) ? v : []);
const asOrder = (v: Json): Json[] | undefined => (Array.isArray(v) ? v : undefined);

/** A value written as the patch has it, less its directives (a new list element, a replaced map). */
function stripped(v: Json, node: Node, depth: number): Json {
  return isObj(v) ? withoutDirectives(v, node, depth) : v;
}

function withoutDirectives(patch: Obj, node: Node, depth: number): Obj {
  return mergeMap({}, { ...patch, $patch: undefined }, node, depth + 1) as Obj;
}

/**
 * Merge a list: objects by their merge key (`$patch: delete` removes one, `$patch: replace` the whole list),
 * primitives as a set. Linear: entries are found by their key through a map, never by a scan of the list.
 */
function mergeList(live: Json[], patch: Json[], elem: Node, mergeKey: string | undefined, order: Json[] | undefined, depth: number): Json[] {
  const replace = patch.findIndex((p) => isObj(p) && p.$patch === 'replace' && Object.keys(p).length === 1);
  if (replace >= 0) return patch.filter((_, i) => i !== replace).map((v) => stripped(v, elem, depth));
  if (!patch.some(isObj) && !(order ?? []).some(isObj)) {
    const out = [...live];
    const present = new Set(live);
    for (const v of patch) {
      if (present.has(v)) continue;
      present.add(v);
      out.push(v);
    }
    return order ? sortBy(out, order, (v) => v) : out;
  }
  if (!mergeKey) {
    // A list of objects without a merge key is atomic: the patch's list wins.
    return patch.map((v) => stripped(v, elem, depth));
  }
  const keyOf = keyFn(mergeKey);
  // As upstream's mergeSliceWithSpecialElements: `$patch: delete` entries remove every live entry of their key
  // first, then the others merge into the first entry of theirs or are added.
  const doomed = new Set<unknown>();
  const merging: Obj[] = [];
  for (const p of patch) {
    if (!isObj(p)) throw new StrategicMergePatchError(`invalid value ${stringifyJson(p)} in a list merged by ${mergeKey}`);
    const directive = p.$patch;
    if (directive === undefined) {
      if (!(mergeKey in p)) throw new StrategicMergePatchError(`map: ${goMap(p)} does not contain declared merge key: ${mergeKey}`);
      merging.push(p);
    } else if (directive === 'delete') {
      if (!(mergeKey in p)) throw new StrategicMergePatchError(`map: ${goMap(p)} does not contain declared merge key: ${mergeKey}`);
      doomed.add(keyOf(p));
    } else if (directive === 'merge') {
      throw new StrategicMergePatchError('merging lists cannot yet be specified in the patch');
    } else {
      throw new StrategicMergePatchError(`unknown patch type: ${directiveText(directive)} in map: ${goMap(p)}`);
    }
  }
  const out = doomed.size === 0 ? [...live] : live.filter((x) => !doomed.has(keyOf(x)));
  // By key, the first entry of it: found through a map, never by a scan of the list.
  const slot = new Map<unknown, number>();
  out.forEach((x, i) => {
    const k = keyOf(x);
    if (!slot.has(k)) slot.set(k, i);
  });
  for (const p of merging) {
    const k = keyOf(p);
    const i = slot.get(k);
    if (i !== undefined) out[i] = mergeMap(out[i], p, elem, depth + 1);
    else {
      // As mergeSliceWithoutSpecialElements: an entry the list lacks is appended as the patch has it.
      slot.set(k, out.length);
      out.push(deepClone(p));
    }
  }
  return order ? sortBy(out, order, keyOf) : out;
}

/** A merge key's value as one comparable string (a key that is itself an object compares by its JSON, nested as deep as it may). */
const keyFn = (mergeKey: string | undefined) => (v: Json) => (isObj(v) && mergeKey ? stringifyJson(v[mergeKey]) : v);

/** Without metadata: the key the entries of an order directive (or the patch) share, as kubectl writes them. */
function guessKey(patch: Json[], order: Json): string | undefined {
  const sample = [...(Array.isArray(order) ? order : []), ...patch].find(isObj);
  return sample ? Object.keys(sample).find((k) => !k.startsWith('$')) : undefined;
}

/** Elements named in `order` first, in that order; the rest after, as they were. Each key is computed once. */
function sortBy(items: Json[], order: Json[], key: (v: Json) => unknown): Json[] {
  const rank = new Map<unknown, number>();
  order.forEach((o, i) => rank.set(key(o), i));
  const ranked: Array<{ v: Json; r: number }> = [];
  const rest: Json[] = [];
  for (const v of items) {
    const r = rank.get(key(v));
    if (r === undefined) rest.push(v);
    else ranked.push({ v, r });
  }
  ranked.sort((a, b) => a.r - b.r);
  return [...ranked.map((e) => e.v), ...rest];
}

/** A map as Go's %v prints it: `map[k1:v1 k2:v2]`, keys sorted (nested maps past a few levels as `map[...]`). */
function goMap(m: Obj, depth = 0): string {
  if (depth > 8) return 'map[...]';
  const keys = Object.keys(m).sort();
  const scalar = (v: Json) => (isObj(v) ? 'map[...]' : Array.isArray(v) ? '[...]' : String(v));
  return `map[${keys.map((k) => `${k}:${isObj(m[k]) ? goMap(m[k] as Obj, depth + 1) : Array.isArray(m[k]) ? `[${(m[k] as Json[]).map(scalar).join(' ')}]` : String(m[k])}`).join(' ')}]`;
}
