/**
 * The HTTP front: one handler for HTTP/2 (TLS) and HTTP/1.1, running the
 * filter chain (headers every response carries, authentication), then health,
 * version, discovery and resource routes.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Discovery, type AggregatedGroupVersion } from '../discovery/documents.js';
import { errors, StatusError } from '../machinery/status.js';
import type { ApiRegistry, Endpoint, VirtualEndpoint } from '../registry/registry.js';
import { anonymousUser, bearerToken, clientCertificateUser, websocketBearerToken, withAuthenticatedGroup, type PeerSocket, type TokenAuthenticator } from './authn.js';
import type { UserInfo } from '../api/authentication.js';
import { performance } from 'node:perf_hooks';
import { LoopMonitor, ServedRequests, type LoopStall, type Served } from './loop-monitor.js';
import { distinctHeaders, IssuerCheck, type PeerCertificate, type RequestHeaderAuthenticator } from './request-header.js';
import { proxy, proxyUpgrade, writeServiceUnavailable, type ProxyClientCertificate } from './proxy.js';
import type { ProxyTarget } from '../api/serving.js';
import type { DelegatedAuthenticator } from './delegated.js';
import type { ObjectGetter, ServiceAccountTokens } from '../apis/authentication/service-account-tokens.js';
import { StreamRequest, StreamResponse, type Request, type Response } from './exchange.js';
import { servesProtobuf, type HandlerContext } from './handlers/context.js';
import type { AdmissionChain } from '../registry/admission.js';
import { serveResource } from './handlers/resource.js';
import { serveVirtual } from './handlers/virtual.js';
import { RequestAbortedError } from './request-aborted.js';
import { ListAbortedError } from '../cache/errors.js';
import { isHealthPath, serveHealth, versionInfo } from './health.js';
import { errorSerializer, JSON_OUTPUT, negotiateDiscovery, negotiateOutput, type Negotiated } from './negotiation.js';
import { requestMetrics, type ApiMetrics } from './metrics.js';
import { parseRequestInfo, parseTarget, type DiscoveryRequest } from './request-info.js';
import { breakOff, endInSlices, writeError, writeNotFound, writeObject, writeSerialized, addWarnings, writePlain, statusOf } from './respond.js';
import { audit, type AuditBackend, type AuditPolicy } from './audit.js';
import { BatchedCloser, IdleConnections, type Connection } from './connections.js';
import { loopbackExchange } from './loopback.js';
import type { LoopbackRequest, LoopbackSink } from '../api/serving.js';
import { alwaysAllow, authorization } from './authz.js';
import type { Authorizer } from '../api/authorization.js';
import { impersonation } from './impersonation.js';
import { CONSOLE_PREFIX, ConsoleServer } from './console.js';
import { compose, inFlightLimits, logQuote, requestLog, requestTimeout, type Exchange, type Filter, type Handler, type Limits } from './filters.js';

/** How long a connection that is being closed may take to say goodbye before it is cut. */
const CLOSE_GRACE_MS = 5000;

export interface HttpServerOptions {
  registry: ApiRegistry;
  /** The serving certificate, and the CAs whose client certificates authenticate (absent: none are asked for). */
  tls: { cert: string; key: string; clientCAs?: string[] };
  /** Absent: every request is allowed (embedded use and tests that say so). */
  authenticator?: TokenAuthenticator;
  /** A request without credentials is system:anonymous (--anonymous-auth) rather than 401. */
  anonymous?: boolean;
  /**
   * Request-header authentication (an extension server behind an aggregator): the front proxy's certificates,
   * and which CAs sign the users' own client certificates (`tls.clientCAs` also holds the front proxy's).
   */
  requestHeader?: { authenticator: RequestHeaderAuthenticator; clientIssuers: IssuerCheck };
  /** The backend of an aggregated group-version: where it is, null while unavailable, undefined: not aggregated. */
  aggregated?: (group: string, version: string) => ProxyTarget | null | undefined;
  /** Every aggregated group-version (APIServices with a service), for discovery's group lists. */
  aggregatedGroupVersions?: () => readonly AggregatedGroupVersion[];
  /** Tokens kapi does not know, reviewed by the core cluster (--authentication-kubeconfig). */
  delegatedAuthenticator?: DelegatedAuthenticator;
  /** The front proxy's client certificate, presented to aggregated servers (--proxy-client-cert-file). */
  proxyClient?: ProxyClientCertificate;
  /** ServiceAccount tokens: issued through TokenRequest, and bearer tokens the static ones are not. */
  serviceAccountTokens?: { tokens: ServiceAccountTokens; get: ObjectGetter };
  /** Decides on each authenticated request's attributes (default: AlwaysAllow). */
  authorizer?: Authorizer;
  /** Admission plugins, run by the store on every write (NamespaceLifecycle). */
  admission?: AdmissionChain;
  isReady?: () => boolean;
  metrics?: ApiMetrics;
  /** Serves /openapi/v2 and /openapi/v3. */
  openapi?: {
    /**
     * Makes what `handle` needs for the path in steps (a cold document is a few hundred milliseconds of work); what
     * it gives back is handed to `handle`.
     */
    prepare?(pathWithQuery: string, headers: Record<string, string | string[] | undefined>): Promise<unknown>;
    handle(pathWithQuery: string, headers: Record<string, string | string[] | undefined>, prepared?: unknown): { status: number; headers: Record<string, string>; body?: Buffer | string } | undefined;
  };
  /** Request limits; each defaults to kube-apiserver's (see DEFAULT_LIMITS). */
  limits?: Partial<ServerLimits>;
  /** Where the request log (-v=2 and above) goes; absent: no request log. */
  requestLog?: (line: string) => void;
  /** Told about failures no client is told of in full (a handler's unexpected exception). */
  logError?: (message: string) => void;
  /** Auditing: the policy and where events go (absent: no audit, as without --audit-policy-file). */
  audit?: { policy: AuditPolicy; backend: AuditBackend };
  /** Serve the web console under /console/ (console.ts). */
  console?: boolean;
}

