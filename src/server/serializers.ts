/**
 * Serializers: how an object becomes bytes in one media type, and how a watch
 * event is framed in a stream of that media type. They know nothing of what the
 * object is; turning an object into a Table or PartialObjectMetadata is an
 * output conversion (output-conversions.ts), applied before a serializer.
 *
 * Upstream's runtime.SerializerInfo: JSON (with a stream serializer for watch)
 * and YAML (no stream form). Kubernetes protobuf joins here as a third.
 */
import { stringifyJson } from '../machinery/json.js';
import { stringifyYaml } from '../machinery/yaml.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface Serializer {
  /** Short name, part of the keys under which encodings are remembered. */
  readonly name: 'json' | 'yaml';
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
  encode: (obj) => stringifyYaml(obj),
};

/** The serializers of every endpoint, in upstream's order of preference (the first is the default). */
export const SERIALIZERS: readonly Serializer[] = [json, yaml];

/** The media types a response may take, for 406 answers (protobuf is named by upstream's typed endpoints). */
export const ACCEPTED_OUTPUT = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
/** The media types a watch may take, for 406 answers. */
export const ACCEPTED_STREAMS = ['application/json', 'application/json;stream=watch'];
