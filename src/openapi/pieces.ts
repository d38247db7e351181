/**
 * Serialized pieces of the published documents and their assembly: every
 * definition, schema and path of a fragment is serialized once (JSON text or
 * protobuf entry, with its SHA-512) and cached by its Source until that source
 * changes; a document is the concatenation of pieces, and its ETag a SHA-512
 * over the pieces' digests, so a change costs one fragment plus a copy.
 */
import { createHash, type Hash } from 'node:crypto';
import { stringifyJson } from '../machinery/json.js';
import type { Fragment } from './fragments.js';
import { namedEntry, writePathItem, writeSchema } from './protobuf.js';
import type { Schema } from './schema-types.js';

export interface Piece {
  bytes: Buffer;
  digest: Buffer;
}

/** A piece in its own exactly-sized buffer: pooled slices would keep whole slabs of garbage alive. */
export function piece(bytes: Buffer | string): Piece {
  const size = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
  const own = Buffer.allocUnsafeSlow(size);
  if (typeof bytes === 'string') own.write(bytes);
  else bytes.copy(own);
  return { bytes: own, digest: createHash('sha512').update(own).digest() };
}

/** `"<key>":<value as JSON>` */
export function jsonEntry(key: string, value: unknown): Piece {
  return piece(JSON.stringify(key) + ':' + stringifyJson(value));
}

/** What a source contributes, serialized: every piece in every form, by key. */
export interface SerializedFragment {
  v2DefinitionJson: Map<string, Piece>;
  v2PathJson: Map<string, Piece>;
  /** Definitions entries (NamedSchema, field 1). */
  v2DefinitionProto: Map<string, Piece>;
  /** Paths entries (NamedPathItem, field 2). */
  v2PathProto: Map<string, Piece>;
  v3: Map<string, { schemas: Map<string, Piece>; paths: Map<string, Piece> }>;
}

/**
 * One contributor of definitions, schemas and paths (a CRD, or the built-ins). Its
 * fragment is built on first use and serialized at once in every form; only the
 * serialized pieces are kept, which take a fraction of the memory of the schema objects.
 */
export class Source {
  private serialized: SerializedFragment | undefined;

  constructor(
    private readonly build: () => Fragment,
    /** The group-versions it contributes v3 documents to. */
    readonly groupVersions: readonly string[],
  ) {}

  get(): SerializedFragment {
    this.serialized ??= serialize(this.build());
    return this.serialized;
  }
}

function serialize(f: Fragment): SerializedFragment {
  const out: SerializedFragment = { v2DefinitionJson: new Map(), v2PathJson: new Map(), v2DefinitionProto: new Map(), v2PathProto: new Map(), v3: new Map() };
  for (const [name, schema] of f.v2Definitions) {
    out.v2DefinitionJson.set(name, jsonEntry(name, schema));
    out.v2DefinitionProto.set(name, piece(namedEntry(1, name, (w) => writeSchema(w, schema))));
  }
  for (const [path, item] of f.v2Paths) {
    out.v2PathJson.set(path, jsonEntry(path, item));
    out.v2PathProto.set(path, piece(namedEntry(2, path, (w) => writePathItem(w, item))));
  }
  for (const [gv, part] of f.v3) {
    const schemas = new Map<string, Piece>();
    const paths = new Map<string, Piece>();
    for (const [name, schema] of part.schemas) schemas.set(name, jsonEntry(name, schema as Schema));
    for (const [path, item] of part.paths) paths.set(path, jsonEntry(path, item));
    out.v3.set(gv, { schemas, paths });
  }
  return out;
}

const COMMA = Buffer.from(',');

/** Assembles a document from literal text and pieces, hashing as it goes; without a body only the ETag is computed. */
export class DocumentBuilder {
  private readonly out: Buffer[] | undefined;
  private readonly hash: Hash = createHash('sha512');

  constructor(withBody: boolean) {
    this.out = withBody ? [] : undefined;
  }

  literal(text: string): this {
    const b = Buffer.from(text);
    this.out?.push(b);
    this.hash.update(b);
    return this;
  }

  /** Pieces, comma-separated when `separated` (JSON members). */
  pieces(list: readonly Piece[], separated: boolean): this {
    list.forEach((p, i) => {
      if (separated && i) this.out?.push(COMMA);
      this.out?.push(p.bytes);
      this.hash.update(p.digest);
    });
    this.hash.update('|');
    return this;
  }

  /** The quoted ETag and, when built with a body, the concatenated document. */
  finish(): { etag: string; body: Buffer | undefined } {
    return { etag: `"${this.hash.digest('hex').toUpperCase()}"`, body: this.out ? Buffer.concat(this.out) : undefined };
  }
}

/** Entries by key, sorted as Go sorts map keys, the first source of a key winning. */
export function sortedEntries<T>(sources: Iterable<[string, T]>): [string, T][] {
  const owner = new Map<string, T>();
  for (const [k, v] of sources) if (!owner.has(k)) owner.set(k, v);
  return [...owner].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
