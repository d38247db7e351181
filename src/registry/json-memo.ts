/**
 * Serialized JSON of shared, immutable objects (those the watch cache hands out),
 * remembered per object and API version, so a hot object is stringified once for
 * all the GETs, lists and watch events that return it. Entries are kept on their
 * objects (util/object-memo.ts) and die with them. They are kept as UTF-8 bytes: written as they are, and held outside
 * the JS heap, which would otherwise grow by more than their size.
 */
import { stringifyJson } from '../machinery/json.js';
import type { KObject } from '../api/object.js';
import { ObjectMemo } from '../util/object-memo.js';

/** One version's JSON: what nearly every object has (a Map per object would cost more than the pair). */
class OneVersion {
  constructor(
    readonly version: string,
    readonly json: Buffer,
  ) {}
}

const memo = new ObjectMemo<KObject, OneVersion | Map<string, Buffer>>('kapi.json');

function recall(obj: KObject, version: string): Buffer | undefined {
  const m = memo.get(obj);
  if (m instanceof OneVersion) return m.version === version ? m.json : undefined;
  return m?.get(version);
}

function remember(obj: KObject, version: string, json: Buffer): void {
  const m = memo.get(obj);
  if (m === undefined || (m instanceof OneVersion && m.version === version)) memo.set(obj, new OneVersion(version, json));
  else if (m instanceof OneVersion) memo.set(obj, new Map([[m.version, m.json], [version, json]]));
  else m.set(version, json);
}

export function memoJson(obj: KObject, apiVersion: string, convert: (o: KObject) => KObject): Buffer {
  let json = recall(obj, apiVersion);
  if (json === undefined) remember(obj, apiVersion, (json = Buffer.from(stringifyJson(convert(obj)))));
  return json;
}

/** Any other encoding of a shared object (protobuf), remembered the same way under `key`. */
export function memoEncoded(obj: KObject, key: string, encode: (o: KObject) => Buffer): Buffer {
  let bytes = recall(obj, key);
  if (bytes === undefined) remember(obj, key, (bytes = encode(obj)));
  return bytes;
}

/** The JSON remembered for an object in its own API version, as text. */
export function rememberedJson(obj: KObject): string | undefined {
  const apiVersion = obj.apiVersion;
  return typeof apiVersion === 'string' ? recall(obj, apiVersion)?.toString() : undefined;
}

/**
 * Remember JSON already made for an object in its own API version (which every
 * endpoint of that version serves unconverted): a write's encoding, so its
 * response and watch events do not stringify the object again.
 */
export function rememberJson(obj: KObject, json: string): void {
  const apiVersion = obj.apiVersion;
  if (typeof apiVersion !== 'string') return;
  remember(obj, apiVersion, Buffer.from(json));
}
