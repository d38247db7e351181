/**
 * The HTTP front: one handler for HTTP/2 (TLS) and HTTP/1.1, running the
 * filter chain (headers every response carries, authentication), then health,
 * version, discovery and resource routes.
 */
import { randomUUID } from 'node:crypto';
import http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { Discovery } from '../discovery/documents.js';
import { errors } from '../machinery/status.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { TokenAuthenticator, UserInfo } from './authn.js';
import { StreamRequest, StreamResponse, type Request, type Response } from './exchange.js';
import type { Admission, HandlerContext } from './handlers/context.js';
import { serveResource } from './handlers/resource.js';
import { isHealthPath, serveHealth, versionInfo } from './health.js';
import { negotiateOutput, type Negotiated } from './negotiation.js';
import type { ApiMetrics, RequestLabels } from './metrics.js';
import { parseRequestInfo, parseTarget, type DiscoveryRequest } from './request-info.js';
import { writeError, writeNotFound, writeObject, addWarnings } from './respond.js';

export interface HttpServerOptions {
  registry: ApiRegistry;
  tls: { cert: string; key: string };
  /** Absent: every request is allowed (embedded use and tests that say so). */
  authenticator?: TokenAuthenticator;
  admit?: Admission;
  isReady?: () => boolean;
  metrics?: ApiMetrics;
  /** Serves /openapi/v2 and /openapi/v3. */
  openapi?: { handle(pathWithQuery: string, headers: Record<string, string | string[] | undefined>): { status: number; headers: Record<string, string>; body?: Buffer | string } | undefined };
}

const UPLOAD_WINDOW_PER_STREAM = 256 * 1024;
const UPLOAD_WINDOW_PER_CONNECTION = 16 * 1024 * 1024;

const AGGREGATED = /(?:^|[,;\s])as=APIGroupDiscoveryList/;

export class HttpServer {
  readonly discovery: Discovery;
  private readonly server: http2.Http2SecureServer;
  private address?: AddressInfo;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly options: HttpServerOptions) {
    this.discovery = new Discovery(options.registry);
    // Flow-control windows as kube-apiserver sets them (256 KiB of upload buffer per
    // stream); Node's 64 KiB defaults would make a large request body wait for
    // WINDOW_UPDATE round trips.
    this.server = http2.createSecureServer({ ...options.tls, allowHTTP1: true, settings: { initialWindowSize: UPLOAD_WINDOW_PER_STREAM } });
    // HTTP/2 streams are served as they are: drop the hook that would wrap each in
    // Node's compatibility request/response once a 'request' listener (HTTP/1.1) is added.
    this.server.removeAllListeners('newListener');
    this.server.on('stream', (stream, headers) => void this.handle(new StreamRequest(stream, headers), new StreamResponse(stream)));
    this.server.on('request', (req: Request, res: Response) => void this.handle(req, res));
    this.server.on('session', (session: http2.ServerHttp2Session) => {
      session.once('localSettings', () => session.setLocalWindowSize(UPLOAD_WINDOW_PER_CONNECTION));
    });
    // Watches are long-lived; idle keep-alive connections are closed by clients.
    this.server.setTimeout(0);
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        this.address = this.server.address() as AddressInfo;
        resolve(this.address);
      });
    });
  }

  /** Stop listening and end every open connection (watches included). */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }

  private async handle(req: Request, res: Response): Promise<void> {
    res.setHeader('Cache-Control', 'no-cache, private');
    res.setHeader('Audit-Id', randomUUID());
    const { path, query } = parseTarget(req.url ?? '/');
    let output: Negotiated = { format: 'json', pretty: false };
    let labels: RequestLabels | undefined;
    let watchDone: (() => void) | undefined;
    const started = process.hrtime.bigint();
    try {
      if (isHealthPath(path)) return serveHealth(path, query, res, this.options.isReady?.() ?? true);
      if (path === '/version' || path === '/version/') return writeObject(res, 200, versionInfo(), 'json', true);
      let user: UserInfo | undefined;
      if (this.options.authenticator) {
        user = this.options.authenticator.authenticate(req.headers.authorization);
        if (!user) throw errors.unauthorized();
      }
      if (path === '/metrics' && this.options.metrics) {
        const { contentType, body } = await this.options.metrics.render();
        res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      const published = path.startsWith('/openapi/') ? this.options.openapi?.handle(req.url ?? path, req.headers) : undefined;
      if (published) {
        res.writeHead(published.status, published.headers);
        (res as { end(body?: Buffer | string): void }).end(published.body);
        return;
      }
      const info = parseRequestInfo(req.method ?? 'GET', path, query);
      if (info.kind === 'other') return writeNotFound(res);
      if (info.kind !== 'resource') return this.serveDiscovery(info, req, res);
      const endpoint = this.options.registry.lookup(info.group, info.version, info.resource);
      if (!endpoint) return writeNotFound(res);
      const reads = info.verb === 'get' || info.verb === 'list' || info.verb === 'watch';
      output = negotiateOutput(req.headers.accept, {
        tables: reads && info.subresource === undefined && endpoint.table !== undefined,
        yaml: info.verb !== 'watch',
        pretty: query.get('pretty') === 'true',
      });
      const ctx: HandlerContext = {
        req,
        res,
        info,
        query,
        endpoint,
        output,
        user,
        warnings: endpoint.warning ? [endpoint.warning] : [],
        admit: this.options.admit ?? (async () => {}),
      };
      // Warnings gathered while serving (deprecation, unknown fields) go out with the headers, whenever they are written.
      const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
      (res as { writeHead: (...args: unknown[]) => Response }).writeHead = (...args: unknown[]) => {
        addWarnings(res, ctx.warnings);
        return writeHead(...args);
      };
      if (this.options.metrics) {
        labels = this.options.metrics.labels(info, req.headers['content-type']?.split(';')[0], query.has('dryRun'));
        if (info.verb === 'watch') watchDone = this.options.metrics.watchStarted(labels);
      }
      await serveResource(ctx);
    } catch (err) {
      if (!(err instanceof Error && 'code' in err && typeof (err as { code: unknown }).code === 'number')) {
        console.error('kapi: internal error serving', req.method, req.url, err);
      }
      writeError(res, err, output.format);
    } finally {
      watchDone?.();
      if (labels) this.options.metrics!.observe(labels, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  private serveDiscovery(info: DiscoveryRequest, req: Request, res: Response): void {
    const accept = req.headers.accept ?? '';
    const d = this.discovery;
    if ((info.kind === 'api-versions' || info.kind === 'api-groups') && AGGREGATED.test(accept)) {
      const v2 = /g=apidiscovery\.k8s\.io;\s*v=v2(?!beta)/.test(accept) || !/v=v2beta1/.test(accept);
      const apiVersion = v2 ? 'apidiscovery.k8s.io/v2' : 'apidiscovery.k8s.io/v2beta1';
      const body = JSON.stringify(d.aggregated(info.kind === 'api-versions', apiVersion));
      res.writeHead(200, {
        'Content-Type': `application/json;g=apidiscovery.k8s.io;v=${v2 ? 'v2' : 'v2beta1'};as=APIGroupDiscoveryList`,
        'Content-Length': Buffer.byteLength(body),
      });
      res.end(body);
      return;
    }
    const format = /application\/yaml/.test(accept) && !/application\/json/.test(accept) ? 'yaml' : 'json';
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
        doc = d.resourceList(info.group, info.version);
        break;
    }
    if (doc === undefined) return writeNotFound(res);
    writeObject(res, 200, doc, format);
  }
}
