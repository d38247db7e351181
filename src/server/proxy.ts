/**
 * The aggregator's proxy, as kube-aggregator's: a request for an aggregated group-version goes, as it came
 * (method, path and query, body and the headers that describe it), to a backend address of the APIService's
 * Service over TLS (trusting its caBundle, or not checking with insecureSkipTLSVerify), with the front proxy's
 * client certificate and the authenticated user in X-Remote-User, X-Remote-Group and X-Remote-Extra-<key>
 * (the client's own credentials and impersonation headers are not passed on). The answer streams back as it
 * comes (watches included). A backend that is not available answers 503 `service unavailable`.
 */
import { CSRF_HEADER, setsConsoleCookie, withoutConsoleCookie } from './console.js';
import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { WEBSOCKET_BEARER_PREFIX } from './authn.js';
import type { UserInfo } from '../api/authentication.js';
import type { ProxyTarget } from '../api/serving.js';


export interface ProxyClientCertificate {
  cert: string;
  key: string;
}

/** Hop-by-hop headers and what only this server may say (credentials, impersonation, the proxy's own). */
const DROPPED = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'authorization', 'http2-settings']);

/**
 * Headers a response may not carry over HTTP/2: the hop-by-hop ones, and those its Connection header names. A
 * backend shares kapi's origin with the web console: it may not set the console's cookie, and what it answers as
 * HTML runs sandboxed (no script of it acts in the console's origin).
 */
function responseHeaders(incoming: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(String(incoming.connection ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean));
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(incoming)) if (v !== undefined && !DROPPED.has(k) && !named.has(k) && !k.startsWith(':')) out[k] = v;
  const cookies = out['set-cookie'];
  if (cookies !== undefined) {
    const kept = (Array.isArray(cookies) ? cookies : [String(cookies)]).filter((c) => !setsConsoleCookie(c));
    if (kept.length > 0) out['set-cookie'] = kept;
    else delete out['set-cookie'];
  }
  out['x-content-type-options'] = 'nosniff';
  if (/html|xml/i.test(String(out['content-type'] ?? ''))) out['content-security-policy'] = 'sandbox';
  return out;
}
const DROPPED_PREFIXES = ['impersonate-', 'x-remote-', ':'];


/** The headers sent to the backend: the client's (less credentials), and the user the aggregator authenticated. */
export function proxiedHeaders(incoming: IncomingHttpHeaders, user: UserInfo | undefined): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(incoming)) {
    const key = k.toLowerCase();
    if (v === undefined || DROPPED.has(key) || DROPPED_PREFIXES.some((p) => key.startsWith(p))) continue;
    out[key] = v;
  }
  // The web console's session is a credential of this server: its cookie and CSRF header stay here.
  delete out[CSRF_HEADER];
  if (out.cookie !== undefined) {
    const kept = withoutConsoleCookie(out.cookie as string | string[]);
    if (kept) out.cookie = kept;
    else delete out.cookie;
  }
  // A websocket client's bearer token rides in its subprotocols: never passed on either.
  const protocols = out['sec-websocket-protocol'];
  if (protocols !== undefined) {
    const kept = String(protocols).split(',').map((p) => p.trim()).filter((p) => p && !p.startsWith(WEBSOCKET_BEARER_PREFIX));
    if (kept.length > 0) out['sec-websocket-protocol'] = kept.join(', ');
    else delete out['sec-websocket-protocol'];
  }
  if (user) {
    out['x-remote-user'] = user.name;
    if (user.uid) out['x-remote-uid'] = user.uid;
    if (user.groups.length > 0) out['x-remote-group'] = [...user.groups];
    for (const [k, values] of Object.entries(user.extra ?? {})) out[`x-remote-extra-${escapeExtraKey(k)}`] = [...values];
  }
  return out;
}

/**
 * An extra key in a header name, as upstream's url.PathEscape writes it, but escaping every byte outside
 * letters, digits and `-._~` so that the name is a valid HTTP token whatever the key (`(`, `:`, `@`...).
 */
