/**
 * Serialized pieces of the published documents and their assembly: every
 * definition, schema and path of a fragment is serialized once per form (JSON
 * text or protobuf entry, with its SHA-512) and cached by its Source until that
 * source changes; a document is the concatenation of pieces, and its ETag a
 * SHA-512 over the pieces' digests, so a change costs one fragment plus a copy.
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

/** The v2 pieces of a source in one form (JSON members, or protobuf entries: NamedSchema field 1, NamedPathItem field 2), by key. */
export interface V2Pieces {
  definitions: Map<string, Piece>;
  paths: Map<string, Piece>;
}

/** The v3 pieces of a source: per group-version, its schemas and paths as JSON members. */
export type V3Pieces = Map<string, { schemas: Map<string, Piece>; paths: Map<string, Piece> }>;

/**
 * One contributor of definitions, schemas and paths (a CRD, or the built-ins). Each form
 * (v2 JSON, v2 protobuf, v3) is serialized on its first use, from a fragment built for it
 * and dropped after: only the pieces of the forms clients asked for are kept, which take
 * a fraction of the memory of the schema objects (most clients use one form).
 */
export class Source {
  private json: V2Pieces | undefined;
  private proto: V2Pieces | undefined;
  private v3Pieces: V3Pieces | undefined;

  constructor(
    private readonly build: () => Fragment,
    /** The group-versions it contributes v3 documents to. */
    readonly groupVersions: readonly string[],
  ) {}

  v2Json(): V2Pieces {
    this.json ??= v2Pieces(this.build(), (name, schema) => jsonEntry(name, schema), (path, item) => jsonEntry(path, item));
    return this.json;
  }

  v2Proto(): V2Pieces {
    this.proto ??= v2Pieces(
      this.build(),
      (name, schema) => piece(namedEntry(1, name, (w) => writeSchema(w, schema))),
      (path, item) => piece(namedEntry(2, path, (w) => writePathItem(w, item))),
    );
    return this.proto;
  }

  v3(): V3Pieces {
    if (this.v3Pieces) return this.v3Pieces;
    const out: V3Pieces = new Map();
    for (const [gv, part] of this.build().v3) {
      const schemas = new Map<string, Piece>();
      const paths = new Map<string, Piece>();
      for (const [name, schema] of part.schemas) schemas.set(name, jsonEntry(name, schema as Schema));
      for (const [path, item] of part.paths) paths.set(path, jsonEntry(path, item));
      out.set(gv, { schemas, paths });
    }
    this.v3Pieces = out;
    return out;
  }
}

function v2Pieces(f: Fragment, definition: (name: string, schema: Schema) => Piece, path: (path: string, item: Schema) => Piece): V2Pieces {
  const out: V2Pieces = { definitions: new Map(), paths: new Map() };
  for (const [name, schema] of f.v2Definitions) out.definitions.set(name, definition(name, schema));
  for (const [p, item] of f.v2Paths) out.paths.set(p, path(p, item));
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
