/**
 * Kubernetes' protobuf messages, read and written from go-types.ts: a built-in object's JSON
 * becomes the bytes gogo-protobuf writes for the Go struct that JSON decodes into (non-pointer
 * fields always present, maps in key order, fields in number order), and bytes become the JSON
 * Go's encoding/json writes for the struct they decode into (omitempty, omitzero, nil as null).
 */
import { compareGoStrings } from '../go-text.js';
import { parseJson, stringifyJson } from '../json.js';
import { setOwn } from '../json-decoder.js';
import { parseGoDuration } from '../time.js';
import { GO_STRUCTS } from '../../api/go-types.js';
import type { GoField } from '../../api/go-types-model.js';
import { parseType, type Scalar, type Special, type Type } from '../../api/go-type-expr.js';
import { ProtobufError, readDouble, readFields, toInt32, toInt64, utf8, WIRE_BYTES, WIRE_FIXED64, WIRE_VARINT, Writer, type RawField } from './wire.js';

type Json = unknown;
type JsonMap = Record<string, Json>;

export { structOfKind } from '../../api/go-type-expr.js';

// ---------------------------------------------------------------- encoding

/** The protobuf message of a JSON object decoded as the struct `id`. */
export function encodeStruct(id: string, value: JsonMap, onMismatch?: (err: ProtobufError) => void): Uint8Array {
  const w = new Writer();
  const outer = mismatch;
  mismatch = onMismatch;
  try {
    writeStruct(w, id, value, '');
  } finally {
    mismatch = outer;
  }
  return w.finish();
}

/**
 * While encoding leniently: what to do with a value its field's type cannot carry (an object stored
 * before built-ins were type-checked). The field is then written as Go's zero value.
 */
let mismatch: ((err: ProtobufError) => void) | undefined;

function writeStruct(w: Writer, id: string, value: JsonMap, path: string): void {
  const struct = GO_STRUCTS[id];
  if (!struct) throw new ProtobufError(`unknown type ${id}`);
  const fields = protoFields(id);
  for (const f of fields) {
    const type = parseType(f.type);
    const [num] = f.proto!;
    if (f.inline) {
      // An inline struct: its fields come from this same JSON object.
      writeMessage(w, num, (sub) => writeStruct(sub, (type as { id: string }).id, value, path));
      continue;
    }
    if (!mismatch) {
      writeField(w, num, type, value[f.json], `${path}.${f.json}`);
      continue;
    }
    const start = w.length;
    try {
      writeField(w, num, type, value[f.json], `${path}.${f.json}`);
    } catch (err) {
      if (!(err instanceof ProtobufError)) throw err;
      w.length = start;
      mismatch(err);
      writeField(w, num, type, undefined, `${path}.${f.json}`);
    }
  }
}

/** A struct's fields on the wire, in field-number order (memoized). */
const protoFieldsOf = new Map<string, GoField[]>();
function protoFields(id: string): GoField[] {
  let fs = protoFieldsOf.get(id);
  if (!fs) {
    fs = GO_STRUCTS[id].fields.filter((f) => f.proto).sort((a, b) => a.proto![0] - b.proto![0]);
    protoFieldsOf.set(id, fs);
  }
  return fs;
}

function writeMessage(w: Writer, num: number, body: (w: Writer) => void): void {
  const start = w.beginMessage(num);
  body(w);
  w.endMessage(start);
}

/** One field of a Go struct with value `v` from JSON (undefined or null: Go's zero value). */
function writeField(w: Writer, num: number, type: Type, v: Json, path: string): void {
  switch (type.k) {
    case 'ptr':
      if (v === undefined || v === null) return;
      writeField(w, num, type.elem, v, path);
      return;
    case 'slice': {
      if (v === undefined || v === null) return;
      if (!Array.isArray(v)) throw typeError(path, v, 'array');
      if (type.items) {
        writeMessage(w, num, (sub) => v.forEach((e, i) => writeField(sub, 1, type.elem, e, `${path}[${i}]`)));
        return;
      }
      v.forEach((e, i) => writeField(w, num, type.elem, e, `${path}[${i}]`));
      return;
    }
    case 'map': {
      if (v === undefined || v === null) return;
      if (typeof v !== 'object' || Array.isArray(v)) throw typeError(path, v, 'object');
      const keys = Object.keys(v).sort(compareGoStrings);
      for (const k of keys) {
        writeMessage(w, num, (sub) => {
          sub.tag(1, WIRE_BYTES);
          sub.string(k);
          writeField(sub, 2, type.value, (v as JsonMap)[k], `${path}[${k}]`);
        });
      }
      return;
    }
    case 'bytes':
      if (v === undefined || v === null) return;
      if (typeof v !== 'string') throw typeError(path, v, 'string');
      w.tag(num, WIRE_BYTES);
      w.bytes(Buffer.from(v, 'base64'));
      return;
    case 'struct': {
      const form = GO_STRUCTS[type.id]?.jsonForm;
      if (form) {
        writeMessage(w, num, (sub) => writeStruct(sub, type.id, fromJsonForm(form, v, path), path));
        return;
      }
      if (v !== undefined && v !== null && (typeof v !== 'object' || Array.isArray(v))) throw typeError(path, v, 'object');
      writeMessage(w, num, (sub) => writeStruct(sub, type.id, (v ?? {}) as JsonMap, path));
      return;
    }
    case 'special':
      writeSpecial(w, num, type.name, v, path);
      return;
    case 'scalar':
      writeScalar(w, num, type.s, v, path);
  }
}