export function escapeExtraKey(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9._~-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The backend's answer piped to the client; resolves when the exchange is over (either side may end it). */
export function proxy(
  req: { on(event: string, fn: (...args: never[]) => void): unknown; method?: string; url?: string; headers: IncomingHttpHeaders },
  res: {
    writeHead(status: number, headers: OutgoingHttpHeaders): unknown;
    write(chunk: Buffer): boolean;
    end(body?: string): unknown;
    headersSent?: boolean;
    once(event: 'close' | 'drain', fn: () => void): unknown;
    destroy?(): unknown;
    flushHeaders?(): unknown;
  },
  target: ProxyTarget,
  client: ProxyClientCertificate | undefined,
  user: UserInfo | undefined,
): Promise<void> {
  return exchange((finish) => {
    // A body of unknown length (HTTP/2 may send none): chunked, which Node does not do by itself for DELETE.
    const headers = proxiedHeaders(req.headers, user);
    if (headers['content-length'] === undefined && req.method !== 'GET' && req.method !== 'HEAD') headers['transfer-encoding'] = 'chunked';
    const upstream = https.request(backendRequest(req, headers, target, client), (answer) => {
      relay(answer, res, finish, () => upstream.destroy());
    });
    // A switch of protocols nobody asked for (the client's Upgrade is not passed on here): refused.
    upstream.on('upgrade', (_answer: IncomingMessage, backend: Duplex) => {
      backend.destroy();
      badGateway(res, 'backend switched protocols unasked');
      finish();
    });
    upstream.on('error', (err) => {
      unreachable(res, err);
      finish();
    });
    // The client going away ends the backend's exchange too (a watch that is closed).
    res.once('close', () => {
      upstream.destroy();
      finish();
    });
    // The body as it comes (HTTP/1.1 and HTTP/2 requests alike: both are event emitters of chunks), paused
    // while the backend's side is full when the request can pause.
    const body = req as { pause?: () => void; resume?: () => void };
    req.on('data', (chunk: Buffer) => {
      if (!upstream.write(chunk) && body.pause && body.resume) {
        body.pause();
        upstream.once('drain', () => body.resume!());
      }
    });
    req.on('end', () => upstream.end());
    req.on('error', () => upstream.destroy());
    if ((req as { readableEnded?: boolean }).readableEnded) upstream.end();
  });
}

type Answerable = Parameters<typeof proxy>[1];

/** An exchange with a backend, over when `finish` is first called (by whichever side ends it). */
function exchange(run: (finish: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    run(() => {
      if (done) return;
      done = true;
      resolve();
    });
  });
}

/** The options of the request to the backend: TLS as the APIService says, the front proxy's certificate. */
function backendRequest(req: { method?: string; url?: string }, headers: OutgoingHttpHeaders, target: ProxyTarget, client: ProxyClientCertificate | undefined): https.RequestOptions {
  return {
    protocol: 'https:',
    hostname: target.url.hostname.replace(/^\[|\]$/g, ''),
    port: target.url.port,
    method: req.method,
    path: req.url,
    headers,
    servername: /^[\d.]+$|:/.test(target.servername) ? undefined : target.servername,
    ca: target.ca,
    rejectUnauthorized: !target.insecureSkipTLSVerify,
    ...(target.insecureSkipTLSVerify ? { checkServerIdentity: () => undefined } : {}),
    cert: client?.cert,
    key: client?.key,
    agent: false,
  };
}

/** The backend's answer to the client, at the client's pace; `finish` when it is over, `abort` ends the backend's side. */
function relay(answer: IncomingMessage, res: Answerable, finish: () => void, abort: () => void): void {
  // A 101 without the headers that make it one (Node hands it over as a response): no answer to pass on.
  if (answer.statusCode === 101) {
    answer.destroy();
    abort();
    badGateway(res, 'backend switched protocols unasked');
    return finish();
  }
  try {
    res.writeHead(answer.statusCode ?? 502, responseHeaders(answer.headers));
  } catch {
    answer.destroy();
    abort();
    res.destroy?.();
    return finish();
  }
  // As fast as the client reads, no faster: the answer waits while the client's buffer is full.
  answer.on('data', (chunk: Buffer) => {
    if (!res.write(chunk)) {
      answer.pause();
      res.once('drain', () => answer.resume());
    }
  });
  answer.on('end', () => {
    res.end();
    finish();
  });
  // A backend that breaks off mid-answer: the client's exchange is broken off too (a cut list must not look whole).
  const broken = () => {
    if (!answer.complete) res.destroy?.();
    else res.end();
    finish();
  };
  answer.on('error', broken);
  answer.on('aborted', broken);
}

