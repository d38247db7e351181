// A minimal protobuf reader for the tests: fields by number (varint, 64-bit and length-delimited values).

export type Field = { wire: 0; value: bigint } | { wire: 1; value: Buffer } | { wire: 2; value: Buffer };

export class Message {
  private constructor(readonly fields: Map<number, Field[]>) {}

  static decode(buf: Buffer): Message {
    const fields = new Map<number, Field[]>();
    let pos = 0;
    const varint = (): bigint => {
      let shift = 0n;
      let result = 0n;
      for (;;) {
        if (pos >= buf.length) throw new Error('truncated varint');
        const b = buf[pos++];
        result |= BigInt(b & 0x7f) << shift;
        if (!(b & 0x80)) return result;
        shift += 7n;
      }
    };
    while (pos < buf.length) {
      const key = Number(varint());
      const field = key >> 3;
      const wire = key & 7;
      let f: Field;
      if (wire === 0) f = { wire: 0, value: varint() };
      else if (wire === 1) {
        f = { wire: 1, value: buf.subarray(pos, pos + 8) };
        pos += 8;
      } else if (wire === 2) {
        const n = Number(varint());
        if (pos + n > buf.length) throw new Error('truncated bytes');
        f = { wire: 2, value: buf.subarray(pos, pos + n) };
        pos += n;
      } else throw new Error(`unexpected wire type ${wire}`);
      const list = fields.get(field) ?? [];
      list.push(f);
      fields.set(field, list);
    }
    return new Message(fields);
  }

  has(n: number): boolean {
    return this.fields.has(n);
  }

  string(n: number): string | undefined {
    const f = this.fields.get(n)?.[0];
    return f?.wire === 2 ? f.value.toString('utf8') : undefined;
  }

  strings(n: number): string[] {
    return (this.fields.get(n) ?? []).map((f) => (f.value as Buffer).toString('utf8'));
  }

  message(n: number): Message | undefined {
    const f = this.fields.get(n)?.[0];
    return f?.wire === 2 ? Message.decode(f.value) : undefined;
  }

  messages(n: number): Message[] {
    return (this.fields.get(n) ?? []).filter((f) => f.wire === 2).map((f) => Message.decode(f.value as Buffer));
  }

  bool(n: number): boolean {
    const f = this.fields.get(n)?.[0];
    return f?.wire === 0 && f.value !== 0n;
  }

  int(n: number): number | undefined {
    const f = this.fields.get(n)?.[0];
    return f?.wire === 0 ? Number(BigInt.asIntN(64, f.value)) : undefined;
  }

  double(n: number): number | undefined {
    const f = this.fields.get(n)?.[0];
    return f?.wire === 1 ? f.value.readDoubleLE(0) : undefined;
  }

  /** A repeated Named* entry list ({name: 1, value: 2}) as a map. */
  named(n: number): Map<string, Message> {
    const out = new Map<string, Message>();
    for (const m of this.messages(n)) out.set(m.string(1) ?? '', m.message(2) ?? Message.decode(Buffer.alloc(0)));
    return out;
  }
}
