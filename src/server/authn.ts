/**
 * Bearer-token authentication, as kube-apiserver's --token-auth-file: a static
 * CSV of `token,user,uid[,"group1,group2"]`, matched exactly against the token
 * in `Authorization: Bearer <token>`. Also the admin token kept in the data dir.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/private-files.js';
import type { UserInfo } from '../api/authentication.js';


export const ALL_AUTHENTICATED = 'system:authenticated';
const ALL_UNAUTHENTICATED = 'system:unauthenticated';
const ANONYMOUS = 'system:anonymous';

export interface ParseTokenFileOptions {
  /** Names the file in error messages, e.g. its path. */
  source?: string;
  /** Told about lines upstream only logs: empty tokens (skipped) and duplicates (the last wins). */
  onWarning?: (message: string) => void;
}

/**
 * Parses a static token file. Like upstream (Go's encoding/csv): fields may be
 * quoted, with "" for a quote, and a quoted field may span lines; a record
 * needs at least 3 columns and columns after the 4th are ignored. Unlike
 * upstream, lines starting with # and whitespace-only lines are skipped, and
 * groups are trimmed with empty ones dropped (upstream would keep "" or " g").
 */
export function parseTokenFile(text: string, opts: ParseTokenFileOptions = {}): Map<string, UserInfo> {
  const prefix = opts.source === undefined ? 'token file' : `token file '${opts.source}'`;
  const tokens = new Map<string, UserInfo>();
  for (const { line, fields } of csvRecords(text, prefix)) {
    if (fields.length < 3) {
      throw new Error(`${prefix}: line ${line}: must have at least 3 columns (token, user name, user uid), found ${fields.length}`);
    }
    const [token, name, uid, groupsField] = fields;
    if (token === '') {
      opts.onWarning?.(`empty token has been found in ${prefix}, line ${line}; skipped`);
      continue;
    }
    if (tokens.has(token)) opts.onWarning?.(`duplicate token has been found in ${prefix}, line ${line}; it replaces the earlier one`);
    const groups = groupsField === undefined ? [] : groupsField.split(',').map((g) => g.trim()).filter((g) => g !== '');
    tokens.set(token, { name, uid, groups });
  }
  return tokens;
}

/**
 * Go encoding/csv's reading rules (FieldsPerRecord -1, no lazy quotes), plus
 * comment and blank-line skipping. Errors use Go's texts.
 */
function* csvRecords(input: string, prefix: string): Generator<{ line: number; fields: string[] }> {
  const text = input.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const parseError = (startLine: number, at: number, what: string): Error => {
    const where = `line ${line}, column ${at - lineStart + 1}`;
    const record = startLine === line ? '' : `record on line ${startLine}; `;
    return new Error(`${prefix}: ${record}parse error on ${where}: ${what}`);
  };
  const nextLine = (newlineAt: number) => {
    line++;
    lineStart = newlineAt + 1;
  };

  while (i < text.length) {
    let eol = text.indexOf('\n', i);
    if (eol < 0) eol = text.length;
    if (text[i] === '#' || text.slice(i, eol).trim() === '') {
      i = eol + 1;
      nextLine(eol);
      continue;
    }

    const startLine = line;
    const fields: string[] = [];
    for (;;) {
      if (text[i] === '"') {
        let value = '';
        let pos = i + 1;
        for (;;) {
          const quote = text.indexOf('"', pos);
          const chunk = text.slice(pos, quote < 0 ? text.length : quote);
          for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', nl + 1)) nextLine(pos + nl);
          if (quote < 0) throw parseError(startLine, text.length, 'extraneous or missing " in quoted-field');
          value += chunk;
          pos = quote + 1;
          if (text[pos] === '"') {
            value += '"';
            pos++;
            continue;
          }
          break;
        }
        fields.push(value);
        if (text[pos] === ',') {
          i = pos + 1;
          continue;
        }
        if (pos < text.length && text[pos] !== '\n') throw parseError(startLine, pos, 'extraneous or missing " in quoted-field');
        i = pos;
      } else {
        let end = i;
        while (end < text.length && text[end] !== ',' && text[end] !== '\n') end++;
        const value = text.slice(i, end);
        const bare = value.indexOf('"');
        if (bare >= 0) throw parseError(startLine, i + bare, 'bare " in non-quoted-field');
        fields.push(value);
        if (text[end] === ',') {
          i = end + 1;
          continue;
        }
        i = end;
      }
      break;
    }
    // i is at the record's newline or the end of the text.
    if (i < text.length) nextLine(i);
    i++;
    yield { line: startLine, fields };
  }
}

/**
 * The bearer token of an Authorization header, as upstream's bearertoken authenticator reads it: a
 * header that is not `Bearer <token>`, or whose token is empty, presents no token (the request may
 * still be anonymous); one that presents a token must match it.
 */
export function bearerToken(authorizationHeader: string | undefined): string | undefined {
  const auth = authorizationHeader?.trim();
  if (!auth) return undefined;
  // Split on single spaces, as upstream: "Bearer  x" carries an empty token.
  const parts = auth.split(' ', 3);
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer' || parts[1] === '') return undefined;
  return parts[1];
}

/** The websocket subprotocol that carries a bearer token. */
export const WEBSOCKET_BEARER_PREFIX = 'base64url.bearer.authorization.k8s.io.';

/**
 * The bearer token a websocket client (a browser cannot set Authorization) sends as the subprotocol
 * `base64url.bearer.authorization.k8s.io.<token, unpadded base64url>`, as upstream's websocket protocol
 * authenticator reads it, only on a request to switch to websocket: 'invalid' (401) when it is given twice, is
 * not base64url of UTF-8, or is the only subprotocol (the server must have another to answer with).
 */
