/**
 * Serialized pieces of the published documents and their assembly: every
 * definition, schema and path of a fragment is serialized once per form (JSON
 * text or protobuf entry) and cached by its Source until that source changes;
 * a document is the concatenation of pieces, so a change costs one fragment plus
 * a copy. ETags come from the sources' inputs (Source.inputDigest), not the bytes.
 */
import { stringifyJson } from '../machinery/json.js';
import type { Fragment } from './fragments.js';
import { namedEntry, writePathItem, writeSchema } from './protobuf.js';
import type { Schema } from './schema-types.js';
import { runSteps, runStepsInTurns, type Steps } from '../util/turns.js';

const NO_INPUT = Buffer.alloc(0);

export interface Piece {
  bytes: Buffer;
}

/** A piece in its own exactly-sized buffer: pooled slices would keep whole slabs of garbage alive. */
export function piece(bytes: Buffer | string): Piece {
  const size = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
  const own = Buffer.allocUnsafeSlow(size);
  if (typeof bytes === 'string') own.write(bytes);
  else bytes.copy(own);
  return { bytes: own };
}

/** `"<key>":<value as JSON>` */
export function jsonEntry(key: string, value: unknown): Piece {
  return piece(jsonEntryText(key, value));
}

function jsonEntryText(key: string, value: unknown): string {
  return JSON.stringify(key) + ':' + stringifyJson(value);
}

/**
 * Pieces made together (a source's pieces of one form) in one buffer, each a view of its part: one allocation
 * outside the heap for them all instead of one each (10,000 CRDs made some 600,000, a second of the cold documents).
 * They are kept and dropped together.
 */
function arena(raw: ReadonlyArray<string | Buffer>): Piece[] {
  let total = 0;
  for (const r of raw) total += typeof r === 'string' ? Buffer.byteLength(r) : r.length;
  const buf = Buffer.allocUnsafeSlow(total);
  const out = new Array<Piece>(raw.length);
  let at = 0;
  for (let i = 0; i < raw.length; i++) {
    const r = raw[i];
    const n = typeof r === 'string' ? buf.write(r, at) : r.copy(buf, at);
    out[i] = { bytes: buf.subarray(at, at + n) };
    at += n;
  }
  return out;
}

