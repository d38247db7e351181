/**
 * Kubernetes' protobuf envelope: the magic `k8s\0`, then a runtime.Unknown message holding the
 * object's apiVersion and kind (TypeMeta, field 1: apiVersion 1, kind 2), its message bytes (raw,
 * field 2), contentEncoding (3) and contentType (4).
 */
import { ProtobufError, readFields, utf8, WIRE_BYTES, Writer } from './wire.js';

export const PROTOBUF_MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

export interface Envelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

export function encodeEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const typeMeta = new Writer(64);
  typeMeta.tag(1, WIRE_BYTES);
  typeMeta.string(apiVersion);
  typeMeta.tag(2, WIRE_BYTES);
  typeMeta.string(kind);
  const w = new Writer(raw.length + 64);
  w.raw(PROTOBUF_MAGIC);
  w.tag(1, WIRE_BYTES);
  w.bytes(typeMeta.finish());
  w.tag(2, WIRE_BYTES);
  w.bytes(raw);
  w.tag(3, WIRE_BYTES);
  w.string('');
  w.tag(4, WIRE_BYTES);
  w.string('');
  const out = w.finish();
  return Buffer.from(out.buffer, out.byteOffset, out.length);
}

/** The envelope of a protobuf body; a ProtobufError when the magic or the message is wrong. */
export function decodeEnvelope(data: Uint8Array): Envelope {
  if (data.length === 0) throw new ProtobufError('empty data');
  if (data.length < 4 || data[0] !== 0x6b || data[1] !== 0x38 || data[2] !== 0x73 || data[3] !== 0x00) {
    throw new ProtobufError('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  }
  const env: Envelope = { apiVersion: '', kind: '', raw: new Uint8Array(0), contentEncoding: '', contentType: '' };
  for (const f of readFields(data.subarray(4))) {
    if (f.wire !== WIRE_BYTES) continue;
    if (f.field === 1) {
      for (const t of readFields(f.data!)) {
        if (t.field === 1 && t.wire === WIRE_BYTES) env.apiVersion = utf8(t.data);
        if (t.field === 2 && t.wire === WIRE_BYTES) env.kind = utf8(t.data);
      }
    } else if (f.field === 2) env.raw = f.data!;
    else if (f.field === 3) env.contentEncoding = utf8(f.data);
    else if (f.field === 4) env.contentType = utf8(f.data);
  }
  return env;
}
