/**
 * The way out of a resource request: an object (or list, or watch event object)
 * in the endpoint's version goes through the negotiated output conversion
 * (meta.k8s.io Table, PartialObjectMetadata, PartialObjectMetadataList; upstream's
 * doTransformObject) and is then encoded by the negotiated serializer.
 *
 * Stored objects are shared and immutable: their plain JSON in a version is
 * remembered (json-memo.ts), so a hot object is encoded once for every reader.
 */
import { StatusError } from '../machinery/status.js';
import { stringifyJson } from '../machinery/json.js';
import { nextTurn } from '../util/turns.js';
import { encodeEnvelope } from '../machinery/protobuf/envelope.js';
import { encodeListOfMessages, hasListOfMessages, itemMessage } from '../machinery/protobuf/objects.js';
import { memoEncoded, memoJson } from '../registry/json-memo.js';
import type { Endpoint, ServedResource } from '../registry/registry.js';
import type { ListedItems } from '../registry/store.js';
import type { KObject } from '../api/object.js';
import { parseIncludeObject, partialObjectMetadata, tableForList, tableForObject, type TableOptions, type TableListMeta } from '../printing/index.js';
import type { Negotiated } from './negotiation.js';
import type { Response } from './exchange.js';
import { reportMismatch, type WatchEventType } from './serializers.js';
import { endInSlices, pacedWriter, writeListInSteps, writeSerialized } from './respond.js';
import { groupVersion } from './handlers/context.js';

/** What an output conversion needs of the request. */
export interface OutputTarget {
  endpoint: ServedResource;
  output: Negotiated;
  query: URLSearchParams;
}

/** A request for a stored resource's objects. */
export interface StoredTarget extends OutputTarget {
  endpoint: Endpoint;
}

