/**
 * Serialized JSON of shared, immutable objects (those the watch cache hands out),
 * remembered per object and API version, so a hot object is stringified once for
 * all the GETs, lists and watch events that return it. Entries die with their
 * objects. They are kept as UTF-8 bytes: written as they are, and held outside
 * the JS heap, which would otherwise grow by more than their size.
 */
import { stringifyJson } from '../machinery/json.js';
import type { KObject } from './types.js';

const memo = new WeakMap<KObject, Map<string, Buffer>>();

export function memoJson(obj: KObject, version: string, convert: (o: KObject) => KObject): Buffer {
  let byVersion = memo.get(obj);
  if (!byVersion) memo.set(obj, (byVersion = new Map()));
  let json = byVersion.get(version);
  if (json === undefined) byVersion.set(version, (json = Buffer.from(stringifyJson(convert(obj)))));
  return json;
}

/**
 * Remember JSON already made for an object in its own API version (which every
 * endpoint of that version serves unconverted): a write's encoding, so its
 * response and watch events do not stringify the object again.
 */
export function rememberJson(obj: KObject, json: string): void {
  const apiVersion = obj.apiVersion;
  if (typeof apiVersion !== 'string') return;
  let byVersion = memo.get(obj);
  if (!byVersion) memo.set(obj, (byVersion = new Map()));
  byVersion.set(apiVersion.slice(apiVersion.lastIndexOf('/') + 1), Buffer.from(json));
}