function badGateway(res: Answerable, message: string): void {
  if (res.headersSent) return void res.destroy?.();
  res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
  res.end(`${message}\n`);
}

/** upstream's answer when the backend cannot be reached. */
function unreachable(res: Answerable, err: Error): void {
  if (!res.headersSent) {
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
    res.end(`Error trying to reach service: '${err.message}'\n`);
  } else if (res.destroy) res.destroy();
  // Cut mid-answer: broken off, so that it never looks whole.
  else res.end();
}

/**
 * A request to switch protocols (exec, attach, port-forward, websockets) to the backend: when it agrees (101),
 * its answer goes to the client and the two connections are joined, bytes both ways, until either side closes;
 * any other answer goes back as an ordinary response.
 */
export function proxyUpgrade(
  req: { method?: string; url?: string; headers: IncomingHttpHeaders },
  client: { socket: Duplex; head: Buffer },
  res: Answerable,
  target: ProxyTarget,
  cert: ProxyClientCertificate | undefined,
  user: UserInfo | undefined,
): Promise<void> {
  return exchange((finish) => {
    // A client that left while it was being authenticated: nothing to join.
    if (client.socket.destroyed) return finish();
    const headers = proxiedHeaders(req.headers, user);
    headers.connection = 'Upgrade';
    headers.upgrade = req.headers.upgrade;
    const upstream = https.request(backendRequest(req, headers, target, cert));
    upstream.on('upgrade', (answer: IncomingMessage, backend: Duplex, backendHead: Buffer) => {
      // Only the protocol asked for (as Go's ReverseProxy), and only to a client still there.
      const asked = String(req.headers.upgrade ?? '').toLowerCase();
      const given = String(answer.headers.upgrade ?? '').toLowerCase();
      if (client.socket.destroyed || given !== asked) {
        backend.destroy();
        if (!client.socket.destroyed) badGateway(res, `backend tried to switch protocol ${JSON.stringify(given)} when ${JSON.stringify(asked)} was requested`);
        return finish();
      }
      const joined = () => {
        backend.destroy();
        client.socket.destroy();
        finish();
      };
      backend.on('error', joined);
      backend.on('close', joined);
      client.socket.on('error', joined);
      client.socket.on('close', joined);
      // The 101 goes out as the response (its status and headers for the audit and metrics), then the bytes.
      try {
        res.writeHead(101, answer.rawHeaders as never);
        res.flushHeaders?.();
      } catch {
        return joined();
      }
      if (backendHead.length > 0) client.socket.write(backendHead);
      if (client.head.length > 0) backend.write(client.head);
      backend.pipe(client.socket);
      client.socket.pipe(backend);
    });
    // Not switched: an error answer goes back as it is; any other is no answer to a switch (kube-aggregator's 503).
    upstream.on('response', (answer) => {
      if ((answer.statusCode ?? 0) >= 400) return relay(answer, res, finish, () => upstream.destroy());
      answer.destroy();
      upstream.destroy();
      if (!res.headersSent) {
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
        res.end(`invalid upgrade response: status code ${answer.statusCode}\n`);
      }
      finish();
    });
    upstream.on('error', (err) => {
      unreachable(res, err);
      finish();
    });
    // The client going ends the attempt (and, once joined, the backend's side goes with it anyway).
    client.socket.once('close', () => upstream.destroy());
    upstream.end();
  });
}

/** kube-aggregator's answer for an APIService that is not available. */
export function writeServiceUnavailable(res: { writeHead(status: number, headers: OutgoingHttpHeaders): unknown; end(body?: string): unknown }): void {
  res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
  res.end('service unavailable\n');
}