export interface ListMeta {
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** optionsForTransform: a Table's options come from the query (a bad includeObject is a 400 before anything runs). */
export function tableOptionsOf(target: OutputTarget): TableOptions | undefined {
  const c = target.output.conversion;
  if (c?.kind !== 'Table') return undefined;
  return { version: c.version, includeObject: parseIncludeObject(target.query.get('includeObject')) };
}

function notAcceptable(message: string): StatusError {
  return new StatusError(406, 'NotAcceptable', message);
}

/** The Go type upstream names in its 406 texts (`%T` of the object it was given). */
function goType(endpoint: ServedResource, list: boolean): string {
  return endpoint.scope.goType(list);
}

/** One object in the endpoint's version, converted as negotiated. */
export function convertObject(target: OutputTarget, obj: KObject, table = tableOptionsOf(target)): unknown {
  const c = target.output.conversion;
  if (!c) return obj;
  switch (c.kind) {
    case 'Table':
      return tableForObject(target.endpoint.table!, obj, table);
    case 'PartialObjectMetadata':
      return partialObjectMetadata(obj, c.version);
    case 'PartialObjectMetadataList':
      throw notAcceptable(`you requested PartialObjectMetadataList, but the requested object is not a list (${goType(target.endpoint, false)})`);
  }
}

/** A list of objects in the endpoint's version, converted as negotiated; undefined when there is no conversion. */
export function convertList(target: OutputTarget, items: readonly KObject[], meta: ListMeta): unknown {
  const c = target.output.conversion;
  if (!c) return undefined;
  switch (c.kind) {
    case 'Table':
      return tableForList(target.endpoint.table!, items, meta as TableListMeta, tableOptionsOf(target));
    case 'PartialObjectMetadata':
      throw notAcceptable(`you requested PartialObjectMetadata, but the requested object is a list (${goType(target.endpoint, true)})`);
    case 'PartialObjectMetadataList': {
      const metadata: Record<string, unknown> = {};
      if (meta.resourceVersion) metadata.resourceVersion = meta.resourceVersion;
      if (meta.continue) metadata.continue = meta.continue;
      if (meta.remainingItemCount !== undefined && meta.remainingItemCount > 0) metadata.remainingItemCount = meta.remainingItemCount;
      return {
        kind: 'PartialObjectMetadataList',
        apiVersion: `meta.k8s.io/${c.version}`,
        metadata,
        items: items.map((o) => partialObjectMetadata(o, c.version)),
      };
    }
  }
}

/** Write a value in the negotiated serializer. */
export function writeEncoded(res: Response, code: number, value: unknown, output: Negotiated): void | Promise<void> {
  return writeSerialized(res, code, value, output.serializer, output.pretty);
}

/**
 * How this request answers with a shared object when that is compact JSON: a function giving its
 * JSON, remembered with the object (plain, or as PartialObjectMetadata for metadata-only clients).
 * Undefined where the answer is made anew (YAML, pretty, Tables).
 */
function rememberedJson(target: StoredTarget, list: boolean): ((obj: KObject) => Buffer) | undefined {
  const { output, endpoint } = target;
  if (output.serializer.name !== 'json' || output.pretty) return undefined;
  const c = output.conversion;
  // Remembered by group and version: one stored object may be served by two groups (core and events.k8s.io Events).
  const apiVersion = groupVersion(endpoint.group, endpoint.version);
  if (!c) return (obj) => memoJson(obj, apiVersion, endpoint.toVersion);
  if (c.kind !== (list ? 'PartialObjectMetadataList' : 'PartialObjectMetadata')) return undefined;
  const key = `${apiVersion}|PartialObjectMetadata|${c.version}`;
  return (obj) => memoJson(obj, key, (o) => partialObjectMetadata(endpoint.toVersion(o), c.version));
}

/**
 * A shared object's protobuf message (no envelope) in the endpoint's version, remembered with the
 * object like its JSON; undefined unless the answer is plain protobuf.
 */
function rememberedMessage(target: StoredTarget): ((obj: KObject) => Buffer) | undefined {
  const { output, endpoint } = target;
  if (output.serializer.name !== 'protobuf' || output.conversion) return undefined;
  const key = `${groupVersion(endpoint.group, endpoint.version)}|protobuf`;
  return (obj) => memoEncoded(obj, key, (o) => itemMessage(endpoint.toVersion(o), reportMismatch));
}

/** An object's PartialObjectMetadata message, for a protobuf PartialObjectMetadataList answer; else undefined. */
function partialMessage(target: StoredTarget): ((obj: KObject) => Buffer) | undefined {
  const { output, endpoint } = target;
  const c = output.conversion;
  if (output.serializer.name !== 'protobuf' || c?.kind !== 'PartialObjectMetadataList') return undefined;
  return (obj) => itemMessage(partialObjectMetadata(endpoint.toVersion(obj), c.version) as unknown as KObject, reportMismatch);
}

function envelopeOf(target: StoredTarget, message: Buffer): Buffer {
  const { endpoint } = target;
  return encodeEnvelope(endpoint.group ? `${endpoint.group}/${endpoint.version}` : endpoint.version, endpoint.names.kind, message);
}

/** A stored (shared) object, answered in the endpoint's version as negotiated. */
export function writeStoredObject(res: Response, code: number, obj: KObject, target: StoredTarget): void | Promise<void> {
  const json = rememberedJson(target, false)?.(obj);
  if (json) {
    res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': json.length });
    res.end(json);
    return;
  }
  const message = rememberedMessage(target)?.(obj);
  if (message) {
    const body = envelopeOf(target, message);
    res.writeHead(code, { 'Content-Type': target.output.serializer.mediaType, 'Content-Length': body.length });
    res.end(body);
    return;
  }
  return writeEncoded(res, code, convertObject(target, target.endpoint.toVersion(obj)), target.output);
}

/** An object made for this response (not shared), already in the endpoint's version. */
export function writeVersionedObject(res: Response, code: number, obj: KObject, target: OutputTarget): void | Promise<void> {
  return writeEncoded(res, code, convertObject(target, obj), target.output);
}

const LIST_END = Buffer.from(']}');

/** Items of a list encoded between two turns of the event loop (a few milliseconds when each must be decoded). */
const LIST_ITEMS_PER_TURN = 1000;
/** ... and at most about this much of their JSON (600 items of 250 KB made in one step held the loop 0.4 s). */
const LIST_BYTES_PER_TURN = 4 << 20;
/** A long list is written about this much at a time. */
const LIST_WRITE_BYTES = 1 << 20;

/**
 * A list's items made a turn's share at a time: up to 1,000 items, or 4 MiB of what `make` (which makes item i)
 * says it made. `next` makes one share (the first is made at once); `rest` the others, a turn of the loop before
 * each, and says false when the request was answered meanwhile (its timeout's 504) or its client went away.
 */
class Shares {
  done = 0;