export interface ServerLimits extends Limits {
  /** Connections with no request open are closed after this long (ms). */
  idleTimeoutMs: number;
  /** A TLS handshake must finish within this long (ms). */
  handshakeTimeoutMs: number;
  /** The size of a request's header section (HTTP/1.1) or header list (HTTP/2). */
  maxHeaderBytes: number;
  /** HTTP/2 streams open at once on one connection. */
  maxConcurrentStreams: number;
  /** --min-request-timeout (seconds): watches without timeoutSeconds end after 1 to 2 times this. */
  minRequestTimeoutSeconds: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  maxRequestsInFlight: 400,
  maxMutatingRequestsInFlight: 200,
  maxWatches: 20_000,
  requestTimeoutMs: 60_000,
  idleTimeoutMs: 90_000,
  handshakeTimeoutMs: 10_000,
  maxHeaderBytes: 1 << 20,
  maxConcurrentStreams: 1000,
  minRequestTimeoutSeconds: 1800,
};

const UPLOAD_WINDOW_PER_STREAM = 256 * 1024;
const UPLOAD_WINDOW_PER_CONNECTION = 16 * 1024 * 1024;

const EMPTY_QUERY = new URLSearchParams();
const socketConnections = new WeakMap<Socket, Connection>();
/** Per connection (its TLS socket, or its HTTP/2 session's socket): the client-CA generation its handshake had. */
const handshakeGenerations = new WeakMap<object, number>();
const sessionConnections = new WeakMap<http2.Http2Session, Connection>();
/** Per connection: what its client certificate is to the authenticators (HttpServer.certificateRoles). */
const certificateRoles = new WeakMap<object, { generation: number; rh: HttpServerOptions['requestHeader']; proxy: boolean; user: boolean }>();


export class HttpServer {
  readonly discovery: Discovery;
  private readonly server: http2.Http2SecureServer;
  private address?: AddressInfo;
  private readonly sockets = new Set<Socket>();
  /** Idle HTTP/1.1 connections their clients closed, destroyed in batches. */
  private readonly closer = new BatchedCloser();
  /** Bumped when the client CAs change (setClientAuthentication); 0: as the server started. */
  private caGeneration = 0;
  /** The CAs of users' own certificates since the last change. */
  private userIssuers: IssuerCheck | undefined;
  private readonly limits: ServerLimits;
  private readonly serve: Handler;
  /** The console's pages and sessions, within the same in-flight limits and request timeout as the API. */
  private readonly serveConsole: Handler | undefined;
  /** The web console (--console), when it is on. */
  readonly console: ConsoleServer | undefined;
  private readonly logError: (message: string) => void;
  private readonly idle: IdleConnections;
  /** The event loop's delay (a histogram on /metrics) and its stalls (logged with the requests served meanwhile). */
  private readonly loop: LoopMonitor;
  private readonly served = new ServedRequests();

