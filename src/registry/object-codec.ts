/**
 * How objects are kept in storage: JSON without `metadata.resourceVersion`,
 * which is the key's mod revision and is put back on every read.
 */
import { parseJson, stringifyJson } from '../machinery/json.js';
import type { KeyValue } from '../storage/types.js';
import type { KObject } from './types.js';

export function encodeForStorage(obj: KObject): string {
  const rv = obj.metadata?.resourceVersion;
  if (rv === undefined) return stringifyJson(obj);
  const { resourceVersion: _rv, ...metadata } = obj.metadata;
  return stringifyJson({ ...obj, metadata });
}

/** Decode a stored object; a value that does not parse yields a stub naming its key, never a throw. */
export function decodeFromStorage(kv: KeyValue): KObject {
  let obj: KObject;
  try {
    const parsed = parseJson(kv.value);
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