/** Keyed pieces from keyed raw entries, made in one arena. */
function arenaMaps(groups: ReadonlyArray<Array<[string, string | Buffer]>>): Array<Map<string, Piece>> {
  const pieces = arena(groups.flatMap((g) => g.map(([, r]) => r)));
  let i = 0;
  return groups.map((g) => new Map(g.map(([k]) => [k, pieces[i++]])));
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
 * a fraction of the memory of the schema objects (most clients use one form). `prepare`
 * serializes a form in steps, with a turn of the event loop between them (the built-ins'
 * fragment and pieces take a few hundred milliseconds), so that a request for a cold document
 * does not hold every other request; the synchronous accessors then find it done.
 */
export class Source {
  private json: V2Pieces | undefined;
  private proto: V2Pieces | undefined;
  private v3Pieces: V3Pieces | undefined;
  private readonly preparing = new Map<SourceForm, Promise<void>>();

  constructor(
    /** The fragment, or (given a form) at least its parts that form writes. */
    private readonly build: (form?: SourceForm) => Steps<Fragment>,
    /** The group-versions it contributes v3 documents to. */
    readonly groupVersions: readonly string[],
    /**
     * A digest of what the source is made from (a CRD's identity and generation, the built-ins' list): what it
     * contributes changes only with it, so v3 ETags are made from these without serializing anything.
     */
    readonly inputDigest: Buffer = NO_INPUT,
  ) {}

  v2Json(): V2Pieces {
    return (this.json ??= runSteps(this.serializing('json')) as V2Pieces);
  }

  v2Proto(): V2Pieces {
    return (this.proto ??= runSteps(this.serializing('proto')) as V2Pieces);
  }

  v3(): V3Pieces {
    return (this.v3Pieces ??= runSteps(this.serializing('v3')) as V3Pieces);
  }

  /** The form serialized, in turns of the event loop (util/turns.ts), unless it already is; requests meanwhile wait for the same work. */
  prepare(form: SourceForm): Promise<void> | undefined {
    if (this.has(form)) return undefined;
    let pending = this.preparing.get(form);
    if (!pending) {
      pending = runStepsInTurns(this.serializing(form)).then(
        (made) => {
          this.preparing.delete(form);
          // A synchronous accessor may have made it meanwhile: the first one stays.
          if (form === 'json') this.json ??= made as V2Pieces;
          else if (form === 'proto') this.proto ??= made as V2Pieces;
          else this.v3Pieces ??= made as V3Pieces;
        },
        (err: unknown) => {
          this.preparing.delete(form);
          throw err;
        },
      );
      this.preparing.set(form, pending);
    }
    return pending;
  }

  private has(form: SourceForm): boolean {
    return (form === 'json' ? this.json : form === 'proto' ? this.proto : this.v3Pieces) !== undefined;
  }

  private *serializing(form: SourceForm): Steps<V2Pieces | V3Pieces> {
    const f = yield* this.build(form);
    yield;
    if (form === 'json') return yield* v2Pieces(f, jsonEntryText, jsonEntryText);
    if (form === 'proto') {
      return yield* v2Pieces(
        f,
        (name, schema) => namedEntry(1, name, (w) => writeSchema(w, schema)),
        (path, item) => namedEntry(2, path, (w) => writePathItem(w, item)),
      );
    }
    const gvs: string[] = [];
    const groups: Array<Array<[string, string]>> = [];
    let n = 0;
    for (const [gv, part] of f.v3) {
      const schemas: Array<[string, string]> = [];
      for (const [name, schema] of part.schemas) {
        schemas.push([name, jsonEntryText(name, schema as Schema)]);
        if (++n % ENTRIES_PER_STEP === 0) yield;
      }
      gvs.push(gv);
      groups.push(schemas, [...part.paths].map(([path, item]) => [path, jsonEntryText(path, item)]));
    }
    const maps = arenaMaps(groups);
    const out: V3Pieces = new Map();
    gvs.forEach((gv, i) => out.set(gv, { schemas: maps[2 * i], paths: maps[2 * i + 1] }));
    return out;
  }
}

export type SourceForm = 'json' | 'proto' | 'v3';

/** Definitions or paths serialized between two pauses. */
const ENTRIES_PER_STEP = 100;

function* v2Pieces(f: Fragment, definition: (name: string, schema: Schema) => string | Buffer, path: (path: string, item: Schema) => string | Buffer): Steps<V2Pieces> {
  const definitions: Array<[string, string | Buffer]> = [];
  const paths: Array<[string, string | Buffer]> = [];
  let n = 0;
  for (const [name, schema] of f.v2Definitions) {
    definitions.push([name, definition(name, schema)]);
    if (++n % ENTRIES_PER_STEP === 0) yield;
  }
  for (const [p, item] of f.v2Paths) {
    paths.push([p, path(p, item)]);
    if (++n % ENTRIES_PER_STEP === 0) yield;
  }
  const [defs, items] = arenaMaps([definitions, paths]);
  return { definitions: defs, paths: items };
}

const COMMA = Buffer.from(',');

/** Bytes copied, or pieces listed, between two pauses of a document's assembly. */
const STEP_BYTES = 4 * 1024 * 1024;
const PIECES_PER_STEP = 20_000;

/**
 * Buffer.concat in steps: a pause after every few MiB copied, so that joining a document of hundreds of MiB (10,000
 * CRDs) is many short copies between other requests, not one.
 */
export function* concatInSteps(parts: readonly Buffer[]): Steps<Buffer> {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = Buffer.allocUnsafeSlow(total);
  let at = 0;
  let copied = 0;
  for (const p of parts) {
    p.copy(out, at);
    at += p.length;
    copied += p.length;
    if (copied >= STEP_BYTES) {
      copied = 0;
      yield;
    }
  }
  return out;
}

/** Assembles a document from literal text and pieces, in steps (`yield*` the calls that take them). */
export class DocumentBuilder {
  private readonly out: Buffer[] = [];

  literal(text: string): this {
    this.out.push(Buffer.from(text));
    return this;
  }

  /** Pieces, comma-separated when `separated` (JSON members). */
  *pieces(list: readonly Piece[], separated: boolean): Steps<void> {
    for (let i = 0; i < list.length; i++) {
      if (separated && i) this.out.push(COMMA);
      this.out.push(list[i].bytes);
      if (i % PIECES_PER_STEP === PIECES_PER_STEP - 1) yield;
    }
  }

  /** The concatenated document. */
  finish(): Steps<Buffer> {
    return concatInSteps(this.out);
  }
}

/** Entries looked at, sorted or merged between two pauses of sortingEntries. */
const ENTRIES_PER_SORT_STEP = 16_384;

const byKey = <T>([a]: [string, T], [b]: [string, T]) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Entries by key, sorted as Go sorts map keys, the first source of a key winning; in steps: the entries of a
 * document of 10,000 CRDs (300,000 paths) are sorted in runs, then the
 * runs merged two by two, with a pause every ENTRIES_PER_SORT_STEP entries (one sort of them all held the loop).
 */
export function* sortingEntries<T>(sources: Iterable<[string, T]>): Steps<[string, T][]> {
  const owner = new Map<string, T>();
  let n = 0;
  for (const [k, v] of sources) {
    if (!owner.has(k)) owner.set(k, v);
    if (++n % ENTRIES_PER_SORT_STEP === 0) yield;
  }
  const all = [...owner];
  if (all.length <= ENTRIES_PER_SORT_STEP) return all.sort(byKey);
  let runs: [string, T][][] = [];
  for (let i = 0; i < all.length; i += ENTRIES_PER_SORT_STEP) {
    yield;
    runs.push(all.slice(i, i + ENTRIES_PER_SORT_STEP).sort(byKey));
  }
  while (runs.length > 1) {
    const next: [string, T][][] = [];
    for (let i = 0; i < runs.length; i += 2) next.push(i + 1 < runs.length ? yield* merging(runs[i], runs[i + 1]) : runs[i]);
    runs = next;
  }
  return runs[0];
}

/** Two sorted runs (of distinct keys) as one, in steps. */
function* merging<T>(a: [string, T][], b: [string, T][]): Steps<[string, T][]> {
  const out = new Array<[string, T]>(a.length + b.length);
  let i = 0;
  let j = 0;
  for (let k = 0; k < out.length; k++) {
    out[k] = j >= b.length || (i < a.length && a[i][0] < b[j][0]) ? a[i++] : b[j++];
    if (k % ENTRIES_PER_SORT_STEP === ENTRIES_PER_SORT_STEP - 1) yield;
  }
  return out;
}