function writeScalar(w: Writer, num: number, s: Scalar, v: Json, path: string): void {
  switch (s) {
    case 'string':
      if (v !== undefined && v !== null && typeof v !== 'string') throw typeError(path, v, 'string');
      w.tag(num, WIRE_BYTES);
      w.string((v as string | undefined) ?? '');
      return;
    case 'bool':
      if (v !== undefined && v !== null && typeof v !== 'boolean') throw typeError(path, v, 'boolean');
      w.tag(num, WIRE_VARINT);
      w.uvarint(v ? 1 : 0);
      return;
    case 'float64':
      if (v !== undefined && v !== null && typeof v !== 'number' && typeof v !== 'bigint') throw typeError(path, v, 'number');
      w.tag(num, WIRE_FIXED64);
      w.double(Number(v ?? 0));
      return;
    default: {
      if (v !== undefined && v !== null && !isInteger(v)) throw typeError(path, v, 'integer');
      w.tag(num, WIRE_VARINT);
      w.uvarint((v as number | bigint | undefined) ?? 0);
    }
  }
}

const isInteger = (v: Json): v is number | bigint => typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));

function writeSpecial(w: Writer, num: number, name: Special, v: Json, path: string): void {
  switch (name) {
    case 'Time':
    case 'MicroTime': {
      // A zero time marshals to nothing (an empty message); metav1.Time keeps seconds only.
      const t = v === undefined || v === null ? undefined : parseTimestamp(v, path);
      writeMessage(w, num, (sub) => {
        if (!t) return;
        sub.tag(1, WIRE_VARINT);
        sub.uvarint(t.seconds);
        sub.tag(2, WIRE_VARINT);
        sub.uvarint(name === 'MicroTime' ? t.nanos : 0);
      });
      return;
    }
    case 'Duration': {
      if (v !== undefined && v !== null && typeof v !== 'string') throw typeError(path, v, 'string');
      const nanos = v ? parseGoDuration(v as string) : 0;
      if (nanos === undefined) throw new ProtobufError(`${path}: time: invalid duration ${JSON.stringify(v)}`);
      writeMessage(w, num, (sub) => {
        sub.tag(1, WIRE_VARINT);
        sub.uvarint(Math.trunc(nanos));
      });
      return;
    }
    case 'Quantity': {
      const text = v === undefined || v === null ? '0' : typeof v === 'number' || typeof v === 'bigint' ? String(v) : v;
      if (typeof text !== 'string') throw typeError(path, v, 'string');
      writeMessage(w, num, (sub) => {
        sub.tag(1, WIRE_BYTES);
        sub.string(text);
      });
      return;
    }
    case 'IntOrString': {
      const isString = typeof v === 'string';
      if (v !== undefined && v !== null && !isString && !isInteger(v)) throw typeError(path, v, 'integer or string');
      writeMessage(w, num, (sub) => {
        sub.tag(1, WIRE_VARINT);
        sub.uvarint(isString ? 1 : 0);
        sub.tag(2, WIRE_VARINT);
        sub.uvarint(isString ? 0 : ((v as number | undefined) ?? 0));
        sub.tag(3, WIRE_BYTES);
        sub.string(isString ? v : '');
      });
      return;
    }
    default:
      // RawExtension, FieldsV1, JSON: the JSON text itself, when there is a value.
      writeMessage(w, num, (sub) => {
        if (v === undefined || v === null) return;
        sub.tag(1, WIRE_BYTES);
        sub.string(stringifyJson(v));
      });
  }
}