export function websocketBearerToken(headers: { connection?: string; upgrade?: string; 'sec-websocket-protocol'?: string | string[] }): string | 'invalid' | undefined {
  if (String(headers.upgrade ?? '').toLowerCase() !== 'websocket' || !/(^|,)\s*upgrade\s*(,|$)/i.test(String(headers.connection ?? ''))) return undefined;
  let token: string | undefined;
  let others = 0;
  for (const p of String(headers['sec-websocket-protocol'] ?? '').split(',')) {
    const entry = p.trim();
    if (!entry.startsWith(WEBSOCKET_BEARER_PREFIX)) {
      if (entry) others++;
      continue;
    }
    if (token !== undefined) return 'invalid';
    const encoded = entry.slice(WEBSOCKET_BEARER_PREFIX.length);
    if (!/^[A-Za-z0-9_-]*$/.test(encoded) || encoded.length % 4 === 1) return 'invalid';
    const bytes = Buffer.from(encoded, 'base64url');
    try {
      token = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return 'invalid';
    }
  }
  if (!token) return undefined;
  return others > 0 ? token : 'invalid';
}

/** Authenticates `Authorization: Bearer <token>` against a fixed set of tokens. */
export class TokenAuthenticator {
  private readonly tokens: Map<string, UserInfo>;

  constructor(tokens: Map<string, UserInfo>) {
    this.tokens = new Map(tokens);
  }

  /** The user the header's token belongs to, or undefined when there is no match (not an error: other authenticators may follow). */
  authenticate(authorizationHeader: string | undefined): UserInfo | undefined {
    const token = bearerToken(authorizationHeader);
    return token === undefined ? undefined : this.authenticateToken(token);
  }

  authenticateToken(token: string): UserInfo | undefined {
    const user = this.tokens.get(token);
    return user ? withAuthenticatedGroup(user) : undefined;
  }
}

/** The user of unauthenticated requests when anonymous requests are enabled (--anonymous-auth). */
export function anonymousUser(): UserInfo {
  return { name: ANONYMOUS, uid: '', groups: [ALL_UNAUTHENTICATED] };
}

/** What a TLS peer presented: nothing, a certificate the client CAs verify, or one they do not. */
export interface PeerSocket {
  authorized?: boolean;
  getPeerCertificate?(detailed?: boolean): { subject?: Record<string, string | string[]>; ext_key_usage?: string[] } | null | Record<string, never>;
}

const CLIENT_AUTH_USAGE = '1.3.6.1.5.5.7.3.2';

/**
 * X.509 client-certificate authentication, as upstream's x509 authenticator with CommonNameUserConversion:
 * a certificate verified by the client CAs (and usable for client authentication) is the user named by its
 * Common Name, in the groups of its Organizations. 'invalid': a certificate was presented and not verified.
 */
export function clientCertificateUser(socket: PeerSocket | null | undefined): UserInfo | 'invalid' | undefined {
  if (!socket) return undefined;
  // A connection's certificate does not change: it is read once, not on every request over it.
  let user: UserInfo | 'invalid' | undefined;
  if (peerUsers.has(socket)) user = peerUsers.get(socket);
  else peerUsers.set(socket, (user = readClientCertificate(socket)));
  // Each request its own copy: nothing a request does to its user reaches the next one's.
  return user === undefined || user === 'invalid' ? user : { ...user, groups: [...user.groups] };
}

const peerUsers = new WeakMap<object, UserInfo | 'invalid' | undefined>();

function readClientCertificate(socket: PeerSocket): UserInfo | 'invalid' | undefined {
  const cert = socket.getPeerCertificate?.();
  if (!cert || !cert.subject || Object.keys(cert).length === 0) return undefined;
  if (!socket.authorized) return 'invalid';
  if (cert.ext_key_usage && !cert.ext_key_usage.includes(CLIENT_AUTH_USAGE)) return 'invalid';
  const name = commonName(cert.subject.CN);
  if (!name) return undefined;
  const o = cert.subject.O;
  const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
  return withAuthenticatedGroup({ name, uid: '', groups });
}

/** A certificate's Common Name as Go reads a subject (pkix.Name): of several CN attributes, the last. */
export function commonName(cn: string | string[] | undefined): string | undefined {
  return Array.isArray(cn) ? cn[cn.length - 1] : cn;
}

/** A copy of user with system:authenticated added, as upstream's AuthenticatedGroupAdder does. */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  const groups = [...user.groups];
  const skip = user.name === ANONYMOUS || groups.includes(ALL_AUTHENTICATED) || groups.includes(ALL_UNAUTHENTICATED);
  if (!skip) groups.push(ALL_AUTHENTICATED);
  return { name: user.name, uid: user.uid, groups, ...(user.extra ? { extra: user.extra } : {}) };
}

/** The user the admin token authenticates as. */
export function adminUserInfo(): UserInfo {
  return { name: 'kapi-admin', uid: 'kapi-admin', groups: ['system:masters'] };
}

/**
 * The admin token in <dataDir>/admin.token, created on first use (32 random
 * bytes, base64url, mode 0600) and reused after. An empty file is replaced.
 */
export async function ensureAdminToken(dataDir: string): Promise<string> {
  const path = join(dataDir, 'admin.token');
  try {
    const existing = (await readFile(path, 'utf8')).trim();
    if (existing !== '') {
      // A hand-edited token must still fit in an Authorization header and a token file.
      if (!/^[\x21-\x7e]+$/.test(existing) || existing.includes(',') || existing.includes('"')) {
        throw new Error(`${path}: the token must be printable ASCII without spaces, commas or quotes`);
      }
      return existing;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const token = randomBytes(32).toString('base64url');
  await mkdir(dataDir, { recursive: true });
  await writeFileAtomic(path, `${token}\n`, 0o600);
  return token;
}
