/**
 * The protobuf wire format (proto2, as gogo-protobuf writes Kubernetes' messages): varints,
 * length-delimited fields and 64-bit fixed values. Integers beyond 2^53 travel as BigInt.
 */

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
export const WIRE_FIXED32 = 5;

export class ProtobufError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufError';
  }
}

const TWO_32 = 4294967296;

/** A growing buffer of encoded fields. */
export class Writer {
  private buf: Buffer;
  length = 0;

  constructor(size = 256) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /**
   * Start a length-delimited field written in place: one byte is kept for its length, and
   * endMessage moves the body when the length needs more (cheaper than a writer per message).
   */
  beginMessage(field: number): number {
    this.tag(field, WIRE_BYTES);
    this.reserve(1);
    return this.length++;
  }

  endMessage(start: number): void {
    const len = this.length - start - 1;
    let size = 1;
    for (let n = len; n >= 128; n = Math.floor(n / 128)) size++;
    if (size > 1) {
      this.reserve(size - 1);
      this.buf.copyWithin(start + size, start + 1, this.length);
      this.length += size - 1;
    }
    let n = len;
    let at = start;
    while (n >= 128) {
      this.buf[at++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    this.buf[at] = n;
  }

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  tag(field: number, wire: number): void {
    this.uvarint(field * 8 + wire);
  }

  /** An unsigned varint; a negative or BigInt value is written as its 64-bit two's complement. */
  uvarint(v: number | bigint): void {
    if (typeof v === 'number' && v >= 0 && v <= Number.MAX_SAFE_INTEGER) {
      this.reserve(10);
      let n = v;
      while (n >= 128) {
        this.buf[this.length++] = (n % 128) | 128;
        n = Math.floor(n / 128);
      }
      this.buf[this.length++] = n;
      return;
    }
    let b = BigInt.asUintN(64, BigInt(v));
    this.reserve(10);
    while (b >= 128n) {
      this.buf[this.length++] = Number(b & 127n) | 128;
      b >>= 7n;
    }
    this.buf[this.length++] = Number(b);
  }

  bytes(data: Uint8Array): void {
    this.uvarint(data.length);
    this.reserve(data.length);
    this.buf.set(data, this.length);
    this.length += data.length;
  }

  string(s: string): void {
    const len = Buffer.byteLength(s, 'utf8');
    this.uvarint(len);
    this.reserve(len);
    this.length += this.buf.write(s, this.length, len, 'utf8');
  }

  double(v: number): void {
    this.reserve(8);
    new DataView(this.buf.buffer, this.buf.byteOffset).setFloat64(this.length, v, true);
    this.length += 8;
  }

  raw(data: Uint8Array): void {
    this.reserve(data.length);
    this.buf.set(data, this.length);
    this.length += data.length;
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

/** One field as read: its number, wire type and value (a varint, the bytes of a length-delimited one, or fixed bytes). */
export interface RawField {
  field: number;
  wire: number;
  /** Varint: the value (a number up to 2^53, else a BigInt, unsigned). */
  varint?: number | bigint;
  /** Length-delimited or fixed: the bytes. */
  data?: Uint8Array;
}

/** The fields of one message, in the order they come. */
export function readFields(buf: Uint8Array): RawField[] {
  const out: RawField[] = [];
  let pos = 0;
  const varint = (): number | bigint => {
    const start = pos;
    while (pos < buf.length && buf[pos] >= 128) pos++;
    if (pos >= buf.length) throw new ProtobufError('unexpected EOF');
    pos++;
    const n = pos - start;
    if (n > 10) throw new ProtobufError('integer overflow');
    if (n <= 7) {
      // Up to 49 bits: exact in a double.
      let v = 0;
      for (let i = pos - 1; i >= start; i--) v = v * 128 + (buf[i] & 127);
      return v;
    }
    let big = 0n;
    for (let i = pos - 1; i >= start; i--) big = (big << 7n) | BigInt(buf[i] & 127);
    big = BigInt.asUintN(64, big);
    return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
  };
  while (pos < buf.length) {
    const key = varint();
    if (typeof key !== 'number' || key > 0x7fffffff) throw new ProtobufError('illegal tag');
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (field <= 0) throw new ProtobufError(`illegal tag ${field} (wire type ${wire})`);
    switch (wire) {
      case WIRE_VARINT:
        out.push({ field, wire, varint: varint() });
        break;
      case WIRE_BYTES: {
        const len = varint();
        if (typeof len !== 'number' || len < 0 || pos + len > buf.length) throw new ProtobufError('unexpected EOF');
        out.push({ field, wire, data: buf.subarray(pos, pos + len) });
        pos += len;
        break;
      }
      case WIRE_FIXED64:
      case WIRE_FIXED32: {
        const len = wire === WIRE_FIXED64 ? 8 : 4;
        if (pos + len > buf.length) throw new ProtobufError('unexpected EOF');
        out.push({ field, wire, data: buf.subarray(pos, pos + len) });
        pos += len;
        break;
      }
      default:
        throw new ProtobufError(`illegal wireType ${wire} for field ${field}`);
    }
  }
  return out;
}

/** A varint read as Go's int32 (its low 32 bits, signed). */
export function toInt32(v: number | bigint): number {
  if (typeof v === 'bigint') return Number(BigInt.asIntN(32, v));
  return v % TWO_32 | 0;
}

/** A varint read as Go's int64: a number when safe, else a BigInt. */
export function toInt64(v: number | bigint): number | bigint {
  if (typeof v === 'number') return v;
  const s = BigInt.asIntN(64, v);
  return s >= BigInt(Number.MIN_SAFE_INTEGER) && s <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(s) : s;
}

export function readDouble(data: Uint8Array): number {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getFloat64(0, true);
}

/** Bytes as UTF-8 text, without copying them first. */
export function utf8(data: Uint8Array | undefined): string {
  return data ? Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8') : '';
}
