/**
 * OpenAPI publishing, incrementally: each CRD (and the set of built-ins) is a
 * Source whose fragment is rebuilt and serialized (lazily, on the next request
 * for each form) only when that CRD changes. A request after a change assembles the document
 * from the cached pieces of every source: `/openapi/v2` (JSON or gnostic protobuf), `/openapi/v3` (the
 * discovery document, each group-version's URL carrying its ETag as hash) and
 * `/openapi/v3/<api|apis/group>/<version>`.
 */
import type { CustomResourceDefinitionV1 } from '../api/apiextensions.js';
import { aggregatedFragment, type BackendPart } from './aggregated.js';
import { buildingBuiltinFragment, crdFragment, crdSupportSchemas, type BuiltinResource, type Fragment } from './fragments.js';
import { noSteps, runSteps, runStepsInTurns, type Steps } from '../util/turns.js';
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { KUBERNETES_VERSION } from '../api/version.js';
import { stringifyJson } from '../machinery/json.js';
import { acceptsGzip, computeETag, negotiate, notAcceptable, notFound, notModifiedByETag, Representation, serveRepresentation, type Headers, type OpenApiResponse } from './http.js';
import { concatInSteps, DocumentBuilder, jsonEntry, piece, sortingEntries, Source, type Piece, type SourceForm } from './pieces.js';
import type { Schema } from './schema-types.js';
import { encodeDocument, namedEntry, writeParameter } from './protobuf.js';
import { shareableParameters } from './parameters.js';
import { v3Parameter, type RouteOptions } from './routes.js';
import { SharedParameters } from './shared-parameters.js';

/** An aggregated APIService's share of the documents: its paths and definitions, and where its v3 document is. */
export interface AggregatedShare {
  /** `apis/<group>/<version>` */
  groupVersion: string;
  /** Its part of the backend's /openapi/v2 (none: the backend publishes none). */
  v2?: BackendPart;
  /** The backend's serverRelativeURL of its v3 document (requests for it go to the backend). */
  v3URL?: string;
  /** A backend without v3 documents: its group-version's document made here from its v2 share (served here). */
  v3Converted?: Buffer;
  /** The APIService's groupPriorityMinimum and versionPriority: the share of the higher group keeps a contested definition name. */
  priority?: [number, number];
}

export interface OpenApiPublisherOptions {
  /** info.version of the documents (the server's version). */
  version?: string;
  /** Publish the fieldValidation query parameter (only if the server implements it). */
  fieldValidation?: boolean;
  /** The clock, for Last-Modified and v3 Expires (tests). */
  now?: () => Date;
  /** How many v3 group-version documents to keep serialized (their ETags are always kept). */
  v3CacheSize?: number;
}

