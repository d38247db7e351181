/**
 * Serialized JSON of shared, immutable objects (those the watch cache hands out),
 * remembered per object and API version, so a hot object is stringified once for
 * all the GETs and lists that return it. Entries die with their objects.
 */
import { stringifyJson } from '../machinery/json.js';
import type { KObject } from '../registry/types.js';

const memo = new WeakMap<KObject, Map<string, string>>();

export function memoJson(obj: KObject, version: string, convert: (o: KObject) => KObject): string {
  let byVersion = memo.get(obj);
  if (!byVersion) memo.set(obj, (byVersion = new Map()));
  let json = byVersion.get(version);
  if (json === undefined) byVersion.set(version, (json = stringifyJson(convert(obj))));
  return json;
}
