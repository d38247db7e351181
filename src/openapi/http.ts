/**
 * Serving published documents as kube-openapi's handlers do: Accept
 * negotiation (goautoneg's clause order), a strong ETag (a quoted SHA-512: of
 * what the document is made of for the published ones, of the bytes otherwise),
 * conditional requests (If-None-Match, else If-Modified-Since → 304, as
 * http.ServeContent), `Vary: Accept`, and gzip when the client accepts it.
 */
import { createHash } from 'node:crypto';
import { gzip as gzipAsync, gzipSync } from 'node:zlib';

export type Headers = Record<string, string | string[] | undefined>;

export interface OpenApiResponse {
  status: number;
  headers: Record<string, string>;
  body?: Buffer;
}

/** A serialized document with what conditional requests compare against. */
export class Representation {
  private gz: Buffer | undefined;
  private gzipping: Promise<void> | undefined;

  constructor(
    readonly body: Buffer,
    /** The quoted ETag. */
    readonly etag: string,
    readonly lastModified: Date,
  ) {}

  /** The gzipped body (made here, on the event loop, unless `gzip` made it first). */
  gzipped(): Buffer {
    this.gz ??= gzipSync(this.body, { level: GZIP_LEVEL });
    return this.gz;
  }

  /** Makes the gzipped body on the thread pool (a large document's compression would hold the loop); once. */
  gzip(): Promise<void> | undefined {
    if (this.gz || this.body.length < GZIP_MIN_SIZE) return undefined;
    this.gzipping ??= new Promise<void>((resolve) => {
      gzipAsync(this.body, { level: GZIP_LEVEL }, (err, out) => {
        if (!err) this.gz ??= out;
        resolve();
      });
    });
    return this.gzipping;
  }
}

const GZIP_LEVEL = 3;

/** computeETag: the upper-case hex SHA-512 of the data (unquoted). */
export function computeETag(data: Buffer): string {
  return createHash('sha512').update(data).digest('hex').toUpperCase();
}

interface Clause {
  type: string;
  subtype: string;
  q: number;
}

/** goautoneg.ParseAccept: clauses by q, then specific types before wildcards (stable otherwise). */
export function parseAccept(header: string | undefined): Clause[] {
  const text = header && header.trim() ? header : '*/*';
  const clauses: Clause[] = [];
  for (const part of text.split(',')) {
    const [mt, ...params] = part.split(';').map((s) => s.trim());
    if (!mt) continue;
    const slash = mt.indexOf('/');
    const type = slash < 0 ? mt : mt.slice(0, slash);
    const subtype = slash < 0 ? '*' : mt.slice(slash + 1);
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=').map((s) => s.trim());
      if (k === 'q' && v !== undefined && Number.isFinite(Number(v))) q = Number(v);
    }
    clauses.push({ type, subtype, q });
  }
  return clauses
    .map((c, i) => ({ c, i }))
    .sort((a, b) => b.c.q - a.c.q || wild(a.c.type) - wild(b.c.type) || wild(a.c.subtype) - wild(b.c.subtype) || a.i - b.i)
    .map((x) => x.c);
}

const wild = (s: string) => (s === '*' ? 1 : 0);

/** The index of the first offer (`type/subtype`) the Accept header's clauses select, or -1. */
export function negotiate(accept: string | undefined, offers: readonly string[]): number {
  for (const clause of parseAccept(accept)) {
    if (clause.q <= 0) continue;
    for (let i = 0; i < offers.length; i++) {
      const [type, subtype] = offers[i].split('/');
      if ((clause.type === type || clause.type === '*') && (clause.subtype === subtype || clause.subtype === '*')) return i;
    }
  }
  return -1;
}

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** Whether If-None-Match names the ETag (or `*`), as http.ServeContent compares them. */
export function notModifiedByETag(headers: Headers, etag: string): boolean {
  const inm = header(headers, 'if-none-match');
  if (inm === undefined) return false;
  if (inm.trim() === '*') return true;
  const strip = (t: string) => t.trim().replace(/^W\//, '');
  return inm.split(',').some((t) => strip(t) === strip(etag));
}

/** Whether http.ServeContent would answer 304 for these request headers. */
export function notModified(headers: Headers, etag: string, lastModified: Date): boolean {
  if (header(headers, 'if-none-match') !== undefined) return notModifiedByETag(headers, etag);
  const ims = header(headers, 'if-modified-since');
  if (ims) {
    const since = Date.parse(ims);
    if (!Number.isNaN(since)) return Math.floor(lastModified.getTime() / 1000) * 1000 <= since;
  }
  return false;
}

export function acceptsGzip(headers: Headers): boolean {
  const ae = header(headers, 'accept-encoding');
  if (!ae) return false;
  return ae.split(',').some((part) => {
    const [coding, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.find((p) => p.startsWith('q='));
    return !q || Number(q.slice(2)) > 0;
  });
}

/** Below this size gziphandler sends the body as it is. */
const GZIP_MIN_SIZE = 1400;

/** A 200 (or 304) for a representation, with its ETag, Last-Modified, Vary and optional gzip. */
export function serveRepresentation(rep: Representation, contentType: string, headers: Headers, extra: Record<string, string> = {}): OpenApiResponse {
  const h: Record<string, string> = {
    ...extra,
    Vary: 'Accept',
    ETag: rep.etag,
    'Last-Modified': rep.lastModified.toUTCString(),
  };
  const gzip = rep.body.length >= GZIP_MIN_SIZE && acceptsGzip(headers);
  if (rep.body.length >= GZIP_MIN_SIZE) h.Vary = 'Accept, Accept-Encoding';
  if (notModified(headers, rep.etag, rep.lastModified)) return { status: 304, headers: h };
  const body = gzip ? rep.gzipped() : rep.body;
  h['Content-Type'] = contentType;
  if (gzip) h['Content-Encoding'] = 'gzip';
  h['Content-Length'] = String(body.length);
  return { status: 200, headers: h, body };
}

export function notAcceptable(): OpenApiResponse {
  return { status: 406, headers: { Vary: 'Accept', 'Content-Length': '0' }, body: Buffer.alloc(0) };
}

/** Go's http.NotFoundHandler. */
export function notFound(): OpenApiResponse {
  const body = Buffer.from('404 page not found\n');
  return { status: 404, headers: { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Content-Length': String(body.length) }, body };
}