const V2_OFFERS = ['application/json', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'];
const SECURITY_DEFINITIONS = '"securityDefinitions":{"BearerToken":{"description":"Bearer Token authentication","type":"apiKey","name":"authorization","in":"header"}},"security":[{"BearerToken":[]}]';
const V3_SECURITY = '"securitySchemes":{"BearerToken":{"type":"apiKey","description":"Bearer Token authentication","name":"authorization","in":"header"}}},"security":[{"BearerToken":[]}]';

export class OpenApiPublisher {
  private readonly shared = new SharedParameters();
  private readonly routeOpts: RouteOptions;
  private readonly version: string;
  private readonly now: () => Date;
  private readonly v3CacheSize: number;
  private builtins: Source;
  private readonly crds = new Map<string, Source>();
  /** Aggregated APIServices' shares, by APIService name, and the sources made of them (after the local ones). */
  private readonly aggregated = new Map<string, AggregatedShare>();
  private aggregatedSources: Source[] | undefined;
  /** A digest of each aggregated share, by APIService name (part of the v2 ETags). */
  private readonly shareDigests = new Map<string, Buffer>();
  private sorted: { generation: number; all: Source[]; byGroupVersion: Map<string, Source[]> } | undefined;
  private v2Etags: { generation: number; json: string; protobuf: string } | undefined;
  private readonly converted = new WeakMap<AggregatedShare, Representation>();
  private v2Json: Representation | undefined;
  private v2Proto: Representation | undefined;
  private v3Discovery: Representation | undefined;
  private readonly v3Etags = new Map<string, { etag: string; lastModified: Date }>();
  /** The ETags of group-versions a change dropped, for their Last-Modified when they come out the same. */
  private readonly previousV3Etags = new Map<string, { etag: string; lastModified: Date }>();
  /** Serialized v3 documents, least recently used first. */
  private readonly v3Bodies = new Map<string, Representation>();
  private crdSupport: [string, Piece][] | undefined;
  private v3Params: Piece[] | undefined;
  /**
   * The documents clients asked for lately (v2 JSON, v2 protobuf, v3 group-versions), by what the next change
   * drops, with the request headers that chose the form: made again after each change, in the background.
   */
  private readonly inUse = new Map<string, { path: string; headers: Headers; at: number }>();
  private warmTimer: ReturnType<typeof setTimeout> | undefined;
  private warming: Promise<void> | undefined;
  private warmAgain = false;
  /** Documents being assembled in turns, by form (and group-version), with the generation they are of. */
  private readonly assembling = new Map<string, { generation: number; promise: Promise<Representation | undefined> }>();
  /** No pass starts before this (Date.now()): after a pass that kept the loop busy d ms, d ms go by. */
  private nextWarmAt = 0;
  private closed = false;
  /** Bumped on every change. */
  generation = 0;
  /** How many fragments have been built (after a change, one per form served: v2 JSON, v2 protobuf, v3). */
  fragmentBuilds = 0;

  constructor(opts: OpenApiPublisherOptions = {}) {
    this.version = opts.version ?? 'v1.32.0';
    this.routeOpts = { fieldValidation: opts.fieldValidation ?? false };
    this.now = opts.now ?? (() => new Date());
    this.v3CacheSize = opts.v3CacheSize ?? 32;
    // Registering every shareable parameter now keeps the shared set, and so each document, stable.
    for (const p of shareableParameters(this.routeOpts.fieldValidation ?? false)) this.shared.refFor(p);
    this.builtins = this.builtinSource([]);
  }

  /** Publishes (or republishes) a CRD in its stored v1 form; only established CRDs appear. */
  setCrd(crd: CustomResourceDefinitionV1): void {
    const name = crd.metadata?.name ?? '';
    const old = this.crds.get(name);
    const source = new Source((form) => this.crdFragment(crd, form), crdGroupVersions(crd), crdInputDigest(crd));
    // The CRD controller sets a CRD at every reconcile: the same input keeps the source (and its pieces) and the
    // documents, which a change would drop.
    if (old && old.inputDigest.equals(source.inputDigest) && old.groupVersions.join() === source.groupVersions.join()) return;
    this.crds.set(name, source);
    this.changed([...(old?.groupVersions ?? []), ...source.groupVersions]);
  }

  removeCrd(name: string): void {
    const old = this.crds.get(name);
    if (!old) return;
    this.crds.delete(name);
    this.changed(old.groupVersions);
  }

  /** The built-in resources served (replaces the previous set). */
  setBuiltins(resources: readonly BuiltinResource[]): void {
    this.builtins = this.builtinSource([...resources]);
    this.crdSupport = undefined;
    this.changed(undefined);
  }

  /** Publishes (or, with undefined, withdraws) an aggregated APIService's share. */
  setAggregated(name: string, share: AggregatedShare | undefined): void {
    if (share) {
      this.aggregated.set(name, share);
      const digest = createHash('sha512').update(`${name}\0${share.groupVersion}\0`).update(stringifyJson(share.v2 ?? null)).update('\0').update(share.v3URL ?? '');
      if (share.v3Converted) digest.update(share.v3Converted);
      this.shareDigests.set(name, digest.update(JSON.stringify(share.priority ?? null)).digest());
    } else if (this.aggregated.delete(name)) this.shareDigests.delete(name);
    else return;
    this.changed([]);
  }

  /**
   * Makes, a step per turn of the event loop, what `handle` will need for the path: the pieces of the form it
   * asks for (cold, the built-ins' take a few hundred milliseconds of work), so that `handle` then assembles the
   * document without holding the loop for long. Requests that come meanwhile share the work.
   */
  prepare(pathWithQuery: string, headers: Headers = {}): Promise<Representation | undefined> {
    return this.making(pathWithQuery, headers, true);
  }

  /** `prepare`, for a client's request (`asked`: it notes the document as in use) or the background's. */
  private async making(pathWithQuery: string, headers: Headers, asked: boolean): Promise<Representation | undefined> {
    const path = pathWithQuery.split('?')[0];
    let form: SourceForm;
    // A group-version's v3 document needs the sources of that group-version only.
    let gv: string | undefined;
    if (path === '/openapi/v2') {
      const accept = acceptOf(headers);
      const i = negotiate(accept, V2_OFFERS);
      if (i < 0) return;
      form = i === 0 ? 'json' : 'proto';
    } else if (path === '/openapi/v3') {
      // The index needs no document made: its hashes come from the sources' inputs.
      if (acceptsGzip(headers)) await this.v3DiscoveryRepresentation().gzip();
      return;
    } else if (path.startsWith('/openapi/v3/')) {
      form = 'v3';
      gv = path.slice('/openapi/v3/'.length);
      // Only a group-version that has a document is noted as in use (the paths asked for are not bounded).
      if (!this.sortedSources().byGroupVersion.has(gv)) return;
    } else return;
    if (asked) this.noteUse(gv === undefined ? `v2 ${form}` : `v3 ${gv}`, path, headers);
    // A client that has the document (If-None-Match): its ETag comes from the inputs, nothing to make.
    if (this.unchangedFor(path, headers)) return;
    // After a change the sources are other ones: prepared again until none is left to make.
    for (let pass = 0; pass < 3; pass++) {
      const generation = this.generation;
      for (const source of gv === undefined ? this.localSources() : (this.sortedSources().byGroupVersion.get(gv) ?? [])) {
        const pending = source.prepare(form);
        if (pending) await pending;
      }
      if (generation === this.generation) break;
    }
    // The document joined in turns too, then, for a client that takes gzip (Go's transport asks for it),
    // compressed on the thread pool, not here. `handle` serves this one, even if a change came meanwhile (the next
    // request gets the new one): making it again there would be one long step.
    const rep = await this.assembleInTurns(path, headers);
    if (rep && acceptsGzip(headers)) await rep.gzip();
    return rep;
  }

  /**
   * Notes that a client asked for a document (gzip too, if any of its clients takes it): a change then makes it
   * again in the background once changes settle, so that the next client is served at once. Documents nobody
   * asked for are not made; one not asked for in IN_USE_MS is no longer kept up.
   */
  private noteUse(key: string, path: string, headers: Headers): void {
    const before = this.inUse.get(key);
    const gzip = acceptsGzip(headers) || (before !== undefined && acceptsGzip(before.headers));
    this.inUse.delete(key);
    this.inUse.set(key, { path, headers: { accept: acceptOf(headers), 'accept-encoding': gzip ? 'gzip' : undefined }, at: this.now().getTime() });
    // The least recently asked for beyond the v3 documents kept serialized (and the two v2 forms) are let go.
    if (this.inUse.size > this.v3CacheSize + 2) this.inUse.delete(this.inUse.keys().next().value as string);
  }

  /**
   * After a change: the documents in use made again WARM_DELAY_MS after the last change, one pass at a time, and
   * no sooner after a pass than the time it kept the loop busy (changes that keep coming cost at most half of it).
   */
  private scheduleWarm(): void {
    if (this.closed || this.inUse.size === 0) return;
    clearTimeout(this.warmTimer);
    this.warmTimer = setTimeout(
      () => {
        this.warmTimer = undefined;
        if (this.warming) {
          this.warmAgain = true;
          return;
        }
        const started = performance.eventLoopUtilization();
        this.warming = this.warm().finally(() => {
          this.warming = undefined;
          // The loop's busy time during the pass (other requests' too): as long again goes by before the next.
          this.nextWarmAt = Date.now() + performance.eventLoopUtilization(started).active;
          if (this.warmAgain) {
            this.warmAgain = false;
            this.scheduleWarm();
          }
        });
      },
      Math.max(WARM_DELAY_MS, this.nextWarmAt - Date.now()),
    );
    this.warmTimer.unref?.();
  }

  /** Makes each document in use as its last request would have (in turns of the event loop, as `prepare` does). */
  private async warm(): Promise<void> {
    const now = this.now().getTime();
    for (const [key, use] of [...this.inUse]) {
      if (this.closed) return;
      if (now - use.at > IN_USE_MS) {
        this.inUse.delete(key);
        continue;
      }
      try {
        await this.making(use.path, use.headers, false);
      } catch {
        // The next request makes it (and answers the error).
      }
    }
  }

  /** Resolves once no pass is due or running (tests). */
  async warmed(): Promise<void> {
    while (this.warmTimer !== undefined || this.warming !== undefined) {
      if (this.warming) await this.warming;
      else await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Stops making documents in the background. */
  close(): void {
    this.closed = true;
    clearTimeout(this.warmTimer);
    this.warmTimer = undefined;
  }

  /**
   * Whether the request's If-None-Match names the current ETag of a document not yet made (v2, a v3 group-version):
   * then `handle` answers 304 from the inputs' ETag without making it.
   */
  private unchangedFor(path: string, headers: Headers): string | undefined {
    if (headers['if-none-match'] === undefined) return undefined;
    const accept = acceptOf(headers);
    let etag: string | undefined;
    if (path === '/openapi/v2') {
      const i = negotiate(accept, V2_OFFERS);
      if (i === 0 && !this.v2Json) etag = this.v2Etag('json');
      else if (i > 0 && !this.v2Proto) etag = this.v2Etag('protobuf');
    } else if (path.startsWith('/openapi/v3/')) {
      const gv = path.slice('/openapi/v3/'.length);
      if (!this.v3Bodies.has(gv)) etag = this.v3Etag(gv)?.etag;
    }
    return etag !== undefined && notModifiedByETag(headers, etag) ? etag : undefined;
  }

  /**
   * The response for an `/openapi/...` path (query included), or undefined for other paths.
   * Headers are the request's, lower-case (accept, accept-encoding, if-none-match, if-modified-since); `prepared`,
   * what `prepare` gave back for the same request.
   */
  handle(pathWithQuery: string, headers: Headers = {}, prepared?: Representation): OpenApiResponse | undefined {
    const q = pathWithQuery.indexOf('?');
    const path = q < 0 ? pathWithQuery : pathWithQuery.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : pathWithQuery.slice(q + 1));
    const accept = acceptOf(headers);
    const unchanged = this.unchangedFor(path, headers);
    if (unchanged) return { status: 304, headers: { Vary: 'Accept, Accept-Encoding', ETag: unchanged } };
    if (path === '/openapi/v2') {
      const i = negotiate(accept, V2_OFFERS);
      if (i < 0) return notAcceptable();
      // Go's mime parser in kubectl 1.20 rejects the '@' media type, so protobuf goes out as octet-stream.
      if (i === 0) return serveRepresentation(prepared ?? this.v2JsonRepresentation(), 'application/json', headers);
      return serveRepresentation(prepared ?? this.v2ProtoRepresentation(), 'application/octet-stream', headers);
    }
    if (path === '/openapi/v3') return serveRepresentation(this.v3DiscoveryRepresentation(), 'application/json', headers);
    if (!path.startsWith('/openapi/v3/')) return undefined;
    const gv = path.slice('/openapi/v3/'.length);
    const rep = prepared ?? this.v3Representation(gv);
    if (!rep) return notFound();
    if (negotiate(accept, ['application/json']) < 0) return notAcceptable();
    const etag = rep.etag.slice(1, -1);
    const hash = query.get('hash');
    if (!hash) return serveRepresentation(rep, 'application/json', headers);
    if (hash !== etag) return { status: 301, headers: { Location: serverRelativeURL(gv, etag), 'Content-Length': '0' }, body: Buffer.alloc(0) };
    const expires = new Date(this.now().getTime() + 365 * 24 * 3600 * 1000).toUTCString();
    return serveRepresentation(rep, 'application/json', headers, { 'Cache-Control': 'public, immutable', Expires: expires });
  }

  /** The /openapi/v2 document as JSON (assembled on demand from cached pieces, kept until the next change). */
  v2JsonRepresentation(): Representation {
    return (this.v2Json ??= runSteps(this.assemblingV2Json()));
  }

  private *assemblingV2Json(): Steps<Representation> {
    const etag = this.v2Etag('json');
    const b = new DocumentBuilder().literal(`{"swagger":"2.0","info":{"title":"Kubernetes","version":${JSON.stringify(this.version)}},"paths":{`);
    yield* b.pieces(yield* this.v2Entries((s) => s.v2Json().paths), true);
    yield;
    b.literal('},"definitions":{');
    yield* b.pieces(yield* this.v2Entries((s) => s.v2Json().definitions), true);
    b.literal('},"parameters":{');
    yield* b.pieces(this.sharedParameters().map(([n, p]) => jsonEntry(n, p)), true);
    b.literal('},' + SECURITY_DEFINITIONS + '}');
    return new Representation(yield* b.finish(), etag, this.now());
  }

  /** The /openapi/v2 document as gnostic protobuf. */
  v2ProtoRepresentation(): Representation {
    return (this.v2Proto ??= runSteps(this.assemblingV2Proto()));
  }

  private *assemblingV2Proto(): Steps<Representation> {
    const paths = yield* this.v2Entries((s) => s.v2Proto().paths);
    yield;
    const defs = yield* this.v2Entries((s) => s.v2Proto().definitions);
    const params = this.sharedParameters().map(([n, p]) => piece(namedEntry(1, n, (w) => writeParameter(w, p))));
    const etag = this.v2Etag('protobuf');
    const parts = encodeDocument(
      { title: 'Kubernetes', version: this.version },
      paths.map((p) => p.bytes),
      defs.map((p) => p.bytes),
      params.map((p) => p.bytes),
    );
    return new Representation(yield* concatInSteps(parts), etag, this.now());
  }

  /**
   * The representation of a path assembled in turns of the event loop (prepare), kept where the synchronous
   * accessors find it, unless a change came meanwhile (then they assemble the new one).
   */
  private async assembleInTurns(path: string, headers: Headers): Promise<Representation | undefined> {
    let key: string;
    let cached: Representation | undefined;
    let steps: () => Steps<Representation | undefined>;
    let keep: (rep: Representation) => void;
    if (path === '/openapi/v2') {
      const i = negotiate(acceptOf(headers), V2_OFFERS);
      if (i < 0) return undefined;
      if (i === 0) {
        [key, cached, steps, keep] = ['v2 json', this.v2Json, () => this.assemblingV2Json(), (rep) => (this.v2Json ??= rep)];
      } else {
        [key, cached, steps, keep] = ['v2 proto', this.v2Proto, () => this.assemblingV2Proto(), (rep) => (this.v2Proto ??= rep)];
      }
    } else if (path.startsWith('/openapi/v3/')) {
      const gv = path.slice('/openapi/v3/'.length);
      key = `v3 ${gv}`;
      cached = this.v3Bodies.get(gv);
      steps = function* (this: OpenApiPublisher) {
        const built = yield* this.assemblingV3(gv);
        return built && new Representation(built.body, built.etag, built.lastModified);
      }.bind(this);
      keep = (rep) => this.keepV3(gv, rep);
    } else return undefined;
    if (cached) return cached;
    // Requests (and the background pass) that come meanwhile wait for the same assembly.
    const generation = this.generation;
    const running = this.assembling.get(key);
    if (running?.generation === generation) return running.promise;
    const promise = runStepsInTurns(steps()).then(
      (rep) => {
        if (this.assembling.get(key)?.promise === promise) this.assembling.delete(key);
        if (rep && generation === this.generation) keep(rep);
        return rep;
      },
      (err: unknown) => {
        if (this.assembling.get(key)?.promise === promise) this.assembling.delete(key);
        throw err;
      },
    );
    this.assembling.set(key, { generation, promise });
    return promise;
  }

  /** The /openapi/v3 discovery document: each group-version's document URL with its hash. */
  v3DiscoveryRepresentation(): Representation {
    if (this.v3Discovery) return this.v3Discovery;
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const gv of this.groupVersions()) {
      const e = this.v3Etag(gv);
      if (e) paths[gv] = { serverRelativeURL: serverRelativeURL(gv, e.etag.slice(1, -1)) };
    }
    // Aggregated group-versions: their backends' documents (fetched through the aggregator), local ones first.
    for (const share of this.aggregated.values()) {
      if (paths[share.groupVersion]) continue;
      if (share.v3URL) paths[share.groupVersion] = { serverRelativeURL: share.v3URL };
      else if (share.v3Converted) paths[share.groupVersion] = { serverRelativeURL: serverRelativeURL(share.groupVersion, this.convertedV3(share).etag.slice(1, -1)) };
    }
    const body = Buffer.from(JSON.stringify({ paths }));
    this.v3Discovery = new Representation(body, `"${computeETag(body)}"`, this.now());
    return this.v3Discovery;
  }

  /** The OpenAPI v3 document of one group-version (`api/v1`, `apis/<group>/<version>`), or undefined. */
  v3Representation(gv: string): Representation | undefined {
    const cached = this.v3Bodies.get(gv);
    if (cached) {
      this.v3Bodies.delete(gv);
      this.v3Bodies.set(gv, cached);
      return cached;
    }
    const built = runSteps(this.assemblingV3(gv));
    if (!built) {
      const share = [...this.aggregated.values()].find((a) => a.groupVersion === gv && a.v3Converted);
      return share ? this.convertedV3(share) : undefined;
    }
    return this.keepV3(gv, new Representation(built.body, built.etag, built.lastModified));
  }

  /** A v3 document kept serialized, the least recently used one dropped past the cache's size. */
  private keepV3(gv: string, rep: Representation): Representation {
    this.v3Bodies.set(gv, rep);
    while (this.v3Bodies.size > this.v3CacheSize) this.v3Bodies.delete(this.v3Bodies.keys().next().value as string);
    return rep;
  }

  /** A converted v3 document as served (made once per share). */
  private convertedV3(share: AggregatedShare): Representation {
    let rep = this.converted.get(share);
    if (!rep) {
      rep = new Representation(share.v3Converted!, `"${computeETag(share.v3Converted!)}"`, this.now());
      this.converted.set(share, rep);
    }
    return rep;
  }

  /** The group-versions with a v3 document, sorted. */
  groupVersions(): string[] {
    const set = new Set<string>(this.builtins.groupVersions);
    for (const s of this.crds.values()) for (const gv of s.groupVersions) set.add(gv);
    return [...set].sort();
  }

  /**
   * A group-version document's ETag, from the inputs of the sources that contribute to it (each source's digest,
   * the server's version, the publishing options and RENDERING) rather than from its bytes: the v3 index lists
   * every group-version's hash without making any document, and a change of one CRD changes its group-version's.
   */
  private v3Etag(gv: string): { etag: string; lastModified: Date } | undefined {
    const known = this.v3Etags.get(gv);
    if (known) return known;
    const sources = this.sortedSources().byGroupVersion.get(gv) ?? [];
    if (sources.length === 0) return undefined;
    const etag = this.inputsEtag(`v3 ${gv}`, sources.map((s) => s.inputDigest));
    // The same inputs again (a CRD's status changed, say): the document is the one it was, Last-Modified too.
    const before = this.previousV3Etags.get(gv);
    const entry = before?.etag === etag ? before : { etag, lastModified: this.now() };
    this.previousV3Etags.delete(gv);
    this.v3Etags.set(gv, entry);
    return entry;
  }

  /**
   * An ETag from what a document is made of: its sources' input digests (in a fixed order: the built-ins, then CRDs
   * by name, then aggregated shares by APIService name, so every replica gives the same), the server's version, the
   * publishing options and RENDERING. The document's bytes are not read: a change of one CRD changes it at once.
   */
  private inputsEtag(document: string, inputs: readonly Buffer[]): string {
    const hash = createHash('sha512').update(`${RENDERING}\0${this.version}\0${KUBERNETES_VERSION.gitVersion}\0${this.routeOpts.fieldValidation ? 1 : 0}\0${document}`);
    for (const d of inputs) hash.update(d);
    return `"${hash.digest('hex').toUpperCase()}"`;
  }

  /** The built-ins, then the CRDs by name, and those of each group-version (memoized until the next change). */
  private localSources(): Source[] {
    return this.sortedSources().all;
  }

  private sortedSources(): { generation: number; all: Source[]; byGroupVersion: Map<string, Source[]> } {
    if (this.sorted?.generation !== this.generation) {
      const crds = [...this.crds].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, src]) => src);
      const all = [this.builtins, ...crds];
      const byGroupVersion = new Map<string, Source[]>();
      for (const src of all) {
        for (const gv of src.groupVersions) {
          const list = byGroupVersion.get(gv);
          if (list) list.push(src);
          else byGroupVersion.set(gv, [src]);
        }
      }
      this.sorted = { generation: this.generation, all, byGroupVersion };
    }
    return this.sorted;
  }

  /** A v2 document's ETag: every local source's input, then every aggregated share's (made once per change). */
  private v2Etag(form: 'json' | 'protobuf'): string {
    if (this.v2Etags?.generation !== this.generation) {
      const shares = [...this.aggregated.keys()].sort().map((name) => this.shareDigests.get(name)!);
      const inputs = [...this.localSources().map((s) => s.inputDigest), ...shares];
      this.v2Etags = { generation: this.generation, json: this.inputsEtag('v2 json', inputs), protobuf: this.inputsEtag('v2 protobuf', inputs) };
    }
    return this.v2Etags[form];
  }

  /** A v3 group-version document from the pieces of the sources contributing to it. */
  private *assemblingV3(gv: string): Steps<{ etag: string; lastModified: Date; body: Buffer } | undefined> {
    const entry = this.v3Etag(gv);
    const sources = (this.sortedSources().byGroupVersion.get(gv) ?? []).filter((s) => s.v3().has(gv));
    if (!entry || sources.length === 0) return undefined;
    const schemas: [string, Piece][] = [];
    const paths: [string, Piece][] = [];
    let support = false;
    let n = 0;
    for (const src of sources) {
      if (++n % 1000 === 0) yield;
      const part = src.v3().get(gv)!;
      // The meta types CRDs refer to, before the first CRD's schemas (once: the first of a name wins).
      if (src !== this.builtins && !support) {
        support = true;
        schemas.push(...this.crdSupportPieces());
      }
      schemas.push(...part.schemas);
      paths.push(...part.paths);
    }
    const b = new DocumentBuilder().literal(`{"openapi":"3.0.0","info":{"title":"Kubernetes","version":${JSON.stringify(this.version)}},"paths":{`);
    yield* b.pieces((yield* sortingEntries(paths)).map(([, p]) => p), true);
    yield;
    b.literal('},"components":{"schemas":{');
    yield* b.pieces((yield* sortingEntries(schemas)).map(([, p]) => p), true);
    b.literal('},"parameters":{');
    yield* b.pieces(this.v3SharedParameters(), true);
    b.literal('},' + V3_SECURITY + '}');
    return { ...entry, body: yield* b.finish() };
  }

  private crdSupportPieces(): [string, Piece][] {
    this.crdSupport ??= [...crdSupportSchemas()].map(([n, s]) => [n, jsonEntry(n, s)]);
    return this.crdSupport;
  }

  private v3SharedParameters(): Piece[] {
    this.v3Params ??= [...this.shared.allParameters()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([n, p]) => jsonEntry(n, v3Parameter(p)));
    return this.v3Params;
  }

  private sharedParameters(): [string, Schema][] {
    return [...this.shared.all()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  private builtinSource(resources: readonly BuiltinResource[]): Source {
    const gvs = [...new Set(resources.map((r) => (r.group ? `apis/${r.group}/${r.version}` : `api/${r.version}`)))];
    return new Source(() => this.builtinFragment(resources), gvs, createHash('sha512').update(JSON.stringify(resources)).digest());
  }

  /** The built-ins' fragment, in steps. */
  private *builtinFragment(resources: readonly BuiltinResource[]): Steps<Fragment> {
    this.fragmentBuilds++;
    return yield* buildingBuiltinFragment(resources, this.shared, this.routeOpts);
  }

  /** A CRD's fragment (one step), only the parts of the form's document when given one. */
  private crdFragment(crd: CustomResourceDefinitionV1, form?: SourceForm): Steps<Fragment> {
    this.fragmentBuilds++;
    return noSteps(crdFragment(crd, this.shared, this.routeOpts, form === undefined ? undefined : form === 'v3' ? 'v3' : 'v2'));
  }

  /** Pieces of one kind across sources, built-ins first (they win conflicts), aggregated ones last, sorted by key. */
  private *v2Entries(pick: (s: Source) => Map<string, Piece>): Steps<Piece[]> {
    const all: [string, Piece][] = [];
    for (const src of [this.builtins, ...this.crds.values()]) all.push(...pick(src));
    for (const src of this.aggregatedV2Sources()) {
      try {
        all.push(...pick(src));
      } catch {
        // A backend's schema this form cannot hold (a description that is no string, for the protobuf form):
        // that share is left out of it, the document still served.
      }
    }
    return (yield* sortingEntries(all)).map(([, p]) => p);
  }

  /**
   * The aggregated shares as sources, made in turn: a definition whose name the local sources (or an earlier
   * share) publish with other content is renamed, as kube-aggregator's merge renames it.
   */
  private aggregatedV2Sources(): Source[] {
    if (this.aggregatedSources) return this.aggregatedSources;
    const earlier = new Map<string, unknown>();
    const sources: Source[] = [];
    // In kube-aggregator's order: by the highest groupPriorityMinimum of each one's group, then by name.
    const groupOf = (share: AggregatedShare) => share.groupVersion.split('/')[1] ?? '';
    const groupPriority = new Map<string, number>();
    for (const share of this.aggregated.values()) {
      const g = groupOf(share);
      groupPriority.set(g, Math.max(groupPriority.get(g) ?? 0, share.priority?.[0] ?? 0));
    }
    const ordered = [...this.aggregated].sort(([an, a], [bn, b]) => groupPriority.get(groupOf(b))! - groupPriority.get(groupOf(a))! || (an < bn ? -1 : an > bn ? 1 : 0));
    for (const [, share] of ordered) {
      if (!share.v2) continue;
      const fragment = aggregatedFragment(share.v2, (def) => this.localDefinition(def) ?? earlier.get(def));
      for (const [def, schema] of fragment.v2Definitions) if (!earlier.has(def)) earlier.set(def, schema);
      sources.push(new Source(() => noSteps(fragment), []));
    }
    this.aggregatedSources = sources;
    return sources;
  }

  /** A definition as the local sources (built-ins, CRDs) publish it, parsed from its piece. */
  private localDefinition(name: string): unknown {
    for (const src of [this.builtins, ...this.crds.values()]) {
      const p = src.v2Json().definitions.get(name);
      if (p) return (JSON.parse(`{${p.bytes.toString('utf8')}}`) as Record<string, unknown>)[name];
    }
    return undefined;
  }

  /** Drops what a change invalidates: the v2 documents and the affected v3 documents (all when undefined). */
  private changed(groupVersions: readonly string[] | undefined): void {
    this.generation++;
    this.aggregatedSources = undefined;
    this.v2Json = undefined;
    this.v2Proto = undefined;
    this.v3Discovery = undefined;
    // Group-versions that went away leave theirs behind: bounded, at the cost of Last-Modified continuity.
    if (this.previousV3Etags.size > 1000 + this.v3Etags.size) this.previousV3Etags.clear();
    for (const gv of groupVersions ?? [...this.v3Etags.keys()]) {
      const known = this.v3Etags.get(gv);
      if (known) this.previousV3Etags.set(gv, known);
      this.v3Etags.delete(gv);
    }
    if (groupVersions === undefined) this.v3Bodies.clear();
    else for (const gv of groupVersions) this.v3Bodies.delete(gv);
    this.scheduleWarm();
  }
}

/** How long after the last change the documents in use are made again, and how long a document stays in use. */
const WARM_DELAY_MS = 1000;
const IN_USE_MS = 15 * 60_000;

/**
 * Part of every v3 ETag: bump it when what a source renders from the same input changes (a client that cached a
 * document by its hash, as kubectl does, then fetches it again).
 */
const RENDERING = 'v3-1';

/**
 * What a CRD's share of the documents is made from: its uid and generation (the spec's version), else its spec
 * itself, and the conditions the fragment reads (Established, NonStructuralSchema).
 */
function crdInputDigest(crd: CustomResourceDefinitionV1): Buffer {
  const m = crd.metadata ?? {};
  const id = m.uid && m.generation !== undefined ? `${m.uid}/${m.generation}` : stringifyJson(crd.spec ?? null);
  const conditions = ['Established', 'NonStructuralSchema'].map((type) => (crd.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True'));
  return createHash('sha512').update(`${m.name ?? ''}\0${id}\0${conditions.join()}`).digest();
}

/** The request's Accept header as one value. */
function acceptOf(headers: Headers): string | undefined {
  return Array.isArray(headers.accept) ? headers.accept.join(',') : headers.accept;
}

/** constructServerRelativeURL: `/openapi/v3/<gv>?hash=<etag>`. */
function serverRelativeURL(gv: string, etag: string): string {
  return `/openapi/v3/${gv}?hash=${encodeURIComponent(etag)}`;
}

/** The group-versions a CRD publishes v3 documents for (served versions of an established CRD). */
export function crdGroupVersions(crd: CustomResourceDefinitionV1): string[] {
  const spec = crd.spec;
  const established = (crd.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
  if (!spec?.group || !spec.names?.kind || !spec.names.plural || !established) return [];
  return (spec.versions ?? []).filter((v) => v.served && v.name).map((v) => `apis/${spec.group}/${v.name}`);
}