/** A struct with a JSON form of its own (go-types-model.ts's jsonForm), as its Go fields. */
function fromJsonForm(form: string, v: Json, path: string): JsonMap {
  if (v === undefined || v === null) return {};
  const isObject = typeof v === 'object' && !Array.isArray(v);
  if (form === 'orBool') {
    if (typeof v === 'boolean') return { Allows: v };
    if (isObject) return { Allows: true, Schema: v };
    throw typeError(path, v, 'boolean or object');
  }
  if (isObject) return { Schema: v };
  if (Array.isArray(v)) return form === 'orArray' ? { JSONSchemas: v } : { Property: v };
  throw typeError(path, v, form === 'orArray' ? 'object or list' : 'object or list of strings');
}

/** The JSON of such a struct decoded from its fields (its MarshalJSON). */
function toJsonForm(form: string, obj: JsonMap): Json {
  if (form === 'orBool') return obj.Schema ?? obj.Allows ?? false;
  const list = form === 'orArray' ? obj.JSONSchemas : obj.Property;
  if (Array.isArray(list) && list.length > 0) return list;
  return obj.Schema ?? null;
}

function typeError(path: string, v: Json, want: string): ProtobufError {
  return new ProtobufError(`${path.slice(1)}: a ${Array.isArray(v) ? 'list' : typeof v} cannot be encoded as ${want}`);
}

/** Seconds and nanoseconds of an RFC 3339 time. */
function parseTimestamp(v: Json, path: string): { seconds: number; nanos: number } | undefined {
  if (typeof v !== 'string') throw typeError(path, v, 'time');
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i.exec(v);
  const ms = m ? Date.parse(`${m[1]}${m[3].toUpperCase()}`) : NaN;
  if (!m || Number.isNaN(ms)) throw new ProtobufError(`${path.slice(1)}: not an RFC 3339 time: ${JSON.stringify(v)}`);
  const seconds = Math.floor(ms / 1000);
  // Go's zero time (0001-01-01T00:00:00Z) is no time at all.
  if (seconds === GO_ZERO_TIME_SECONDS) return undefined;
  return { seconds, nanos: Number((m[2] ?? '').padEnd(9, '0')) };
}

const GO_ZERO_TIME_SECONDS = -62135596800;
const GO_YEAR_0_SECONDS = -62167219200;
const GO_YEAR_9999_END_SECONDS = 253402300799;

// ---------------------------------------------------------------- decoding

/** The JSON Go writes for the struct `id` decoded from protobuf bytes. */
export function decodeStruct(id: string, data: Uint8Array): JsonMap {
  const out: JsonMap = {};
  depth = 0;
  readStruct(id, data, out);
  return out;
}

/**
 * Messages nested deeper than this are refused: only recursive types (a CRD's JSONSchemaProps) can
 * nest so, and a schema that deep is refused anyway; the limit keeps the stack safe.
 */
const MAX_MESSAGE_DEPTH = 200;
let depth = 0;

function readStruct(id: string, data: Uint8Array, out: JsonMap): void {
  const struct = GO_STRUCTS[id];
  if (!struct) throw new ProtobufError(`unknown type ${id}`);
  if (++depth > MAX_MESSAGE_DEPTH) throw new ProtobufError(`exceeded max depth of ${MAX_MESSAGE_DEPTH} nested messages`);
  try {
    readFieldsOf(struct, data, out);
  } finally {
    depth--;
  }
}

function readFieldsOf(struct: (typeof GO_STRUCTS)[string], data: Uint8Array, out: JsonMap): void {
  const byNumber = new Map<number, RawField[]>();
  for (const f of readFields(data)) {
    const list = byNumber.get(f.field);
    if (list) list.push(f);
    else byNumber.set(f.field, [f]);
  }
  for (const f of struct.fields) {
    const type = parseType(f.type);
    const raw = f.proto ? (byNumber.get(f.proto[0]) ?? []) : [];
    if (f.inline) {
      if (type.k === 'struct') readStruct(type.id, lastBytes(raw) ?? EMPTY, out);
      continue;
    }
    emit(out, f, type, raw);
  }
}

const EMPTY = new Uint8Array(0);
const lastBytes = (raw: RawField[]): Uint8Array | undefined => (raw.length ? (raw[raw.length - 1].data ?? EMPTY) : undefined);

