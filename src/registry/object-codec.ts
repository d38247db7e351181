/**
 * How objects are kept in storage: JSON without `metadata.resourceVersion`,
 * which is the key's mod revision and is put back on every read.
 */
import { parseStoredJson, stringifyJson } from '../machinery/json.js';
import type { KeyValue } from '../storage/types.js';
import type { KObject } from '../api/object.js';

export function encodeForStorage(obj: KObject): string {
  return encodeObject(obj).stored;
}

export interface EncodedObject {
  /** The JSON to store: the object without metadata.resourceVersion. */
  stored: string;
  /**
   * The object's JSON once metadata.resourceVersion is set to `rv` where setting
   * it puts it (its own place, or last): what GET and watch will serve. Absent
   * when the metadata is not a plain object.
   */
  served?(rv: string): string;
}

// A stand-in for the revision: its JSON (`"\u0000kapi-rv\u0000"`) marks where the revision goes.
const RV_MARK = '\u0000kapi-rv\u0000';
const RV_MEMBER = `"resourceVersion":${JSON.stringify(RV_MARK)}`;

/**
 * Encode for storage so that the served JSON (with the revision the write gets)
 * is the stored JSON with one more member: a write stringifies its object once.
 * The object is stringified with a marker as its resourceVersion (in that
 * member's own place, or last), and the marker's member is cut out for storage.
 */
export function encodeObject(obj: KObject): EncodedObject {
  const meta = obj.metadata as Record<string, unknown> | undefined;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return { stored: stringifyJson(obj) };
  // The marker goes in for the stringify and out again: in resourceVersion's own place, or
  // added last (and deleting the last property added leaves the object as it was).
  const had = Object.prototype.hasOwnProperty.call(meta, 'resourceVersion');
  const own = meta.resourceVersion;
  try {
    meta.resourceVersion = RV_MARK;
  } catch {
    return encodeByMember(obj, meta); // frozen metadata
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(obj);
  } catch {
    // BigInt values, or nesting too deep for JSON.stringify: below.
  }
  if (had) meta.resourceVersion = own;
  else delete meta.resourceVersion;
  if (json === undefined) return encodeByMember(obj, meta);
  const at = json.indexOf(RV_MEMBER);
  // The marker's member is ours only if it occurs once (another member named resourceVersion could hold it).
  if (at < 0 || json.indexOf(RV_MEMBER, at + 1) >= 0) return encodeByMember(obj, meta);
  const end = at + RV_MEMBER.length;
  const stored =
    json[end] === ',' ? json.slice(0, at) + json.slice(end + 1)
    : json[at - 1] === ',' ? json.slice(0, at - 1) + json.slice(end)
    : json.slice(0, at) + json.slice(end);
  return { stored, served: (rv) => `${json.slice(0, at)}"resourceVersion":${JSON.stringify(rv)}${json.slice(end)}` };
}

/** encodeObject for the objects JSON.stringify cannot write: member by member, with stringifyJson. */
function encodeByMember(obj: KObject, meta: Record<string, unknown>): EncodedObject {
  const top: string[] = [];
  let metaAt = -1;
  for (const k of Object.keys(obj)) {
    if (k === 'metadata') {
      metaAt = top.push('') - 1;
      continue;
    }
    const m = member(k, (obj as Record<string, unknown>)[k]);
    if (m !== undefined) top.push(m);
  }
  const fields: string[] = [];
  let rvAt = -1;
  for (const k of Object.keys(meta)) {
    if (k === 'resourceVersion') {
      rvAt = fields.length;
      continue;
    }
    const m = member(k, meta[k]);
    if (m !== undefined) fields.push(m);
  }
  if (rvAt < 0) rvAt = fields.length;
  const withMetadata = (metadata: string[]) => {
    top[metaAt] = `"metadata":{${metadata.join(',')}}`;
    return `{${top.join(',')}}`;
  };
  return {
    stored: withMetadata(fields),
    served: (rv) => withMetadata([...fields.slice(0, rvAt), `"resourceVersion":${JSON.stringify(rv)}`, ...fields.slice(rvAt)]),
  };
}

/** `"key":value` as JSON.stringify writes an object member; undefined when it leaves the member out. */
function member(key: string, value: unknown): string | undefined {
  const json = stringifyJson(value);
  return json === undefined ? undefined : `${JSON.stringify(key)}:${json}`;
}

/** Decode a stored object; a value that does not parse yields a stub naming its key, never a throw. */
export function decodeFromStorage(kv: KeyValue): KObject {
  let obj: KObject;
  try {
    // Not capped at a request's 10,000 levels: managedFields nest a few levels deeper than the fields they own.
    const parsed = parseStoredJson(kv.value);
    obj = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as KObject) : {};
  } catch {
    obj = {};
  }
  const meta = obj.metadata && typeof obj.metadata === 'object' && !Array.isArray(obj.metadata) ? obj.metadata : {};
  if (!meta.name) meta.name = kv.key.slice(kv.key.lastIndexOf('/') + 1);
  meta.resourceVersion = String(kv.modRevision);
  obj.metadata = meta;
  return obj;
}
