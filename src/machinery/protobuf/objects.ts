/**
 * Whole objects in Kubernetes protobuf: an object (with its apiVersion and kind) in its envelope,
 * a watch event, and a request body read back into the JSON object it stands for.
 */
import { GO_STRUCTS } from '../../api/go-types.js';
import { decodeStruct, encodeStruct, structOfKind } from './codec.js';
import { decodeEnvelope, encodeEnvelope } from './envelope.js';
import { ProtobufError, WIRE_BYTES, Writer } from './wire.js';

type JsonMap = Record<string, unknown>;

function splitApiVersion(apiVersion: string): [string, string] {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

/** The message of a kind: its API package's, or meta/v1's (Status, WatchEvent, DeleteOptions, ... are in every group version). */
export function protobufStruct(apiVersion: string, kind: string): string | undefined {
  const [group, version] = splitApiVersion(apiVersion);
  return structOfKind(group, version, kind) ?? structOfKind('meta.k8s.io', 'v1', kind);
}

/**
 * An object in the k8s envelope; a ProtobufError when its kind has no message. A value its field
 * cannot carry (stored before built-ins were type-checked) goes as Go's zero value, told to `onMismatch`.
 */
export function encodeObject(obj: unknown, onMismatch?: (err: ProtobufError) => void): Buffer {
  const o = obj as JsonMap;
  const apiVersion = typeof o?.apiVersion === 'string' ? o.apiVersion : '';
  const kind = typeof o?.kind === 'string' ? o.kind : '';
  const id = protobufStruct(apiVersion, kind);
  if (!id) throw new ProtobufError(`object ${apiVersion}, Kind=${kind} does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message`);
  return encodeEnvelope(apiVersion, kind, encodeStruct(id, o, onMismatch));
}

/**
 * metav1.WatchEvent {type 1, object 2: RawExtension {raw 1: the object in its own envelope}}. A watch
 * stream's serializer is the raw one: the event itself has no envelope.
 */
export function encodeWatchEvent(type: string, object: Uint8Array): Buffer {
  const raw = new Writer(object.length + 8);
  raw.tag(1, WIRE_BYTES);
  raw.bytes(object);
  const event = new Writer(object.length + 32);
  event.tag(1, WIRE_BYTES);
  event.string(type);
  event.tag(2, WIRE_BYTES);
  event.bytes(raw.finish());
  const out = event.finish();
  return Buffer.from(out.buffer, out.byteOffset, out.length);
}

/**
 * A protobuf request body as the JSON object it stands for, with the apiVersion and kind of its
 * envelope (defaulted, as the decoder does, from the endpoint's when the envelope has none).
 */
export function decodeObject(data: Uint8Array, defaults: { apiVersion: string; kind: string }): JsonMap {
  const env = decodeEnvelope(data);
  const apiVersion = env.apiVersion || defaults.apiVersion;
  const kind = env.kind || defaults.kind;
  if (env.contentEncoding) throw new ProtobufError(`unsupported content encoding ${JSON.stringify(env.contentEncoding)}`);
  const id = protobufStruct(apiVersion, kind);
  if (!id) throw new ProtobufMessageError(`no kind "${kind}" is registered for version "${apiVersion}" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"`, apiVersion, kind);
  try {
    return { apiVersion, kind, ...decodeStruct(id, env.raw) };
  } catch (err) {
    if (err instanceof ProtobufError) throw new ProtobufMessageError(err.message, apiVersion, kind);
    throw err;
  }
}

/** A message that does not decode, its kind known from the envelope (the decoder's second error form). */
export class ProtobufMessageError extends ProtobufError {
  constructor(
    message: string,
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(message);
  }
}

/**
 * A list in the k8s envelope from its head (apiVersion, kind, metadata) and its items' messages, each
 * already encoded (`itemMessage`); undefined when the list kind has no message of that shape.
 */
export function encodeListOfMessages(head: JsonMap, items: readonly Uint8Array[], onMismatch?: (err: ProtobufError) => void): Buffer | undefined {
  const list = listOfMessages(head);
  if (!list) return undefined;
  const { apiVersion, kind, id, itemsField } = list;
  const w = new Writer(64 + items.reduce((n, i) => n + i.length + 6, 0));
  w.raw(encodeStruct(id, { ...head, items: undefined }, onMismatch));
  for (const item of items) {
    w.tag(itemsField, WIRE_BYTES);
    w.bytes(item);
  }
  return encodeEnvelope(apiVersion, kind, w.finish());
}

/** Whether encodeListOfMessages can make this list (its kind has a message whose items come last on the wire). */
export function hasListOfMessages(head: JsonMap): boolean {
  return listOfMessages(head) !== undefined;
}

function listOfMessages(head: JsonMap): { apiVersion: string; kind: string; id: string; itemsField: number } | undefined {
  const apiVersion = typeof head.apiVersion === 'string' ? head.apiVersion : '';
  const kind = typeof head.kind === 'string' ? head.kind : '';
  const id = protobufStruct(apiVersion, kind);
  const field = id ? GO_STRUCTS[id].fields.find((f) => f.json === 'items')?.proto?.[0] : undefined;
  // Items must be the last field on the wire for the head's bytes to come first.
  if (!id || field === undefined || GO_STRUCTS[id].fields.some((f) => f.proto && f.proto[0] > field)) return undefined;
  return { apiVersion, kind, id, itemsField: field };
}

/** One object's message (no envelope), for lists; its kind must have one. */
export function itemMessage(obj: JsonMap, onMismatch?: (err: ProtobufError) => void): Buffer {
  const id = protobufStruct(String(obj.apiVersion ?? ''), String(obj.kind ?? ''));
  if (!id) throw new ProtobufError(`object ${String(obj.apiVersion)}, Kind=${String(obj.kind)} has no protobuf message`);
  const bytes = encodeStruct(id, obj, onMismatch);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}
