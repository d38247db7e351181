/**
 * Request-header authentication, as an extension API server behind kube-apiserver's aggregator does it: a
 * client certificate signed by the front proxy's CA (--requestheader-client-ca-file), whose Common Name is
 * one of --requestheader-allowed-names when that list is given, makes the request's user the one its headers
 * name: the first of --requestheader-username-headers that is set (X-Remote-User), the groups of
 * --requestheader-group-headers (X-Remote-Group, every value), the uid of --requestheader-uid-headers, and
 * extra values from the headers starting with a --requestheader-extra-headers-prefix (X-Remote-Extra-<key>,
 * the key unescaped and in lower case). Without a username header the authenticator has no opinion; a proxy
 * certificate whose name is not allowed is refused. The headers are removed once read.
 *
 * A certificate of the front proxy's CA (directly or through intermediates the client presents) is that
 * authenticator's alone: it never authenticates as its own Common Name, unless a chain of it also leads to a
 * users' CA (each authenticator verifies against its own CAs, as upstream's x509 verifiers do).
 */
import { X509Certificate } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { commonName } from './authn.js';
import type { UserInfo } from '../api/authentication.js';

export interface RequestHeaderConfig {
  /** The front proxy's CA certificates (PEM). */
  clientCAs: string[];
  allowedNames: string[];
  usernameHeaders: string[];
  uidHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

/** kube-apiserver's defaults for an extension server's request headers. */
export const REQUEST_HEADER_DEFAULTS = { usernameHeaders: ['X-Remote-User'], uidHeaders: [] as string[], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] };

export interface PeerCertificate {
  raw?: Buffer;
  fingerprint256?: string;
  subject?: { CN?: string | string[] };
  /** The next certificate of the chain the peer presented (getPeerCertificate(true)); itself at a root. */
  issuerCertificate?: PeerCertificate;
}

/** Which of some CAs signed a certificate, each certificate checked once. */
export class IssuerCheck {
  private readonly cas: X509Certificate[];
  /** By the certificate's fingerprint (each getPeerCertificate() call makes a new object); bounded. */
  private readonly known = new Map<string, boolean>();

  constructor(pems: string[]) {
    this.cas = pems.map((p) => new X509Certificate(p));
  }

  signed(cert: PeerCertificate | undefined): boolean {
    const raw = cert?.raw;
    if (!raw) return false;
    const key = cert.fingerprint256 ?? raw.toString('base64');
    const hit = this.known.get(key);
    if (hit !== undefined) return hit;
    let ok = false;
    try {
      const cert = new X509Certificate(raw);
      ok = this.cas.some((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey));
    } catch {
      ok = false;
    }
    if (this.known.size >= 4096) this.known.clear();
    this.known.set(key, ok);
    return ok;
  }

  /** Whether one of the CAs signed the certificate, directly or through the intermediates the peer presented. */
  signedChain(cert: PeerCertificate | undefined): boolean {
    let c = cert;
    for (let depth = 0; c?.raw && depth <= MAX_CHAIN; depth++) {
      if (this.signed(c)) return true;
      const up = c.issuerCertificate;
      if (!up?.raw || up === c || up.raw.equals(c.raw)) return false;
      try {
        const child = new X509Certificate(c.raw);
        const parent = new X509Certificate(up.raw);
        if (!parent.ca || !child.checkIssued(parent) || !child.verify(parent.publicKey)) return false;
      } catch {
        return false;
      }
      c = up;
    }
    return false;
  }
}

/** How many intermediates a presented chain may hold. */
const MAX_CHAIN = 8;

export class RequestHeaderAuthenticator {
  readonly issuer: IssuerCheck;
  private readonly usernames: string[];
  private readonly uids: string[];
  private readonly groups: string[];
  private readonly prefixes: string[];

  constructor(private readonly config: RequestHeaderConfig) {
    this.issuer = new IssuerCheck(config.clientCAs);
    const lower = (xs: string[]) => xs.map((x) => x.toLowerCase()).filter(Boolean);
    this.usernames = lower(config.usernameHeaders);
    this.uids = lower(config.uidHeaders);
    this.groups = lower(config.groupHeaders);
    this.prefixes = lower(config.extraHeaderPrefixes);
  }

  /**
   * The user the headers name, for a certificate a chain to the front proxy's CAs verified (`issuer.signedChain`)
   * (undefined: no username header: no opinion; 'invalid': a proxy certificate whose name is not allowed).
   */
  authenticate(cert: PeerCertificate | undefined, headers: IncomingHttpHeaders, distinct: Record<string, string[] | undefined>): UserInfo | 'invalid' | undefined {
    if (!cert?.raw) return undefined;
    const cn = commonName(cert.subject?.CN);
    if (this.config.allowedNames.length > 0 && !this.config.allowedNames.includes(cn ?? '')) return 'invalid';
    const values = (name: string): string[] => distinct[name] ?? [];
    const name = this.usernames.map((h) => values(h)[0]).find((v) => v !== undefined && v !== '');
    if (name === undefined) return undefined;
    const uid = this.uids.map((h) => values(h)[0]).find((v) => v !== undefined && v !== '') ?? '';
    // Empty group values are no groups; extra values are kept as sent (upstream's allHeaderValues and newExtra).
    const groups = this.groups.flatMap(values).filter((g) => g !== '');
    // Keys come from header names: no prototype to write into (`X-Remote-Extra-__proto__`).
    const extra = Object.create(null) as Record<string, string[]>;
    for (const header of Object.keys(distinct)) {
      const prefix = this.prefixes.find((p) => header.startsWith(p));
      if (!prefix) continue;
      (extra[unescapeExtraKey(header.slice(prefix.length))] ??= []).push(...values(header));
    }
    // The headers said what they had to say: nothing after authentication sees them.
    for (const h of [...this.usernames, ...this.uids, ...this.groups]) delete headers[h];
    for (const header of Object.keys(headers)) if (this.prefixes.some((p) => header.startsWith(p))) delete headers[header];
    return { name, uid, groups, ...(Object.keys(extra).length > 0 ? { extra } : {}) };
  }
}

/**
 * An extra key from a header name (already lower case), as Go's url.PathUnescape reads it: `%XX` escapes are
 * bytes of UTF-8; a malformed escape leaves the key as sent.
 */
export function unescapeExtraKey(encoded: string): string {
  if (!encoded.includes('%')) return encoded;
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded.charCodeAt(i);
    if (c !== 0x25) {
      bytes.push(c & 0xff);
      continue;
    }
    const hex = encoded.slice(i + 1, i + 3);
    if (!/^[0-9a-fA-F]{2}$/.test(hex)) return encoded;
    bytes.push(parseInt(hex, 16));
    i += 2;
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Each header's values apart (repeated X-Remote-Group lines), from what the request kept of them. */
export function distinctHeaders(req: { headers: IncomingHttpHeaders; headersDistinct?: Record<string, string[]>; rawHeaders?: string[] }): Record<string, string[]> {
  if (req.headersDistinct) return req.headersDistinct;
  const out: Record<string, string[]> = {};
  const raw = req.rawHeaders ?? [];
  if (raw.length > 0) {
    for (let i = 0; i + 1 < raw.length; i += 2) (out[raw[i].toLowerCase()] ??= []).push(raw[i + 1]);
    return out;
  }
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v : [v];
  return out;
}
