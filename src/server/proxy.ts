/**
 * The aggregator's proxy, as kube-aggregator's: a request for an aggregated group-version goes, as it came
 * (method, path and query, body and the headers that describe it), to a backend address of the APIService's
 * Service over TLS (trusting its caBundle, or not checking with insecureSkipTLSVerify), with the front proxy's
 * client certificate and the authenticated user in X-Remote-User, X-Remote-Group and X-Remote-Extra-<key>
 * (the client's own credentials and impersonation headers are not passed on). The answer streams back as it
 * comes (watches included). A backend that is not available answers 503 `service unavailable`.
 */
import https from 'node:https';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { UserInfo } from './authn.js';

export interface ProxyTarget {
  /** https://<address>:<port> of one of the Service's endpoints. */
  url: URL;
  /** The name the backend's certificate is checked for (`<service>.<namespace>.svc`). */
  servername: string;
  ca?: string;
  insecureSkipTLSVerify: boolean;
}

export interface ProxyClientCertificate {
  cert: string;
  key: string;
}

/** Hop-by-hop headers and what only this server may say (credentials, impersonation, the proxy's own). */
const DROPPED = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'authorization']);
const DROPPED_PREFIXES = ['impersonate-', 'x-remote-', ':'];

/** The headers sent to the backend: the client's (less credentials), and the user the aggregator authenticated. */
export function proxiedHeaders(incoming: IncomingHttpHeaders, user: UserInfo | undefined): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(incoming)) {
    const key = k.toLowerCase();
    if (v === undefined || DROPPED.has(key) || DROPPED_PREFIXES.some((p) => key.startsWith(p))) continue;
    out[key] = v;
  }
  if (user) {
    out['x-remote-user'] = user.name;
    if (user.uid) out['x-remote-uid'] = user.uid;
    if (user.groups.length > 0) out['x-remote-group'] = [...user.groups];
    for (const [k, values] of Object.entries(user.extra ?? {})) out[`x-remote-extra-${encodeURIComponent(k)}`] = [...values];
  }
  return out;
}

/** The backend's answer piped to the client; resolves when the exchange is over (either side may end it). */
export function proxy(
  req: { on(event: string, fn: (...args: never[]) => void): unknown; method?: string; url?: string; headers: IncomingHttpHeaders },
  res: { writeHead(status: number, headers: OutgoingHttpHeaders): unknown; write(chunk: Buffer): unknown; end(body?: string): unknown; headersSent?: boolean; on?(event: 'close', fn: () => void): unknown },
  target: ProxyTarget,
  client: ProxyClientCertificate | undefined,
  user: UserInfo | undefined,
): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve();
    };
    const upstream = https.request(
      {
        protocol: 'https:',
        hostname: target.url.hostname.replace(/^\[|\]$/g, ''),
        port: target.url.port,
        method: req.method,
        path: req.url,
        headers: proxiedHeaders(req.headers, user),
        servername: /^[\d.]+$|:/.test(target.servername) ? undefined : target.servername,
        ca: target.ca,
        rejectUnauthorized: !target.insecureSkipTLSVerify,
        ...(target.insecureSkipTLSVerify ? { checkServerIdentity: () => undefined } : {}),
        cert: client?.cert,
        key: client?.key,
        agent: false,
      },
      (answer) => {
        const headers: OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !DROPPED.has(k)) headers[k] = v;
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.on('data', (chunk: Buffer) => res.write(chunk));
        answer.on('end', () => {
          res.end();
          finish();
        });
        answer.on('error', () => {
          res.end();
          finish();
        });
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) {
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
        res.end(`Error trying to reach service: '${err.message}'\n`);
      } else res.end();
      finish();
    });
    // The client going away ends the backend's exchange too (a watch that is closed).
    res.on?.('close', () => {
      upstream.destroy();
      finish();
    });
    // The body as it comes (HTTP/1.1 and HTTP/2 requests alike: both are event emitters of chunks).
    req.on('data', (chunk: Buffer) => upstream.write(chunk));
    req.on('end', () => upstream.end());
    req.on('error', () => upstream.destroy());
    if ((req as { readableEnded?: boolean }).readableEnded) upstream.end();
  });
}

/** kube-aggregator's answer for an APIService that is not available. */
export function writeServiceUnavailable(res: { writeHead(status: number, headers: OutgoingHttpHeaders): unknown; end(body?: string): unknown }): void {
  res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
  res.end('service unavailable\n');
}