  constructor(
    private readonly count: number,
    private readonly make: (i: number) => number,
  ) {}

  next(): void {
    const from = this.done;
    for (let bytes = 0; this.done < this.count && this.done - from < LIST_ITEMS_PER_TURN && bytes < LIST_BYTES_PER_TURN; this.done++) bytes += this.make(this.done);
  }

  async rest(res: Response): Promise<boolean> {
    while (this.done < this.count) {
      await nextTurn();
      if (res.destroyed || res.headersSent) return false;
      this.next();
    }
    return true;
  }
}

function isArray(listed: readonly KObject[] | ListedItems): listed is readonly KObject[] {
  return Array.isArray(listed);
}

/**
 * A list of stored objects. `head` is the list object without its items; plain
 * JSON is assembled from each item's remembered JSON.
 */
export function writeStoredList(res: Response, code: number, head: KObject, listed: readonly KObject[] | ListedItems, meta: ListMeta, target: StoredTarget): void | Promise<void> {
  const { endpoint, output } = target;
  const itemJson = rememberedJson(target, true);
  // A typed list's items have no apiVersion and kind (Go's nested TypeMeta is empty); unstructured ones keep theirs.
  const bare = endpoint.scope.bareListItems && !output.conversion;
  if (itemJson) {
    // The JSON of items the cache keeps as text, in the endpoint's own version, is that text: none is decoded.
    const version = output.conversion || isArray(listed) ? undefined : groupVersion(endpoint.group, endpoint.version);
    const object = isArray(listed) ? (i: number) => listed[i] : (i: number) => listed.object(i);
    const listHead = output.conversion ? (convertList(target, [], meta) as KObject) : { ...head, items: [] };
    const start = Buffer.from(stringifyJson(listHead).slice(0, -2));
    const prefix = bare ? typeMetaPrefix(endpoint) : undefined;
    // Each item's remembered JSON (or the cache's text of it: written into the body as it is, a Buffer each
    // would be a million allocations outside the heap for a million items), and how many of its bytes to leave
    // out (a typed item's type prefix, ASCII).
    const count = listed.length;
    const jsons: Array<Buffer | string> = new Array(count);
    const skips: number[] = new Array(count);
    // Each item's bytes as written: its JSON less the skipped type prefix (`{` written instead).
    const sizes: number[] = new Array(count);
    /** Item i's JSON (made, when the cache keeps no text of it) and size. */
    const encode = (i: number) => {
      let json: Buffer | string = (version !== undefined ? (listed as ListedItems).servedJson(i, version, endpoint.names.kind) : undefined) ?? itemJson(object(i));
      let skip = 0;
      if (prefix) {
        if (startsWithTypeMeta(json, prefix)) skip = byteAt(json, prefix.length) === 0x2c ? prefix.length + 1 : prefix.length;
        else json = Buffer.from(stringifyJson(withoutTypeMeta(endpoint.toVersion(object(i)))));
      }
      jsons[i] = json;
      skips[i] = skip;
      sizes[i] = (typeof json === 'string' ? Buffer.byteLength(json) : json.length) - skip + (skip > 0 ? 1 : 0);
    };
    /** Items [from, to) as written (after `start` for the first, `]}` after the last). */
    const chunk = (from: number, to: number): Buffer => {
      let size = (from === 0 ? start.length : 0) + (to === count ? LIST_END.length : 0);
      for (let i = from; i < to; i++) size += sizes[i] + (i > 0 ? 1 : 0);
      const out = Buffer.allocUnsafe(size);
      let off = from === 0 ? start.copy(out, 0) : 0;
      for (let i = from; i < to; i++) {
        if (i > 0) out[off++] = 0x2c;
        if (skips[i] > 0) out[off++] = 0x7b;
        const json = jsons[i];
        off += typeof json === 'string' ? out.write(skips[i] > 0 ? json.slice(skips[i]) : json, off) : json.copy(out, off, skips[i]);
      }
      if (to === count) LIST_END.copy(out, off);
      return out;
    };
    let total = start.length + LIST_END.length + count - 1;
    const shares = new Shares(count, (i) => {
      encode(i);
      total += sizes[i];
      return sizes[i];
    });
    shares.next();
    if (shares.done === count && total <= LIST_BYTES_PER_TURN) {
      const body = chunk(0, count);
      res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': body.length });
      res.end(body);
      return;
    }
    // A large list (its items may have to be decoded: those the cache keeps as stored values) is encoded, then
    // written, a share per turn of the event loop, serving other requests between.
    return (async () => {
      if (!(await shares.rest(res))) return;
      res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': total });
      // At the client's pace, about a megabyte a write: a list of a million objects (600 MiB) is not buffered
      // whole for a slow one, nor made in one piece.
      const out = pacedWriter(res);
      for (let from = 0; from < count; ) {
        if (res.destroyed) return;
        let to = from;
        for (let bytes = 0; to < count && to - from < LIST_ITEMS_PER_TURN && bytes < LIST_WRITE_BYTES; to++) bytes += sizes[to];
        if (to === count) res.end(chunk(from, to));
        else await out.write(chunk(from, to));
        from = to;
      }
    })();
  }
  const object = isArray(listed) ? (i: number) => listed[i] : (i: number) => listed.object(i);
  const count = listed.length;
  const messages = rememberedMessage(target) ?? partialMessage(target);
  // Protobuf: each item's message (remembered per object), then the list around them; the kind's list must have one.
  // Metadata-only (client-go's metadata informers, kube-controller-manager's among them) the same way.
  const protoHead = output.conversion ? (convertList(target, [], meta) as KObject) : head;
  if (messages && hasListOfMessages(protoHead)) {
    const all = new Array<Buffer>(count);
    const send = () => {
      const list = encodeListOfMessages(protoHead, all, reportMismatch)!;
      res.writeHead(code, { 'Content-Type': output.serializer.mediaType, 'Content-Length': list.length });
      return endInSlices(res, list);
    };
    // A large list (its items may have to be decoded first) a share of items per turn of the event loop.
    const shares = new Shares(count, (i) => (all[i] = messages(object(i))).length);
    shares.next();
    if (shares.done === count) return send();
    return shares.rest(res).then((whole) => (whole ? send() : undefined));
  }
  const versioned = (from: number, to: number) => {
    const items = new Array<KObject>(to - from);
    for (let i = from; i < to; i++) items[i - from] = bare ? withoutTypeMeta(endpoint.toVersion(object(i))) : endpoint.toVersion(object(i));
    return items;
  };
  const listOf = (from: number, to: number) => {
    const items = versioned(from, to);
    return (convertList(target, items, meta) as Record<string, unknown> | undefined) ?? { ...head, items };
  };
  // A Table, YAML or pretty list of many objects: a batch of items per turn, sent as it is made.
  if (count > LIST_ITEMS_PER_TURN && output.serializer.name !== 'protobuf') {
    return writeListInSteps(res, code, count, output.conversion?.kind === 'Table' ? 'rows' : 'items', listOf, output.serializer, output.pretty);
  }
  return writeEncoded(res, code, listOf(0, count), output);
}

/**
 * `{"kind":"<Kind>","apiVersion":"<group/version>"`: how a typed object's JSON starts (Go's field order,
 * which decoding gives written objects), so a list can leave the pair out without parsing.
 */
function typeMetaPrefix(endpoint: Endpoint): Buffer {
  const apiVersion = endpoint.group ? `${endpoint.group}/${endpoint.version}` : endpoint.version;
  return Buffer.from(`{"kind":${JSON.stringify(endpoint.names.kind)},"apiVersion":${JSON.stringify(apiVersion)}`);
}

/** Whether `json` starts with the type prefix (ASCII) followed by `,` or `}` (compared here: cheaper than a native call). */
function startsWithTypeMeta(json: Buffer | string, prefix: Buffer): boolean {
  const n = prefix.length;
  if (json.length <= n || (byteAt(json, n) !== 0x2c && byteAt(json, n) !== 0x7d)) return false;
  for (let i = 0; i < n; i++) if (byteAt(json, i) !== prefix[i]) return false;
  return true;
}

/** The byte at `i` of a Buffer, or the code unit of a string (the same for the ASCII compared). */
function byteAt(json: Buffer | string, i: number): number {
  return typeof json === 'string' ? json.charCodeAt(i) : json[i];
}

function withoutTypeMeta(obj: KObject): KObject {
  const { kind: _k, apiVersion: _a, ...rest } = obj;
  return rest as KObject;
}

/**
 * The object of each event of one watch, converted and encoded: plain JSON is
 * shared by every watcher of the version through the event's memo; a Table
 * carries its column definitions in the first event only.
 */
export class WatchObjectEncoder {
  private readonly table?: TableOptions;
  private headersSent = false;
  private readonly keyBase: string;

