/**
 * JSON patch (RFC 6902) with the semantics of evanphx/json-patch v4, which
 * kube-apiserver applies:
 * - a path's first segment is skipped unread (no leading "/" is required) and
 *   the document root cannot be addressed;
 * - `replace` of a missing object member adds it; array indexes may be
 *   negative (counted from the end);
 * - `test` of a missing member passes when the value is null;
 * - `copy` may add at most 3 MiB in all (apiserver's JSONPatchMaxCopyBytes),
 *   so a few hundred bytes of patch cannot grow an object without bound.
 * Every failure is a JsonPatchError; apiserver answers each with the same 422.
 *
 * The document is changed in place: pass a copy nothing else shares. Members
 * are set as own properties, "__proto__" included.
 */
import { setOwn } from './json-decoder.js';
import { jsonEqual } from './merge-patch.js';
import { goJsonType, parseJson, stringifyJson } from './json.js';

export const MAX_COPY_BYTES = 3 * 1024 * 1024;

export class JsonPatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPatchError';
  }
}

type Json = unknown;
type Container = Record<string, Json> | Json[];

export interface JsonPatchOperation {
  op?: unknown;
  path?: unknown;
  from?: unknown;
  value?: unknown;
}

/** The JSON type of a value, as Go's encoding/json names it in unmarshal errors. */
const jsonTypeOf = (v: unknown): string => (v === null ? 'null' : goJsonType(v));

/** jsonpatch.DecodePatch: an array of objects, or the encoding/json error apiserver answers 400 with. */
export function decodeJsonPatch(patch: unknown): JsonPatchOperation[] {
  if (!Array.isArray(patch)) return fail(`json: cannot unmarshal ${jsonTypeOf(patch)} into Go value of type jsonpatch.Patch`);
  for (const op of patch) {
    if (op !== null && (typeof op !== 'object' || Array.isArray(op))) return fail(`json: cannot unmarshal ${jsonTypeOf(op)} into Go value of type jsonpatch.Operation`);
  }
  return patch as JsonPatchOperation[];
}

function fail(message: string): never {
  throw new JsonPatchError(message);
}

const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

function decodeKey(k: string): string {
  return k.includes('~') ? k.replace(/~1/g, '/').replace(/~0/g, '~') : k;
}

/** Go's strconv.Atoi, for array indexes. */
function atoi(key: string): number {
  if (!/^[+-]?[0-9]{1,18}$/.test(key)) return fail(`value was not a proper array index: '${key}'`);
  return Number(key);
}

/** The container that holds the path's last segment, and that segment; the first segment is never read (v4's findObject). */
function findObject(doc: Container, path: unknown): [Container, string] {
  if (typeof path !== 'string') return fail('missing value');
  const split = path.split('/');
  if (split.length < 2) return fail(`doc is missing path: ${path}`);
  let cur: Container = doc;
  for (let i = 1; i < split.length - 1; i++) {
    const next = get(cur, decodeKey(split[i]));
    if (next === null || typeof next !== 'object') return fail(`doc is missing path: ${path}`);
    cur = next as Container;
  }
  return [cur, decodeKey(split[split.length - 1])];
}

/** An index into an array of `length` items, negative ones counted from the end. */
function arrayIndex(key: string, length: number): number {
  let idx = atoi(key);
  if (idx < 0) {
    if (idx < -length) return fail('invalid index referenced');
    idx += length;
  }
  if (idx >= length) return fail(`Unable to access invalid index: ${idx}: invalid index referenced`);
  return idx;
}

function get(c: Container, key: string): Json {
  if (Array.isArray(c)) return c[arrayIndex(key, c.length)];
  return own(c, key) ? c[key] : undefined;
}

function add(c: Container, key: string, value: Json): void {
  if (!Array.isArray(c)) return setOwn(c, key, value);
  if (key === '-') {
    c.push(value);
    return;
  }
  c.splice(arrayIndex(key, c.length + 1), 0, value);
}

function remove(c: Container, key: string): void {
  if (Array.isArray(c)) {
    c.splice(arrayIndex(key, c.length), 1);
    return;
  }
  if (!own(c, key)) return fail(`Unable to remove nonexistent key: ${key}: missing value`);
  delete c[key];
}

function set(c: Container, key: string, value: Json): void {
  if (Array.isArray(c)) c[arrayIndex(key, c.length)] = value;
  else setOwn(c, key, value);
}

function valueOf(op: JsonPatchOperation): Json {
  return own(op, 'value') ? op.value : null;
}

/** A deep copy of a JSON value and the size of its JSON text (what json-patch counts against the copy limit). */
function copyValue(v: Json): { copy: Json; size: number } {
  const text = stringifyJson(v === undefined ? null : v);
  // The value is in the document already: no cap on its nesting (managedFields nest past a request's).
  return { copy: parseJson(text, Infinity), size: Buffer.byteLength(text) };
}

/** Apply the operations to `doc` (an object), in place. */
export function applyJsonPatch(doc: Record<string, Json>, ops: readonly JsonPatchOperation[], maxCopyBytes = MAX_COPY_BYTES): void {
  let copied = 0;
  for (const op of ops) {
    if (op === null) return fail('Unexpected kind: unknown');
    const kind = typeof op.op === 'string' ? op.op : 'unknown';
    switch (kind) {
      case 'add': {
        const [c, key] = findObject(doc, op.path);
        add(c, key, valueOf(op));
        break;
      }
      case 'remove': {
        const [c, key] = findObject(doc, op.path);
        remove(c, key);
        break;
      }
      case 'replace': {
        const [c, key] = findObject(doc, op.path);
        get(c, key);
        set(c, key, valueOf(op));
        break;
      }
      case 'move': {
        const [from, fromKey] = findObject(doc, op.from);
        const value = get(from, fromKey);
        remove(from, fromKey);
        const [to, toKey] = findObject(doc, op.path);
        add(to, toKey, value);
        break;
      }
      case 'test': {
        const [c, key] = findObject(doc, op.path);
        const actual = get(c, key);
        const expected = valueOf(op);
        if (actual === undefined || actual === null) {
          if (expected !== null) fail('test failed');
        } else if (!jsonEqual(actual, expected)) {
          fail('test failed');
        }
        break;
      }
      case 'copy': {
        const [from, fromKey] = findObject(doc, op.from);
        const value = get(from, fromKey);
        const [to, toKey] = findObject(doc, op.path);
        const { copy, size } = copyValue(value);
        copied += size;
        if (maxCopyBytes > 0 && copied > maxCopyBytes) {
          fail(`Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${maxCopyBytes}`);
        }
        add(to, toKey, copy);
        break;
      }
      default:
        fail(`Unexpected kind: ${kind}`);
    }
  }
}
