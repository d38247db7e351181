/**
 * Serializers: how an object becomes bytes in one media type, and how a watch
 * event is framed in a stream of that media type. They know nothing of what the
 * object is; turning an object into a Table or PartialObjectMetadata is an
 * output conversion (output-conversions.ts), applied before a serializer.
 *
 * Upstream's runtime.SerializerInfo: JSON (with a stream serializer for watch),
 * YAML (no stream form) and Kubernetes protobuf (built-in kinds; streams).
 */
import { stringifyJson } from '../machinery/json.js';
import { encodeObject, encodeWatchEvent } from '../machinery/protobuf/objects.js';
import { encodeYaml } from '../machinery/yaml-emit.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface Serializer {
  /** Short name, part of the keys under which encodings are remembered. */
  readonly name: 'json' | 'yaml' | 'protobuf';
  /** Content-Type of a response in this format. */
  readonly mediaType: string;
  /** Content-Type of a watch stream in this format; absent: this format cannot stream. */
  readonly streamMediaType?: string;
  encode(obj: unknown, pretty: boolean): string | Buffer;
  /** One watch event, its object already encoded by this serializer (streaming formats only). */
  frame?(type: WatchEventType, object: string | Buffer): Buffer;
}

const EVENT_END = Buffer.from('}\n');
const EVENT_HEADS = new Map<string, Buffer>();

function eventHead(type: WatchEventType): Buffer {
  let head = EVENT_HEADS.get(type);
  if (head === undefined) EVENT_HEADS.set(type, (head = Buffer.from(`{"type":"${type}","object":`)));
  return head;
}

export const json: Serializer = {
  name: 'json',
  mediaType: 'application/json',
  // Upstream names a JSON watch stream plainly application/json (serveWatch adds ;stream=watch to other types only).
  streamMediaType: 'application/json',
  encode: (obj, pretty) => (pretty ? `${stringifyJson(obj, 2)}\n` : stringifyJson(obj)),
  frame: (type, object) => Buffer.concat([eventHead(type), typeof object === 'string' ? Buffer.from(object) : object, EVENT_END]),
};

export const yaml: Serializer = {
  name: 'yaml',
  mediaType: 'application/yaml',
  // Bytes, not a string: deeply nested values print far more text than V8 strings may hold.
  encode: (obj) => encodeYaml(obj),
};

/**
 * Kubernetes protobuf: the k8s envelope around the object's message (built-in kinds only: the
 * message is found from the object's apiVersion and kind); a watch is a stream of WatchEvent
 * messages without envelope (the raw serializer), each framed by its length (4 bytes, big-endian).
 */
export const protobuf: Serializer = {
  name: 'protobuf',
  mediaType: 'application/vnd.kubernetes.protobuf',
  streamMediaType: 'application/vnd.kubernetes.protobuf;stream=watch',
  encode: (obj) => encodeObject(obj, reportMismatch),
  frame: (type, object) => {
    const event = encodeWatchEvent(type, typeof object === 'string' ? Buffer.from(object) : object);
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32BE(event.length, 0);
    return Buffer.concat([length, event]);
  },
};

let lastMismatchReport = 0;

/** A stored value its protobuf field cannot carry: sent as the zero value, reported at most once a minute. */
export function reportMismatch(err: Error): void {
  const now = Date.now();
  if (now - lastMismatchReport < 60_000) return;
  lastMismatchReport = now;
  process.stderr.write(`kapi: protobuf: a stored value does not fit its field, sent as its zero value: ${JSON.stringify(err.message.slice(0, 300))}\n`);
}

/** The serializers of every endpoint, in upstream's order of preference (the first is the default). */
export const SERIALIZERS: readonly Serializer[] = [json, yaml, protobuf];

/** The media types a response may take, for 406 answers (protobuf is named by upstream's typed endpoints). */
export const ACCEPTED_OUTPUT = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
/** The media types a watch may take, for 406 answers. */
export const ACCEPTED_STREAMS = ['application/json', 'application/json;stream=watch'];