  private readonly remembered?: (obj: KObject) => Buffer;
  private readonly messages?: (obj: KObject) => Buffer;

  constructor(private readonly target: StoredTarget) {
    this.table = tableOptionsOf(target);
    this.remembered = rememberedJson(target, false);
    this.messages = this.table ? undefined : rememberedMessage(target);
    const { output, endpoint } = target;
    const c = output.conversion;
    this.keyBase = `${endpoint.group}/${endpoint.version}|${output.serializer.name}${c ? `|${c.kind}|${c.version}` : ''}${this.table ? `|${this.table.includeObject}` : ''}`;
  }

  /** The key under which an event's framed line is remembered; undefined when it differs per watcher. */
  memoKey(type: WatchEventType): string {
    return this.table ? `${this.keyBase}|${type}|${this.headersSent}` : `${this.keyBase}|${type}`;
  }

  /** Called when a remembered line went out (a Table's next events leave the headers out). */
  sent(): void {
    this.headersSent = true;
  }

  encode(obj: KObject): string | Buffer {
    const { output } = this.target;
    if (this.remembered) return this.remembered(obj);
    if (this.messages) return envelopeOf(this.target, this.messages(obj));
    const versioned = this.target.endpoint.toVersion(obj);
    let value: unknown;
    if (this.table) {
      value = tableForObject(this.target.endpoint.table!, versioned, { ...this.table, noHeaders: this.headersSent });
      this.headersSent = true;
    } else {
      try {
        value = convertObject(this.target, versioned);
      } catch {
        // As upstream's watch encoder: an object the conversion refuses goes out as it is.
        value = versioned;
      }
    }
    return output.serializer.encode(value, false);
  }

  /** A bookmark's object (kind, apiVersion and resourceVersion only): as PartialObjectMetadata when that is asked, else as it is. */
  bookmark(obj: KObject): string | Buffer {
    const c = this.target.output.conversion;
    const value = c?.kind === 'PartialObjectMetadata' ? partialObjectMetadata(obj, c.version) : obj;
    return this.target.output.serializer.encode(value, false);
  }
}
