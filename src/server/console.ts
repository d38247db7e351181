/**
 * The web console's server side, under `/console/` on the API's own port and TLS: its static files (a
 * single-page app built into `dist/console/`), and its sessions. The console holds no rights of its own: a session
 * is the bearer token its user signed in with, kept on the server behind an HttpOnly, SameSite=Strict cookie and
 * checked again on every request as any bearer token is (a token revoked since sign-in stops working). A request
 * counts as the session's only with the session's CSRF token in a header as well, which another site's page can
 * neither read nor send. The one-time sign-in link `kapi serve` prints carries a code (in the URL's fragment, which
 * browsers send to no server), good for one exchange within a few minutes.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { UserInfo } from '../api/authentication.js';
import { readBody } from './body.js';
import type { Request, Response } from './exchange.js';

export const CONSOLE_PREFIX = '/console';
/** `__Host-`: only this origin, Secure, path /, never a domain (another port's or subdomain's page cannot plant it). */
const COOKIE = '__Host-kapi-console';
export const CSRF_HEADER = 'x-kapi-csrf';
/** A session ends after this long without a request, and after MAX_AGE_MS in any case. */
const IDLE_MS = 60 * 60_000;
const MAX_AGE_MS = 12 * 60 * 60_000;
const CODE_TTL_MS = 5 * 60_000;
const MAX_SESSIONS = 10_000;
/** Sessions one token may hold: more push out its oldest, never other users'. */
const MAX_SESSIONS_PER_TOKEN = 20;
const MAX_CODES = 100;
/** Failed sign-ins (wrong tokens or codes) allowed per client address and window: then 429 until it passes. */
const MAX_FAILURES = 10;
const FAILURE_WINDOW_MS = 10_000;
const MAX_TRACKED_ADDRESSES = 4096;
/** A sign-in's body must arrive within this long. */
const BODY_DEADLINE_MS = 10_000;

interface Session {
  token: string;
  csrf: string;
  created: number;
  lastUsed: number;
}

/** Checks a bearer token as the server's authenticators do: the user it names, or undefined when it is not accepted. */
export type TokenCheck = (token: string) => Promise<UserInfo | undefined>;

