/**
 * The protobuf form of an OpenAPI v2 document: gnostic's openapi.v2.Document
 * (OpenAPIv2.proto) as kube-openapi produces it from the JSON document, which
 * kubectl fetches with `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`.
 * Hand-encoded (varints and length-delimited fields, proto3 defaults left out);
 * arbitrary values (`enum`, `default`, `example`, vendor extensions) travel as
 * Any{yaml}, whose text is the value's JSON (a YAML flow document).
 */
import { stringifyJson } from '../machinery/json.js';
import type { Schema } from './schema-types.js';

/** An append-only protobuf encoder. */
export class ProtoWriter {
  private buf = Buffer.allocUnsafe(256);
  private len = 0;

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  varint(n: number | bigint): void {
    let v = BigInt.asUintN(64, BigInt(n));
    if (v < 0x80n) {
      this.ensure(1);
      this.buf[this.len++] = Number(v);
      return;
    }
    this.ensure(10);
    while (v >= 0x80n) {
      this.buf[this.len++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.len++] = Number(v);
  }

  private smallVarint(n: number): void {
    if (n < 0x80) {
      this.ensure(1);
      this.buf[this.len++] = n;
      return;
    }
    this.ensure(5);
    while (n >= 0x80) {
      this.buf[this.len++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[this.len++] = n;
  }

  private key(field: number, wire: number): void {
    this.smallVarint((field << 3) | wire);
  }

  /** A string field; empty strings are proto3 defaults and left out. */
  string(field: number, s: string | undefined): void {
    if (!s) return;
    const n = Buffer.byteLength(s);
    this.key(field, 2);
    this.smallVarint(n);
    this.ensure(n);
    this.len += this.buf.write(s, this.len, 'utf8');
  }

  strings(field: number, list: readonly string[] | undefined): void {
    // Repeated strings keep empty entries.
    for (const s of list ?? []) {
      const n = Buffer.byteLength(s);
      this.key(field, 2);
      this.smallVarint(n);
      this.ensure(n);
      this.len += this.buf.write(s, this.len, 'utf8');
    }
  }

  bool(field: number, b: boolean | undefined): void {
    if (!b) return;
    this.key(field, 0);
    this.smallVarint(1);
  }

  int64(field: number, n: number | bigint | undefined): void {
    if (n === undefined || n === 0 || n === 0n) return;
    this.key(field, 0);
    this.varint(typeof n === 'number' ? Math.trunc(n) : n);
  }

  double(field: number, x: number | undefined): void {
    if (x === undefined || x === 0) return;
    this.key(field, 1);
    this.ensure(8);
    this.buf.writeDoubleLE(x, this.len);
    this.len += 8;
  }

  /** An embedded message field, written even when empty (a set message is not a default). */
  bytes(field: number, data: Uint8Array): void {
    this.key(field, 2);
    this.smallVarint(data.length);
    this.ensure(data.length);
    this.buf.set(data, this.len);
    this.len += data.length;
  }

  /**
   * An embedded message written in place: a byte kept for its length, the message, then the length (its varint
   * moved the message along when it takes more than that byte). No writer or buffer per message.
   */
  message(field: number, write: (w: ProtoWriter) => void): void {
    this.key(field, 2);
    this.ensure(1);
    const start = ++this.len;
    write(this);
    const n = this.len - start;
    let size = 1;
    for (let v = n; v >= 0x80; v >>>= 7) size++;
    if (size > 1) {
      this.ensure(size - 1);
      this.buf.copyWithin(start + size - 1, start, this.len);
      this.len += size - 1;
    }
    let at = start - 1;
    let v = n;
    while (v >= 0x80) {
      this.buf[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[at] = v;
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.len);
  }
}

/** Any{yaml}: a value as YAML text (its JSON, which YAML reads as a flow document). */
function writeAny(w: ProtoWriter, field: number, value: unknown): void {
  w.message(field, (a) => a.string(2, stringifyJson(value) + '\n'));
}

function writeVendorExtensions(w: ProtoWriter, field: number, obj: Schema): void {
  for (const [k, v] of Object.entries(obj)) {
    if (!k.startsWith('x-')) continue;
    w.message(field, (n) => {
      n.string(1, k);
      writeAny(n, 2, v);
    });
  }
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined);

/** openapi.v2.Schema. */
export function writeSchema(w: ProtoWriter, s: Schema): void {
  w.string(1, s.$ref);
  w.string(2, s.format);
  w.string(3, s.title);
  w.string(4, s.description);
  if (s.default !== undefined) writeAny(w, 5, s.default);
  w.double(6, num(s.multipleOf));
  w.double(7, num(s.maximum));
  w.bool(8, s.exclusiveMaximum);
  w.double(9, num(s.minimum));
  w.bool(10, s.exclusiveMinimum);
  w.int64(11, num(s.maxLength));
  w.int64(12, num(s.minLength));
  w.string(13, s.pattern);
  w.int64(14, num(s.maxItems));
  w.int64(15, num(s.minItems));
  w.bool(16, s.uniqueItems);
  w.int64(17, num(s.maxProperties));
  w.int64(18, num(s.minProperties));
  w.strings(19, s.required);
  for (const e of (s.enum as unknown[] | undefined) ?? []) writeAny(w, 20, e);
  if (typeof s.additionalProperties === 'boolean') w.message(21, (a) => a.bool(2, s.additionalProperties));
  else if (s.additionalProperties) w.message(21, (a) => a.message(1, (x) => writeSchema(x, s.additionalProperties)));
  if (s.type !== undefined) w.message(22, (t) => t.strings(1, Array.isArray(s.type) ? s.type : [s.type]));
  if (s.items !== undefined) {
    const items = Array.isArray(s.items) ? s.items : [s.items];
    w.message(23, (it) => {
      for (const i of items) it.message(1, (x) => writeSchema(x, i));
    });
  }
  for (const a of (s.allOf as Schema[] | undefined) ?? []) w.message(24, (x) => writeSchema(x, a));
  if (s.properties) {
    w.message(25, (p) => {
      for (const [name, sub] of Object.entries(s.properties as Record<string, Schema>)) {
        p.message(1, (n) => {
          n.string(1, name);
          n.message(2, (x) => writeSchema(x, sub));
        });
      }
    });
  }
  w.string(26, s.discriminator);
  w.bool(27, s.readOnly);
  if (s.externalDocs) w.message(29, (d) => writeExternalDocs(d, s.externalDocs));
  if (s.example !== undefined) writeAny(w, 30, s.example);
  writeVendorExtensions(w, 31, s);
}

function writeExternalDocs(w: ProtoWriter, d: Schema): void {
  w.string(1, d.description);
  w.string(2, d.url);
}

/** openapi.v2.Parameter (body, or a query/path/header parameter). */
export function writeParameter(w: ProtoWriter, p: Schema): void {
  if (p.in === 'body') {
    w.message(1, (b) => {
      b.string(1, p.description);
      b.string(2, p.name);
      b.string(3, p.in);
      b.bool(4, p.required);
      if (p.schema) b.message(5, (x) => writeSchema(x, p.schema));
      writeVendorExtensions(b, 6, p);
    });
    return;
  }
  // NonBodyParameter: header (1), formData (2), query (3), path (4); the path sub-schema has no allow_empty_value.
  const which = p.in === 'header' ? 1 : p.in === 'formData' ? 2 : p.in === 'path' ? 4 : 3;
  const shift = which === 4 || which === 1 ? -1 : 0;
  w.message(2, (nb) =>
    nb.message(which, (q) => {
      q.bool(1, p.required);
      q.string(2, p.in);
      q.string(3, p.description);
      q.string(4, p.name);
      if (shift === 0) q.bool(5, p.allowEmptyValue);
      q.string(6 + shift, p.type);
      q.string(7 + shift, p.format);
      q.bool(20 + shift, p.uniqueItems);
      writeVendorExtensions(q, 23 + shift, p);
    }),
  );
}

/** openapi.v2.ParametersItem: an inline parameter or a reference to a shared one. */
function writeParametersItem(w: ProtoWriter, p: Schema): void {
  if (typeof p.$ref === 'string') w.message(2, (r) => r.string(1, p.$ref));
  else w.message(1, (x) => writeParameter(x, p));
}

function writeOperation(w: ProtoWriter, op: Schema): void {
  w.strings(1, op.tags);
  w.string(2, op.summary);
  w.string(3, op.description);
  w.string(5, op.operationId);
  w.strings(6, op.produces);
  w.strings(7, op.consumes);
  for (const p of (op.parameters as Schema[] | undefined) ?? []) w.message(8, (x) => writeParametersItem(x, p));
  if (op.responses) {
    w.message(9, (rs) => {
      for (const [code, resp] of Object.entries(op.responses as Record<string, Schema>)) {
        rs.message(1, (n) => {
          n.string(1, code);
          n.message(2, (v) =>
            v.message(1, (r) => {
              r.string(1, resp.description);
              if (resp.schema) r.message(2, (si) => si.message(1, (x) => writeSchema(x, resp.schema)));
            }),
          );
        });
      }
    });
  }
  w.strings(10, op.schemes);
  w.bool(11, op.deprecated);
  writeVendorExtensions(w, 13, op);
}

const OPERATION_FIELDS: [string, number][] = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['options', 6],
  ['head', 7],
  ['patch', 8],
];

/** openapi.v2.PathItem. */
export function writePathItem(w: ProtoWriter, item: Schema): void {
  w.string(1, item.$ref);
  for (const [m, field] of OPERATION_FIELDS) if (item[m]) w.message(field, (x) => writeOperation(x, item[m]));
  for (const p of (item.parameters as Schema[] | undefined) ?? []) w.message(9, (x) => writeParametersItem(x, p));
  writeVendorExtensions(w, 10, item);
}

/** One `field` entry of a repeated Named* message: {name: 1, value: 2}. */
export function namedEntry(field: number, name: string, writeValue: (w: ProtoWriter) => void): Buffer {
  const w = new ProtoWriter();
  w.message(field, (n) => {
    n.string(1, name);
    n.message(2, writeValue);
  });
  return w.finish();
}

export interface DocumentHead {
  title: string;
  version: string;
}

/**
 * openapi.v2.Document from pre-encoded pieces: the Paths entries (NamedPathItem, field 2),
 * the Definitions entries (NamedSchema, field 1) and ParameterDefinitions entries
 * (NamedParameter, field 1), plus the BearerToken security definition kube-apiserver publishes.
 */
/** The document's parts in order (their concatenation is the encoded document; large ones are joined in steps). */
export function encodeDocument(head: DocumentHead, paths: readonly Buffer[], definitions: readonly Buffer[], parameters: readonly Buffer[]): Buffer[] {
  const w = new ProtoWriter();
  w.string(1, '2.0');
  w.message(2, (i) => {
    i.string(1, head.title);
    i.string(2, head.version);
  });
  const prefix = w.finish();
  const parts: Buffer[] = [Buffer.from(prefix)];
  const field = (n: number, chunks: readonly Buffer[]) => {
    const size = chunks.reduce((a, c) => a + c.length, 0);
    const k = new ProtoWriter();
    k.varint((n << 3) | 2);
    k.varint(size);
    parts.push(Buffer.from(k.finish()), ...chunks);
  };
  field(8, paths);
  field(9, definitions);
  field(10, parameters);
  const tail = new ProtoWriter();
  tail.message(12, (sr) =>
    sr.message(1, (n) => {
      n.string(1, 'BearerToken');
      n.message(2, () => undefined);
    }),
  );
  tail.message(13, (sd) =>
    sd.message(1, (n) => {
      n.string(1, 'BearerToken');
      n.message(2, (item) =>
        item.message(2, (k) => {
          k.string(1, 'apiKey');
          k.string(2, 'authorization');
          k.string(3, 'header');
          k.string(4, 'Bearer Token authentication');
        }),
      );
    }),
  );
  parts.push(Buffer.from(tail.finish()));
  return parts;
}