  constructor(private readonly options: HttpServerOptions) {
    this.discovery = new Discovery(options.registry, options.aggregatedGroupVersions);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.logError = options.logError ?? ((m) => process.stderr.write(`${m}\n`));
    const limits = this.limits;
    this.idle = new IdleConnections(limits.idleTimeoutMs);
    // Flow-control windows as kube-apiserver sets them (256 KiB of upload buffer per
    // stream); Node's 64 KiB defaults would make a large request body wait for
    // WINDOW_UPDATE round trips.
    const { clientCAs, ...tls } = options.tls;
    this.server = http2.createSecureServer({
      ...tls,
      // Client certificates are asked for, never required: their verification decides only who the user is.
      ...(clientCAs?.length ? { requestCert: true, rejectUnauthorized: false, ca: clientCAs } : {}),
      allowHTTP1: true,
      handshakeTimeout: limits.handshakeTimeoutMs,
      maxHeaderSize: limits.maxHeaderBytes,
      settings: { initialWindowSize: UPLOAD_WINDOW_PER_STREAM, maxConcurrentStreams: limits.maxConcurrentStreams, maxHeaderListSize: limits.maxHeaderBytes },
      // Go bounds a header list by its bytes alone; Node also by its count (128 by default).
      maxHeaderListPairs: 4096,
    } as http2.SecureServerOptions);
    // HTTP/1.1 (allowHTTP1) reads these from the server object: a header section of up to maxHeaderBytes
    // (Go's MaxHeaderBytes, where Node's default of 16 KiB refuses long list queries with 431). Node's own
    // header and request timeouts are off: they close every late connection in one go (10,000 idle ones
    // stall the event loop for most of a second); idle connections, those that never finish their
    // headers included, are closed by IdleConnections in batches, and requests time out in requestTimeout.
    Object.assign(this.server, { maxHeaderSize: limits.maxHeaderBytes, headersTimeout: 0, requestTimeout: 0 });
    const filters: Filter[] = [];
    if (options.requestLog) filters.push(requestLog(options.requestLog));
    filters.push((x, next) => this.authenticate(x, next));
    if (options.audit) filters.push(audit(options.audit.policy, options.audit.backend));
    filters.push(impersonation(options.authorizer ?? alwaysAllow));
    // AlwaysAllow, the default, is no filter at all: nothing to build attributes for.
    if (options.authorizer && options.authorizer !== alwaysAllow) filters.push(authorization(options.authorizer));
    // One in-flight budget for the API and the console's own requests (its sign-ins among them), one timeout rule.
    const limited = [inFlightLimits(limits), requestTimeout(limits.requestTimeoutMs, endExchange, abortExchange)];
    filters.push(...limited);
    if (options.metrics) filters.push(requestMetrics(options.metrics, options.registry));
    this.serve = compose(filters, (x) => this.route(x));
    const consoleServer = (this.console = options.console ? new ConsoleServer((token) => this.tokenUser(token), (line) => this.logError(line)) : undefined);
    this.serveConsole = consoleServer ? compose([...(options.requestLog ? [requestLog(options.requestLog)] : []), ...limited], (x) => consoleServer.handle(x.path, x.req, x.res)) : undefined;
    const metrics = options.metrics;
    this.loop = new LoopMonitor({ onDelay: metrics ? (seconds) => metrics.loopDelay(seconds) : undefined, onStall: (stall) => this.logStall(stall) });
    // HTTP/2 streams are served as they are: drop the hook that would wrap each in
    // Node's compatibility request/response once a 'request' listener (HTTP/1.1) is added.
    this.server.removeAllListeners('newListener');
    this.server.on('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, _flags: number, rawHeaders: string[]) => {
      const conn = stream.session ? sessionConnections.get(stream.session) : undefined;
      this.idle.opened(conn);
      stream.once('close', () => this.idle.closed(conn));
      void this.handle(new StreamRequest(stream, headers, rawHeaders), new StreamResponse(stream));
    });
    this.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const conn = socketConnections.get(req.socket);
      this.idle.opened(conn);
      res.once('close', () => this.idle.closed(conn));
      // A write after the end (a handler that goes on after a timeout) is dropped, not thrown at the process.
      res.on('error', () => {});
      void this.handle(req as Request, res as unknown as Response);
    });
    this.server.on('session', (session: http2.ServerHttp2Session) => {
      session.once('localSettings', () => session.setLocalWindowSize(UPLOAD_WINDOW_PER_CONNECTION));
      // A session's errors (a peer that breaks the protocol) end the session, never the process.
      session.on('error', () => {});
      // The session's socket as its requests see it (a proxy object), with the CAs its handshake had.
      handshakeGenerations.set(session.socket, this.caGeneration);
      // Idle: GOAWAY, so that a client about to send knows to use a new connection.
      const conn = this.idle.track(() => session.close());
      sessionConnections.set(session, conn);
      session.once('close', () => this.idle.forget(conn));
    });
    // Watches are long-lived: connections are closed when idle (no request open), not on socket inactivity.
    this.server.setTimeout(0);
    this.server.on('secureConnection', (socket: TLSSocket) => {
      handshakeGenerations.set(socket, this.caGeneration);
      if (socket.alpnProtocol === 'h2') return;
      const conn = this.idle.track(() => socket.destroy());
      socketConnections.set(socket, conn);
      socket.once('close', () => this.idle.forget(conn));
      // The client closed its side of an idle connection: it is destroyed, without the TLS close_notify and the
      // graceful shutdown Node's HTTP server would start, 100 per turn of the loop (closing one costs
      // about 60 µs: 10,000 clients closing together held the loop for a second). A connection with a response
      // under way ends as Node ends it.
      socket.prependListener('end', () => {
        if ((socket as { _httpMessage?: unknown })._httpMessage) return;
        // Node's own 'end' listener, next, would end it gracefully: nothing more is written to it.
        socket.end = () => socket;
        this.closer.add(socket);
      });
    });
    // A request to switch protocols (HTTP/1.1 only) comes with its connection: answered as any request through
    // a response on that connection, which then closes, unless an aggregated backend takes the connection over.
    this.server.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
      socket.on('error', () => {});
      // Pipelined behind a request still being answered: taken up once that answer is out.
      const prior = (socket as { _httpMessage?: http.ServerResponse | null })._httpMessage;
      if (prior) {
        prior.once('finish', () => setImmediate(() => this.upgrade(req, socket, head)));
        prior.once('close', () => {
          if (!prior.writableFinished) socket.destroy();
        });
        return;
      }
      this.upgrade(req, socket, head);
    });
    // CONNECT over HTTP/1.1 comes as its own event (Node closes the socket when nothing listens): no route takes it.
    this.server.on('connect', (_req: http.IncomingMessage, socket: Socket) => {
      const body = 'Method Not Allowed\n';
      socket.end(`HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    });
    this.server.on('tlsClientError', (_err: Error, socket: Socket) => socket.destroy());
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      socket.on('error', () => {});
    });
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        this.address = this.server.address() as AddressInfo;
        this.loop.start();
        resolve(this.address);
      });
    });
  }

  /**
   * A request to switch protocols, with its connection: answered as any request through a response on that
   * connection, which then closes, unless an aggregated backend takes the connection over.
   */
  private upgrade(req: http.IncomingMessage, socket: Socket, head: Buffer): void {
    if (socket.destroyed) return;
    // Its body would come unframed (Node hands over the connection after the headers): refused, never misread.
    const hasBody = (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') || req.headers['transfer-encoding'] !== undefined;
    if (hasBody) {
      socket.end('HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: 15\r\n\r\n400 Bad Request');
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
      return;
    }
    const conn = socketConnections.get(socket as TLSSocket);
    this.idle.opened(conn);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.idle.closed(conn);
    };
    const res = new http.ServerResponse(req);
    res.assignSocket(socket);
    res.shouldKeepAlive = false;
    res.on('error', () => {});
    // Node left the socket's drain to the parser it took away: the response hears of it here (streamed answers).
    socket.on('drain', () => {
      if (!res.writableFinished) res.emit('drain');
    });
    // Joined to a backend, the connection is open until either side closes it; answered here, it is over
    // with the answer: what else the client sends is read and dropped, and the connection closed.
    res.once('close', release);
    res.once('finish', () => {
      release();
      socket.resume();
      socket.end();
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    });
    void this.handle(req as Request, res as unknown as Response, undefined, { socket, head });
  }

  /** Serve new connections with another certificate (a renewed --tls-cert-file). */
  setServingCertificate(cert: string, key: string): void {
    this.options.tls.cert = cert;
    this.options.tls.key = key;
    const clientCAs = this.options.tls.clientCAs;
    this.server.setSecureContext({ cert, key, ...(clientCAs?.length ? { ca: clientCAs } : {}) });
  }

  /**
   * New request-header settings, and the CAs whose client certificates new connections are asked for (the core
   * cluster's extension-apiserver-authentication ConfigMap changed). Connections already open keep theirs.
   */
  setClientAuthentication(requestHeader: HttpServerOptions['requestHeader'], clientCAs: string[], userCAs: string[]): void {
    this.options.requestHeader = requestHeader;
    this.options.tls.clientCAs = clientCAs;
    this.caGeneration++;
    this.userIssuers = requestHeader?.clientIssuers ?? new IssuerCheck(userCAs);
    this.server.setSecureContext({ cert: this.options.tls.cert, key: this.options.tls.key, ...(clientCAs.length ? { ca: clientCAs } : {}) });
  }

  /**
   * Serve a request made inside the process through the whole chain (see loopback.ts). The server's own
   * clients (`internal`, the default) do not wait for what their writes set off (a CRD's establishing); an
   * embedder's client does, as any client over the network.
   */
  loopback(request: LoopbackRequest, sink: LoopbackSink, internal = true): () => void {
    return loopbackExchange((req, res) => this.handle(req, res, internal ? 'internal' : 'client'), request, sink);
  }

  /** Stop listening and end every open connection (watches included). */
  close(): Promise<void> {
    this.loop.stop();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }

  /**
   * One request, whatever happens in it: every failure ends as a Status (or,
   * when nothing can be written any more, as a reset stream or closed
   * connection), never as an exception that leaves this function.
   */
  private async handle(req: Request, res: Response, loopback?: 'internal' | 'client', upgrade?: Exchange['upgrade']): Promise<void> {
    const x: Exchange = { req, res, auditId: auditIdOf(req), started: process.hrtime.bigint(), path: '/', query: EMPTY_QUERY, loopback: loopback !== undefined, internal: loopback === 'internal', upgrade };
    let served: Served | undefined;
    try {
      res.setHeader('Cache-Control', 'no-cache, private');
      res.setHeader('Audit-Id', x.auditId);
      const target = parseTarget(req.url ?? '/');
      if (!target) return writePlain(res, 400, '400 Bad Request');
      x.path = target.path;
      x.query = target.query;
      // The console's pages and sign-in: no API request (its API requests are, with the user's own credentials).
      if (this.serveConsole && (x.path === CONSOLE_PREFIX || x.path.startsWith(`${CONSOLE_PREFIX}/`)) && !x.loopback) return await this.serveConsole(x);
      x.info = x.path.startsWith('/api') ? parseRequestInfo(req.method ?? 'GET', x.path, x.query) : undefined;
      // Watches are open for long and mostly idle: a stall is never put down to them.
      // (It is followed by a reaction to its end rather than a frame suspended for as long as it is open.)
      if (x.info?.kind === 'resource' && x.info.verb === 'watch') return this.serve(x).catch((err: unknown) => this.lastResort(x, err));
      served = { start: performance.now(), describe: () => `${logQuote(req.method ?? '')} ${logQuote(req.url ?? '')} for ${whoServed(x)} (audit-ID ${x.auditId})` };
      this.served.begin(served);
      await this.serve(x);
    } catch (err) {
      this.lastResort(x, err);
    } finally {
      if (served) this.served.end(served);
    }
  }

  /** A stall of the event loop: logged with the requests being served while it lasted (a few, and how many). */
  private logStall(stall: LoopStall): void {
    const during = this.served.during(stall);
    const named = during.slice(0, 5).map((s) => s.describe());
    const more = during.length > named.length ? ` and ${during.length - named.length} more` : '';
    this.logError(`kapi: the event loop was held ${stall.ms.toFixed(0)} ms${named.length ? `, serving ${named.join(', ')}${more}` : ''}`);
  }

  /** An exception no handler turned into a Status: logged with its request, answered 500; the process stays up. */
  private lastResort(x: Exchange, err: unknown): void {
    if (x.timedOut || isAbandoned(err)) return;
    const known = err instanceof StatusError;
    if (!known) this.logUnexpected(x, err);
    try {
      writeError(x.res, known ? err : errors.internal('an unexpected error occurred'), errorSerializer(x.req.headers.accept));
    } catch {
      // Nothing can be written (headers refused, stream gone): end the exchange.
      if (x.res instanceof StreamResponse) x.res.reset();
      else (x.req as unknown as http.IncomingMessage).socket?.destroy();
    }
  }

  /** An error that is not the client's: logged with its request (method and target quoted and bounded). */
  private logUnexpected(x: Exchange, err: unknown): void {
    const what = err instanceof Error ? (err.stack ?? err.message) : logQuote(String(err));
    this.logError(`kapi: internal error serving ${logQuote(x.req.method ?? '')} ${logQuote(x.req.url ?? '')} (audit-ID ${x.auditId}): ${what}`);
  }

  /**
   * Authentication as upstream's union of authenticators: a verified client certificate, then a bearer
   * token; a request that presents neither is anonymous when --anonymous-auth allows it. A certificate
   * or token presented and not accepted is 401, as is a request without credentials otherwise.
   */
  private authenticate(x: Exchange, next: Handler): Promise<void> {
    const authenticator = this.options.authenticator;
    if (!authenticator) return next(x);
    let cert: UserInfo | 'invalid' | 'proxy' | undefined = x.loopback ? undefined : clientCertificateUser(x.req.socket as PeerSocket | undefined);
    const rh = this.options.requestHeader;
    // The handshake verified the certificate against every CA asked for (users' and the front proxy's together);
    // each authenticator takes it only through a chain to CAs of its own, as upstream's verifiers have separate pools.
    if (cert !== undefined && cert !== 'invalid' && (rh || this.caGeneration > 0)) {
      const roles = this.certificateRoles(x.req.socket as object, rh);
      if (roles.proxy) {
        // The front proxy's certificate: the user is the one its headers name, and never the certificate's own
        // (unless a users' CA signs it too). A name it does not allow: not the proxy's user, and the other
        // authenticators may still accept the request (upstream's union: a bearer token).
        const peer = (x.req.socket as PeerSocket).getPeerCertificate?.() as PeerCertificate | undefined;
        const proxied = rh!.authenticator.authenticate(peer, x.req.headers, distinctHeaders(x.req as never));
        if (proxied && proxied !== 'invalid') {
          x.user = withAuthenticatedGroup(proxied);
          return next(x);
        }
      }
      if (!roles.user) cert = 'proxy';
    }
    if (cert !== undefined && cert !== 'invalid' && cert !== 'proxy') x.user = cert;
    else {
      const fromProtocol = x.upgrade ? websocketBearerToken(x.req.headers) : undefined;
      if (fromProtocol === 'invalid') throw errors.unauthorized();
      let token = bearerToken(x.req.headers.authorization) ?? fromProtocol;
      if (token === undefined && cert === undefined && this.console) {
        // A console session's token, with the session's CSRF header (console.ts), when nothing else is presented;
        // a console request whose session is gone is a 401 (it signs in again), and its answers are not stored.
        const session = this.console.sessionToken(x.req.headers);
        if (session === 'stale') throw errors.unauthorized();
        if (session !== undefined) x.res.setHeader('Cache-Control', 'no-store');
        token = session;
      }
      if (token !== undefined) {
        x.user = authenticator.authenticateToken(token);
        // Only a token no static entry knows waits for the ServiceAccount check (a JWT's signature).
        if (!x.user) {
          return this.serviceAccountUser(token).then((user) => {
            if (!user) throw errors.unauthorized();
            x.user = user;
            return next(x);
          });
        }
      } else if (cert === undefined && this.options.anonymous) x.user = anonymousUser();
      if (!x.user) throw errors.unauthorized();
    }
    return next(x);
  }

  /**
   * What a connection's verified certificate is to each authenticator (read once per connection and CA change):
   * the front proxy's when a chain of the certificates it presented leads to a front-proxy CA, and a user's when
   * one leads to a users' CA (the handshake's own verdict while the CAs are those it had).
   */
  private certificateRoles(socket: object, rh: HttpServerOptions['requestHeader']): { proxy: boolean; user: boolean } {
    const known = certificateRoles.get(socket);
    if (known && known.generation === this.caGeneration && known.rh === rh) return known;
    const peer = (socket as PeerSocket).getPeerCertificate?.(true) as PeerCertificate | undefined;
    const proxy = rh ? rh.authenticator.issuer.signedChain(peer) : false;
    const stale = this.caGeneration > 0 && handshakeGenerations.get(socket) !== this.caGeneration;
    const users = rh?.clientIssuers ?? (stale ? this.userIssuers : undefined);
    const user = users ? users.signedChain(peer) : true;
    const roles = { generation: this.caGeneration, rh, proxy, user };
    certificateRoles.set(socket, roles);
    return roles;
  }

  /** The user of a bearer token, as authentication reads one (static tokens, then ServiceAccount and delegated ones). */
  private async tokenUser(token: string): Promise<UserInfo | undefined> {
    const authenticator = this.options.authenticator;
    if (!authenticator) return anonymousUser();
    return authenticator.authenticateToken(token) ?? (await this.serviceAccountUser(token));
  }

  /** The account of a ServiceAccount token meant for this server (undefined: not one, or not valid). */
  private async serviceAccountUser(token: string): Promise<UserInfo | undefined> {
    const sa = this.options.serviceAccountTokens;
    if (sa) {
      const verdict = await sa.tokens.authenticate(token, sa.get);
      if (verdict !== undefined && verdict !== 'invalid') return verdict.user;
    }
    // Behind an aggregator: a token kapi does not know, reviewed by the core cluster.
    const delegated = await this.options.delegatedAuthenticator?.authenticate(token).catch((err: unknown) => {
      this.logError(`kapi: delegated authentication: ${(err as Error)?.message ?? String(err)}`);
      return undefined;
    });
    return delegated ? withAuthenticatedGroup(delegated) : undefined;
  }

  private async route(x: Exchange): Promise<void> {
    const { req, res, path, query } = x;
    // Authorized as any path (system:public-info-viewer lets everyone, anonymous users too, read them).
    if (isHealthPath(path)) return serveHealth(path, query, res, this.options.isReady?.() ?? true);
    if (path === '/version' || path === '/version/') return writeObject(res, 200, versionInfo(), 'json', true);
    const issuer = this.options.serviceAccountTokens?.tokens.discovery();
    if (issuer && (path === '/.well-known/openid-configuration' || path === '/openid/v1/jwks')) {
      // The ServiceAccount issuer's discovery (system:service-account-issuer-discovery lets service accounts read it).
      const json = JSON.stringify(path === '/openid/v1/jwks' ? issuer.jwks : issuer.configuration);
      res.writeHead(200, { 'Content-Type': path === '/openid/v1/jwks' ? 'application/jwk-set+json' : 'application/json', 'Content-Length': Buffer.byteLength(json) });
      res.end(json);
      return;
    }
    if (path === '/metrics' && this.options.metrics) {
      const { contentType, body } = await this.options.metrics.render();
      res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const prepared = path.startsWith('/openapi/') ? await this.options.openapi?.prepare?.(req.url ?? path, req.headers) : undefined;
    const published = path.startsWith('/openapi/') ? this.options.openapi?.handle(req.url ?? path, req.headers, prepared) : undefined;
    // An aggregated group-version's v3 document is its backend's, fetched as the user asked (as upstream).
    const aggregatedV3 = published?.status === 404 ? /^\/openapi\/v3\/apis\/([^/]+)\/([^/]+)$/.exec(path) : null;
    if (aggregatedV3) {
      const backend = this.options.aggregated?.(aggregatedV3[1], aggregatedV3[2]);
      if (backend === null) return writeServiceUnavailable(res);
      if (backend) return proxy(req as never, res as never, backend, this.options.proxyClient, x.user);
    }
    if (published) {
      res.writeHead(published.status, published.headers);
      return published.body ? endInSlices(res, published.body) : void res.end();
    }
    const info = x.info;
    if (!info || info.kind === 'other') return writeNotFound(res);
    if (info.kind !== 'resource') return this.serveDiscovery(info, req, res);
    const routed = this.options.registry.route(info.group, info.version, info.resource);
    // An aggregated group-version (an APIService with a service): every request under it to the backend as it
    // came, or 503 while it is not available; kapi's own resources keep their routes.
    if (!routed || routed.proxied) {
      let backend = this.options.aggregated?.(info.group, info.version);
      if (backend === undefined) {
        if (!routed) return writeNotFound(res);
        backend = routed.backend() ?? null;
      }
      if (backend === null) return writeServiceUnavailable(res);
      if (x.upgrade) return proxyUpgrade(req as never, x.upgrade, res as never, backend, this.options.proxyClient, x.user);
      return proxy(req as never, res as never, backend, this.options.proxyClient, x.user);
    }
    const endpoint = routed;
    let output: Negotiated = JSON_OUTPUT;
    try {
      const reads = info.verb === 'get' || info.verb === 'list' || info.verb === 'watch';
      output = negotiateOutput(req.headers.accept, {
        tables: reads && info.subresource === undefined && endpoint.table !== undefined,
        stream: info.verb === 'watch',
        pretty: query.get('pretty') === 'true',
        protobuf: servesProtobuf(endpoint),
      });
      const ctx: HandlerContext<Endpoint | VirtualEndpoint> = {
        req,
        res,
        info,
        query,
        endpoint,
        output,
        user: x.user,
        warnings: endpoint.warning ? [endpoint.warning] : [],
        admission: this.options.admission,
        minRequestTimeoutSeconds: this.limits.minRequestTimeoutSeconds,
        loopback: x.internal,
        lookup: (group, version, resource) => this.options.registry.lookup(group, version, resource),
        auditAnnotations: (x.auditAnnotations ??= Object.create(null) as Record<string, string>),
      };
      // Warnings gathered while serving (deprecation, unknown fields) go out with the headers, whenever they are written.
      const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
      (res as { writeHead: (...args: unknown[]) => Response }).writeHead = (...args: unknown[]) => {
        if (x.timedOut) return res;
        addWarnings(res, ctx.warnings);
        return writeHead(...args);
      };
      if (endpoint.virtual) await serveVirtual({ ...ctx, endpoint });
      // A watch is followed to its end by a reaction, not by this frame suspended for as long as it is open.
      else if (info.verb === 'watch') return serveResource(ctx as HandlerContext).catch((err: unknown) => this.failed(x, err, output));
      else await serveResource(ctx as HandlerContext);
    } catch (err) {
      this.failed(x, err, output);
    }
  }

  /** A request whose handler failed: its Status, in the media type negotiated (or the first the client accepts). */
  private failed(x: Exchange, err: unknown, output: Negotiated): void {
    if (x.timedOut || isAbandoned(err)) return;
    if (!(err instanceof StatusError)) this.logUnexpected(x, err);
    x.status = statusOf(err).toStatus();
    writeError(x.res, err, output === JSON_OUTPUT ? errorSerializer(x.req.headers.accept) : output.serializer);
  }

  private serveDiscovery(info: DiscoveryRequest, req: Request, res: Response): void {
    const d = this.discovery;
    const out = negotiateDiscovery(req.headers.accept, info.kind === 'api-versions' || info.kind === 'api-groups');
    if (out.aggregated) {
      const apiVersion = `apidiscovery.k8s.io/${out.aggregated}` as const;
      const core = info.kind === 'api-versions';
      // As upstream: an ETag, and 304 to a client that holds the same document (If-None-Match, compared whole).
      const etag = d.aggregatedETag(core, apiVersion);
      const caching = { ETag: etag, Vary: 'Accept', 'Cache-Control': 'public' };
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, caching);
        res.end();
        return;
      }
      // Every kubectl and client-go start reads it: encoded once per document (3.8 MiB with 10,000 CRDs).
      const mediaType = out.serializer.mediaType;
      const body = d.aggregatedEncoded(core, apiVersion, mediaType, (doc) => out.serializer.encode(doc, false));
      res.writeHead(200, { ...caching, 'Content-Type': `${mediaType};g=apidiscovery.k8s.io;v=${out.aggregated};as=APIGroupDiscoveryList`, 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    let doc: unknown;
    switch (info.kind) {
      case 'api-versions':
        doc = d.apiVersions(req.headers.host ?? (req.headers[':authority'] as string | undefined) ?? '');
        break;
      case 'api-groups':
        doc = d.apiGroupList();
        break;
      case 'group':
        doc = d.apiGroup(info.group);
        break;
      case 'group-version':
        // An aggregated group-version whose backend is not available: 503, as its proxied document would be.
        if (this.options.aggregated?.(info.group, info.version) === null && !d.servesLocally(info.group, info.version)) {
          return writeServiceUnavailable(res);
        }
        doc = d.resourceList(info.group, info.version);
        break;
    }
    if (doc === undefined) return writeNotFound(res);
    writeSerialized(res, 200, doc, out.serializer);
  }
}

/** The request's Audit-ID as the client sent it (upstream's WithAuditInit), when it is a plain token; else a new one. */
function auditIdOf(req: Request): string {
  const sent = req.headers['audit-id'];
  return typeof sent === 'string' && AUDIT_ID.test(sent) ? sent : randomUUID();
}

const AUDIT_ID = /^[\x21-\x7e]{1,256}$/;

/**
 * End an exchange whose answer is written but whose request body has not all
 * come (a stalled upload that timed out): the HTTP/2 stream is closed once the
 * answer is flushed, an HTTP/1.1 connection likewise (Go's server closes it too).
 */
function endExchange(x: Exchange): void {
  if (x.res instanceof StreamResponse) return x.res.closeWhenFlushed();
  const res = x.res as unknown as http.ServerResponse;
  // Destroying the request closes its socket and tells its reader (Node lets go of a request once its response is done).
  const req = x.req as unknown as http.IncomingMessage;
  if (res.writableFinished) req.destroy();
  else res.once('finish', () => req.destroy());
}

/** Work given up because its client is gone: nothing to answer or log. */
function isAbandoned(err: unknown): boolean {
  return err instanceof RequestAbortedError || err instanceof ListAbortedError;
}

/** Break an answer off mid-body: the HTTP/2 stream reset (INTERNAL_ERROR), the HTTP/1.1 connection closed. */
function abortExchange(x: Exchange): void {
  breakOff(x.res);
}

/** Who a request is served for, as the stall log names it: the user, and the one it impersonates. */
function whoServed(x: Exchange): string {
  const user = logQuote(x.user?.name ?? '');
  return x.requester ? `${logQuote(x.requester.name)} as ${user}` : user;
}