/** Set one field as encoding/json writes it: omitempty drops empty values, omitzero zero ones; nil is null. */
function emit(out: JsonMap, f: GoField, type: Type, raw: RawField[]): void {
  const present = raw.length > 0;
  switch (type.k) {
    case 'ptr':
    case 'slice':
    case 'map':
    case 'bytes': {
      if (!present) {
        if (!f.omitempty && !f.omitzero) out[f.json] = null;
        return;
      }
      const v = readValue(type, raw);
      // A pointer is written when set, whatever it points to; omitempty drops empty lists, maps and bytes.
      const empty = type.k !== 'ptr' && ((Array.isArray(v) && v.length === 0) || (type.k === 'map' && Object.keys(v as JsonMap).length === 0) || v === '');
      if (f.omitempty && empty) return;
      out[f.json] = v;
      return;
    }
    case 'scalar': {
      const v = present ? readValue(type, raw) : zeroScalar(type.s);
      if ((f.omitempty || f.omitzero) && (v === 0 || v === '' || v === false || v === 0n)) return;
      out[f.json] = v;
      return;
    }
    case 'struct':
    case 'special': {
      const v = readValue(type, present ? raw : [{ field: 0, wire: WIRE_BYTES, data: EMPTY }]);
      if (f.omitzero && isZero(type, raw)) return;
      out[f.json] = v;
    }
  }
}

function isZero(type: Type, raw: RawField[]): boolean {
  if (raw.length === 0) return true;
  const data = lastBytes(raw)!;
  if (type.k === 'special' && (type.name === 'Time' || type.name === 'MicroTime')) return readTimestamp(data) === undefined;
  return data.length === 0;
}

function zeroScalar(s: Scalar): Json {
  return s === 'string' ? '' : s === 'bool' ? false : 0;
}

function readValue(type: Type, raw: RawField[]): Json {
  switch (type.k) {
    case 'ptr':
      return readValue(type.elem, raw);
    case 'slice':
      if (type.items) return readFields(lastBytes(raw) ?? EMPTY).filter((f) => f.field === 1).map((f) => readValue(type.elem, [f]));
      return readRepeated(type.elem, raw);
    case 'map': {
      const entries: [string, Json][] = [];
      for (const r of raw) {
        const fs = readFields(r.data ?? EMPTY);
        const key = fs.filter((x) => x.field === 1).pop();
        const value = fs.filter((x) => x.field === 2);
        const k = utf8(key?.data);
        entries.push([k, value.length ? readValue(type.value, value) : zeroOf(type.value)]);
      }
      // encoding/json writes map keys sorted.
      entries.sort(([a], [b]) => compareGoStrings(a, b));
      const obj: JsonMap = {};
      for (const [k, v] of entries) setOwn(obj, k, v);
      return obj;
    }
    case 'bytes':
      const b = lastBytes(raw) ?? EMPTY;
      return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
    case 'struct': {
      const obj: JsonMap = {};
      readStruct(type.id, lastBytes(raw) ?? EMPTY, obj);
      const form = GO_STRUCTS[type.id]?.jsonForm;
      return form ? toJsonForm(form, obj) : obj;
    }
    case 'special':
      return readSpecial(type.name, lastBytes(raw) ?? EMPTY);
    case 'scalar':
      return readScalar(type.s, raw[raw.length - 1]);
  }
}

/** A repeated scalar may come packed (one length-delimited field) or one value per field. */
function readRepeated(elem: Type, raw: RawField[]): Json[] {
  const out: Json[] = [];
  for (const r of raw) {
    if (elem.k === 'scalar' && elem.s !== 'string' && r.wire === WIRE_BYTES) {
      for (const p of unpack(r.data!, elem.s === 'float64')) out.push(readScalar(elem.s, p));
    } else {
      out.push(readValue(elem, [r]));
    }
  }
  return out;
}

function unpack(data: Uint8Array, fixed64: boolean): RawField[] {
  if (fixed64) {
    const out: RawField[] = [];
    for (let i = 0; i + 8 <= data.length; i += 8) out.push({ field: 1, wire: WIRE_FIXED64, data: data.subarray(i, i + 8) });
    return out;
  }
  // Re-read the values as varint fields: prefix each with a tag byte for field 1.
  const w = new Writer(data.length * 2);
  let start = 0;
  for (let i = 0; i < data.length; i++) {
    if (data[i] < 128) {
      w.tag(1, WIRE_VARINT);
      w.raw(data.subarray(start, i + 1));
      start = i + 1;
    }
  }
  return readFields(w.finish());
}

function zeroOf(type: Type): Json {
  switch (type.k) {
    case 'scalar':
      return zeroScalar(type.s);
    case 'struct':
    case 'special':
      return readValue(type, [{ field: 0, wire: WIRE_BYTES, data: EMPTY }]);
    case 'bytes':
      return '';
    default:
      return null;
  }
}