/** The headers every console answer carries: no framing, no sniffing, no referrer, and only the console's own scripts. */
function securityHeaders(nonce?: string): Record<string, string> {
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self'${nonce ? ` 'nonce-${nonce}'` : ''}`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    'Content-Security-Policy': csp,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  };
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.map': 'application/json',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** Where the built console is: beside the bundle (dist/kapi.cjs → dist/console) or above the compiled module (dist/src/server → dist/console). */
function findAssets(): string | undefined {
  for (const rel of ['./console/', '../../console/', '../../../dist/console/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(`${dir}index.html`)) return dir;
  }
  return undefined;
}

export class ConsoleServer {
  private readonly sessions = new Map<string, Session>();
  private readonly codes = new Map<string, { token: string; expires: number }>();
  private readonly assets = new Map<string, Asset>();
  private readonly indexTemplate: string | undefined;
  /** Per client address: the times of its failed (or pending) sign-ins in the window. */
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly checkToken: TokenCheck,
    /** Where sign-ins are logged (who, from where, how). */
    private readonly log: (line: string) => void = () => {},
    assetDir: string | undefined = findAssets(),
  ) {
    if (!assetDir) return;
    this.indexTemplate = readFileSync(`${assetDir}index.html`, 'utf8');
    for (const name of ['app.js', 'app.css', 'favicon.svg']) {
      const file = `${assetDir}${name}`;
      if (!existsSync(file)) continue;
      const body = readFileSync(file);
      const ext = name.slice(name.lastIndexOf('.'));
      this.assets.set(name, { body, type: CONTENT_TYPES[ext] ?? 'application/octet-stream', etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
    }
  }

  /** Whether the console's files were found (built with `npm run build`). */
  get built(): boolean {
    return this.indexTemplate !== undefined;
  }

  /** A one-time sign-in link for `token`'s user: `<url>/console/#code=...`, good once within 5 minutes. */
  oneTimeLink(baseUrl: string, token: string): string {
    const now = Date.now();
    for (const [code, c] of this.codes) if (c.expires <= now) this.codes.delete(code);
    while (this.codes.size >= MAX_CODES) this.codes.delete(this.codes.keys().next().value!);
    const code = randomBytes(32).toString('base64url');
    this.codes.set(code, { token, expires: now + CODE_TTL_MS });
    return `${baseUrl}${CONSOLE_PREFIX}/#code=${code}`;
  }

  /**
   * The bearer token of the request's console session, when it has both the session's cookie and its CSRF
   * header, and comes from the console's own pages (a browser's Sec-Fetch-Site, when it says, is same-origin);
   * 'stale' when the request carries the CSRF header but no session it belongs to (expired, signed out: the
   * console's request gets a 401 and signs in again, never an anonymous answer); undefined: no console request.
   */
  sessionToken(headers: Request['headers']): string | 'stale' | undefined {
    const csrf = headers[CSRF_HEADER];
    if (csrf === undefined) return undefined;
    if (typeof csrf !== 'string' || csrf.length === 0 || csrf.length > 100) return 'stale';
    const site = headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin') return 'stale';
    const found = this.sessionOf(headers);
    if (!found || !sameText(found.session.csrf, csrf)) return 'stale';
    const now = Date.now();
    // Least recently used first out: a session in use moves to the end (once a minute at most).
    if (now - found.session.lastUsed > 60_000) {
      this.sessions.delete(found.id);
      this.sessions.set(found.id, found.session);
    }
    found.session.lastUsed = now;
    return found.session.token;
  }

  /** A request under /console: the app's files, and the session's sign-in, state and sign-out. */
  async handle(path: string, req: Request, res: Response): Promise<void> {
    const method = req.method ?? 'GET';
    if (path === CONSOLE_PREFIX) return redirect(res, `${CONSOLE_PREFIX}/`);
    if (path === `${CONSOLE_PREFIX}/session`) return this.session(method, req, res);
    if (method !== 'GET' && method !== 'HEAD') return answer(res, 405, { message: 'method not allowed' }, { Allow: 'GET, HEAD' });
    if (path === `${CONSOLE_PREFIX}/`) return this.index(res);
    const asset = this.assets.get(path.slice(CONSOLE_PREFIX.length + 1));
    if (!asset) return answer(res, 404, { message: 'not found' });
    if (req.headers['if-none-match'] === asset.etag) {
      res.writeHead(304, { ...securityHeaders(), ETag: asset.etag, 'Cache-Control': 'no-cache' });
      res.end();
      return;
    }
    res.writeHead(200, { ...securityHeaders(), 'Content-Type': asset.type, 'Content-Length': String(asset.body.length), ETag: asset.etag, 'Cache-Control': 'no-cache' });
    res.end(method === 'HEAD' ? undefined : asset.body);
  }

  private index(res: Response): void {
    if (!this.indexTemplate) {
      const text = 'The console is not built: run npm run build.\n';
      res.writeHead(503, { ...securityHeaders(), 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(Buffer.byteLength(text)) });
      res.end(text);
      return;
    }
    // A nonce per page for the editor's style elements (CodeMirror writes its styles at run time).
    const nonce = randomBytes(16).toString('base64');
    const body = Buffer.from(this.indexTemplate.replaceAll('{{nonce}}', nonce));
    res.writeHead(200, { ...securityHeaders(nonce), 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': String(body.length), 'Cache-Control': 'no-store' });
    res.end(body);
  }

  private async session(method: string, req: Request, res: Response): Promise<void> {
    if (method === 'GET') {
      // The page asks who it is signed in as (and its CSRF token): only a same-origin page can read the answer.
      const session = this.sessionOf(req.headers)?.session;
      if (!session || (req.headers['sec-fetch-site'] !== undefined && req.headers['sec-fetch-site'] !== 'same-origin')) return answer(res, 200, { signedIn: false });
      const user = await this.checkToken(session.token);
      if (!user) {
        this.dropSession(req.headers);
        return answer(res, 200, { signedIn: false, message: 'the session\'s token is no longer accepted' }, { 'Set-Cookie': clearCookie() });
      }
      return answer(res, 200, { signedIn: true, user: user.name, groups: user.groups, csrf: session.csrf });
    }
    if (method === 'DELETE') {
      const session = this.sessionOf(req.headers)?.session;
      const csrf = req.headers[CSRF_HEADER];
      if (session && typeof csrf === 'string' && sameText(session.csrf, csrf)) this.dropSession(req.headers);
      return answer(res, 200, { message: 'signed out' }, { 'Set-Cookie': clearCookie() });
    }
    if (method !== 'POST') return answer(res, 405, { message: 'method not allowed' }, { Allow: 'GET, POST, DELETE' });
    // A JSON body: a cross-site form cannot send one without the browser asking this server first (CORS), which it refuses.
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return answer(res, 415, { message: 'sign in with a JSON body' });
    if (req.headers['sec-fetch-site'] !== undefined && req.headers['sec-fetch-site'] !== 'same-origin') return answer(res, 403, { message: 'sign in from the console\'s own page' });
    const from = String(req.socket?.remoteAddress ?? '');
    if (this.tooManyFailures(from)) return answer(res, 429, { message: 'too many failed sign-ins: try again in a few seconds' }, { 'Retry-After': '10' });
    // Counted as failed until it succeeds: concurrent guesses all count.
    const attempt = this.recordFailure(from);
    let sent: { token?: unknown; code?: unknown };
    try {
      sent = JSON.parse((await withDeadline(readBody(req, res, 16 * 1024), BODY_DEADLINE_MS)).toString('utf8')) as typeof sent;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      return answer(res, typeof code === 'number' && code >= 400 && code < 500 ? code : 400, { message: err instanceof SyntaxError ? 'the body is not JSON' : (err as Error).message });
    }
    let token: string | undefined;
    const byCode = typeof sent?.code === 'string';
    if (byCode) {
      const entry = this.codes.get(sent.code as string);
      this.codes.delete(sent.code as string);
      if (entry && entry.expires > Date.now()) token = entry.token;
    } else if (typeof sent?.token === 'string' && sent.token.length > 0 && sent.token.length <= 16 * 1024) {
      token = sent.token.trim();
    }
    const user = token ? await this.checkToken(token) : undefined;
    if (!token || !user) {
      return answer(res, 401, { message: byCode ? 'this sign-in link was used already or has expired' : 'the token is not accepted' });
    }
    this.forgetFailure(from, attempt);
    // A sign-in replaces the session the browser had.
    const previous = this.sessionOf(req.headers);
    if (previous) this.sessions.delete(previous.id);
    const id = randomBytes(32).toString('base64url');
    const now = Date.now();
    this.prune(now);
    const own = [...this.sessions].filter(([, s]) => s.token === token);
    for (const [old] of own.slice(0, Math.max(0, own.length - MAX_SESSIONS_PER_TOKEN + 1))) this.sessions.delete(old);
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const session = { token, csrf: randomBytes(24).toString('base64url'), created: now, lastUsed: now };
    this.sessions.set(id, session);
    this.log(`kapi: console sign-in as ${JSON.stringify(user.name.slice(0, 256))} from ${JSON.stringify(from.slice(0, 64))} (${byCode ? 'one-time link' : 'token'})`);
    const cookie = `${COOKIE}=${id}; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=${MAX_AGE_MS / 1000}`;
    return answer(res, 200, { signedIn: true, user: user.name, groups: user.groups, csrf: session.csrf }, { 'Set-Cookie': cookie });
  }

  private tooManyFailures(from: string): boolean {
    const since = Date.now() - FAILURE_WINDOW_MS;
    const times = this.failures.get(from);
    if (!times) return false;
    const recent = times.filter((t) => t >= since);
    if (recent.length === 0) this.failures.delete(from);
    else this.failures.set(from, recent);
    return recent.length >= MAX_FAILURES;
  }

  private recordFailure(from: string): number {
    const now = Date.now();
    let times = this.failures.get(from);
    if (!times) {
      // The oldest address is forgotten first: the map stays bounded whoever knocks.
      if (this.failures.size >= MAX_TRACKED_ADDRESSES) this.failures.delete(this.failures.keys().next().value!);
      times = [];
      this.failures.set(from, times);
    }
    times.push(now);
    return now;
  }

  private forgetFailure(from: string, at: number): void {
    const times = this.failures.get(from);
    const i = times?.indexOf(at) ?? -1;
    if (times && i >= 0) times.splice(i, 1);
  }

  private sessionOf(headers: Request['headers']): { id: string; session: Session } | undefined {
    const id = cookieValue(headers.cookie, COOKIE);
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const now = Date.now();
    if (now - session.lastUsed > IDLE_MS || now - session.created > MAX_AGE_MS) {
      this.sessions.delete(id);
      return undefined;
    }
    return { id, session };
  }

  private dropSession(headers: Request['headers']): void {
    const found = this.sessionOf(headers);
    if (found) this.sessions.delete(found.id);
  }

  private prune(now: number): void {
    for (const [id, s] of this.sessions) {
      if (now - s.lastUsed > IDLE_MS || now - s.created > MAX_AGE_MS) this.sessions.delete(id);
    }
  }
}

/** The cookie pairs of the Cookie header(s) (HTTP/2 may send several). */
function cookiePairs(header: string | string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const part of (Array.isArray(header) ? header.join('; ') : header).split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.push([part.slice(0, eq).trim(), part.slice(eq + 1).trim()]);
  }
  return out;
}

/** A cookie's value; a name sent twice counts as not sent (one of them was planted). */
function cookieValue(header: string | string[] | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  const values = cookiePairs(header).filter(([k]) => k === name);
  return values.length === 1 ? values[0][1] : undefined;
}

/** The Cookie header without the console's cookie (for a request proxied to an aggregated server). */
export function withoutConsoleCookie(header: string | string[]): string | undefined {
  const kept = cookiePairs(header).filter(([k]) => k.toLowerCase() !== COOKIE.toLowerCase());
  return kept.length > 0 ? kept.map(([k, v]) => `${k}=${v}`).join('; ') : undefined;
}

/** Whether a Set-Cookie header sets the console's cookie (a proxied backend may not). */
export function setsConsoleCookie(setCookie: string): boolean {
  const eq = setCookie.indexOf('=');
  return eq > 0 && setCookie.slice(0, eq).trim().toLowerCase() === COOKIE.toLowerCase();
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('the sign-in\'s body did not arrive in time'), { code: 408 })), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function clearCookie(): string {
  return `${COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=0`;
}

function answer(res: Response, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { ...securityHeaders(), 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)), 'Cache-Control': 'no-store', ...headers });
  res.end(text);
}

function redirect(res: Response, location: string): void {
  res.writeHead(301, { ...securityHeaders(), Location: location, 'Content-Length': '0' });
  res.end();
}