function readScalar(s: Scalar, f: RawField): Json {
  switch (s) {
    case 'string':
      if (f.wire !== WIRE_BYTES) throw new ProtobufError('wrong wireType for a string');
      return utf8(f.data);
    case 'float64':
      if (f.wire !== WIRE_FIXED64) throw new ProtobufError('wrong wireType for a double');
      return readDouble(f.data!);
    case 'bool':
      if (f.varint === undefined) throw new ProtobufError('wrong wireType for a bool');
      return f.varint !== 0;
    case 'int32':
      if (f.varint === undefined) throw new ProtobufError('wrong wireType for an integer');
      return toInt32(f.varint);
    case 'uint32':
    case 'uint64':
      if (f.varint === undefined) throw new ProtobufError('wrong wireType for an integer');
      return s === 'uint32' ? Number(BigInt.asUintN(32, BigInt(f.varint))) : f.varint;
    default:
      if (f.varint === undefined) throw new ProtobufError('wrong wireType for an integer');
      return toInt64(f.varint);
  }
}

function readTimestamp(data: Uint8Array): { seconds: number; nanos: number } | undefined {
  let seconds = 0;
  let nanos = 0;
  for (const f of readFields(data)) {
    if (f.field === 1 && f.varint !== undefined) seconds = Number(toInt64(f.varint));
    if (f.field === 2 && f.varint !== undefined) nanos = toInt32(f.varint);
  }
  if ((seconds === 0 && nanos === 0 && data.length === 0) || seconds === GO_ZERO_TIME_SECONDS) return undefined;
  // RFC 3339 holds years 0000 to 9999 (time.MarshalJSON refuses others); nanos are within a second.
  if (seconds < GO_YEAR_0_SECONDS || seconds > GO_YEAR_9999_END_SECONDS || nanos < 0 || nanos >= 1e9) {
    throw new ProtobufError(`Time.MarshalJSON: year outside of range [0,9999] or invalid nanoseconds (seconds ${seconds}, nanos ${nanos})`);
  }
  return { seconds, nanos };
}

function readSpecial(name: Special, data: Uint8Array): Json {
  const fields = () => readFields(data);
  switch (name) {
    case 'Time':
    case 'MicroTime': {
      const t = readTimestamp(data);
      if (!t) return null;
      const iso = new Date(t.seconds * 1000).toISOString().slice(0, 19);
      return name === 'Time' ? `${iso}Z` : `${iso}.${String(Math.floor(t.nanos / 1000)).padStart(6, '0')}Z`;
    }
    case 'Duration': {
      const f = fields().find((x) => x.field === 1);
      return formatGoDuration(f?.varint === undefined ? 0 : Number(toInt64(f.varint)));
    }
    case 'Quantity': {
      const f = fields().find((x) => x.field === 1);
      return f?.data ? utf8(f.data) : '0';
    }
    case 'IntOrString': {
      let type = 0;
      let intVal = 0;
      let strVal = '';
      for (const f of fields()) {
        if (f.field === 1 && f.varint !== undefined) type = Number(toInt64(f.varint));
        if (f.field === 2 && f.varint !== undefined) intVal = toInt32(f.varint);
        if (f.field === 3 && f.data) strVal = utf8(f.data);
      }
      return type === 1 ? strVal : intVal;
    }
    default: {
      const f = fields().find((x) => x.field === 1);
      if (!f?.data || f.data.length === 0) return null;
      try {
        // The JSON path's decoder: its depth limit, int64 numbers as BigInt, no prototype keys.
        return parseJson(utf8(f.data));
      } catch (err) {
        throw new ProtobufError(`${name}: ${(err as Error).message}`);
      }
    }
  }
}

/** time.Duration.String(): `1h2m3.5s`, `1.5ms`, `0s`. */
export function formatGoDuration(nanos: number): string {
  if (nanos === 0) return '0s';
  const neg = nanos < 0;
  let n = Math.abs(nanos);
  let out: string;
  if (n < 1e9) {
    // Below a second: one unit, with a fraction.
    const [unit, size] = n < 1e3 ? ['ns', 1] : n < 1e6 ? ['µs', 1e3] : ['ms', 1e6];
    out = `${trimFraction(n / size)}${unit}`;
  } else {
    const h = Math.floor(n / 3600e9);
    n -= h * 3600e9;
    const m = Math.floor(n / 60e9);
    n -= m * 60e9;
    out = `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${trimFraction(n / 1e9)}s`;
  }
  return neg ? `-${out}` : out;
}

function trimFraction(v: number): string {
  return v.toFixed(9).replace(/\.?0+$/, '');
}
