/**
 * A client of any API server from a kubeconfig, as client-go's clientcmd reads one: the current (or a
 * named) context's cluster (server, certificate-authority(-data), insecure-skip-tls-verify) and user
 * (token, tokenFile, client-certificate(-data) and client-key(-data)); with no kubeconfig in a Pod, the
 * in-cluster configuration (the ServiceAccount's token, re-read as it is rotated, and CA). Requests go over
 * HTTPS (HTTP/1.1, kept alive); a connection failure answers as a 503 Status, as the server's own errors do.
 */
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';
import { Client, type Transport } from './client.js';

/** Where `connect` finds its server and credentials: a kubeconfig and context, as kubectl's --kubeconfig and --context. */
export interface ConnectOptions {
  /** The kubeconfig file (default: $KUBECONFIG's first file, else ~/.kube/config; `in-cluster`: the Pod's ServiceAccount). */
  kubeconfig?: string;
  /** The context to use (default: current-context). */
  context?: string;
  /** The User-Agent; its product names this client's writes in managedFields (default `kapi-sdk`). */
  userAgent?: string;
}

interface Resolved {
  server: URL;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string | (() => string | undefined);
  insecure: boolean;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A token file read again every minute (kubelet rotates projected ServiceAccount tokens). */
function tokenFromFile(path: string): () => string | undefined {
  let cached: { token: string; at: number } | undefined;
  return () => {
    if (!cached || Date.now() - cached.at > 60_000) cached = { token: readFileSync(path, 'utf8').trim(), at: Date.now() };
    return cached.token;
  };
}

/** rest.InClusterConfig: the API server of the Pod's cluster, as its ServiceAccount. */
export function inClusterConfig(): Resolved {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined');
  const token = tokenFromFile(join(SERVICE_ACCOUNT_DIR, 'token'));
  token();
  return { server: new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}`), ca: readFileSync(join(SERVICE_ACCOUNT_DIR, 'ca.crt')), token, insecure: false };
}

type Named = { name?: string; [k: string]: unknown };

function named(list: unknown, name: string, what: string): Record<string, unknown> {
  const found = (Array.isArray(list) ? (list as Named[]) : []).find((e) => e?.name === name);
  if (!found) throw new Error(`kubeconfig: no ${what} named ${JSON.stringify(name)}`);
  const body = found[what];
  return body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
}

/** What a kubeconfig's context says about how to reach its server. */
export function resolveKubeconfig(path: string, context?: string): Resolved {
  const config = parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  if (!config || typeof config !== 'object') throw new Error(`kubeconfig ${path}: not a kubeconfig`);
  const ctxName = context ?? (typeof config['current-context'] === 'string' ? config['current-context'] : '');
  if (!ctxName) throw new Error(`kubeconfig ${path}: no current-context, and no context asked for`);
  const ctx = named(config.contexts, ctxName, 'context');
  const cluster = named(config.clusters, String(ctx.cluster ?? ''), 'cluster');
  const user = ctx.user ? named(config.users, String(ctx.user), 'user') : {};
  const base = dirname(path);
  const file = (p: unknown) => readFileSync(isAbsolute(String(p)) ? String(p) : join(base, String(p)));
  const data = (inline: unknown, fromFile: unknown): Buffer | undefined =>
    typeof inline === 'string' && inline ? Buffer.from(inline, 'base64') : typeof fromFile === 'string' && fromFile ? file(fromFile) : undefined;
  if (typeof cluster.server !== 'string' || !cluster.server) throw new Error(`kubeconfig ${path}: cluster of context ${JSON.stringify(ctxName)} has no server`);
  if (user.exec || user['auth-provider']) throw new Error(`kubeconfig ${path}: user of context ${JSON.stringify(ctxName)} uses an exec or auth-provider plugin, which kapi's client does not run`);
  const tokenFile = typeof user.tokenFile === 'string' && user.tokenFile ? (isAbsolute(user.tokenFile) ? user.tokenFile : join(base, user.tokenFile)) : undefined;
  const token = typeof user.token === 'string' && user.token ? user.token : tokenFile ? tokenFromFile(tokenFile) : undefined;
  const insecure = cluster['insecure-skip-tls-verify'] === true;
  if (insecure && (cluster['certificate-authority-data'] || cluster['certificate-authority'])) {
    throw new Error(`kubeconfig ${path}: specifying a root certificates file with the insecure flag is not allowed`);
  }
  return {
    server: new URL(cluster.server),
    ca: data(cluster['certificate-authority-data'], cluster['certificate-authority']),
    cert: data(user['client-certificate-data'], user['client-certificate']),
    key: data(user['client-key-data'], user['client-key']),
    token,
    insecure,
  };
}

/** An HTTPS transport to one server. */
export function httpsTransport(target: Resolved): Transport & { close(): void } {
  const agent = new https.Agent({ keepAlive: true, ca: target.ca, cert: target.cert, key: target.key, rejectUnauthorized: !target.insecure, maxSockets: 64 });
  const prefix = target.server.pathname.replace(/\/$/, '');
  const transport = ((request, sink) => {
    let done = false;
    const fail = (err: Error) => {
      if (done) return;
      done = true;
      const body = Buffer.from(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 503, reason: 'ServiceUnavailable', message: err.message }));
      sink.head(503, { 'content-type': 'application/json' });
      sink.data(body);
      sink.end();
    };
    const req = https.request(
      { protocol: 'https:', hostname: target.server.hostname, port: target.server.port || 443, path: prefix + request.path, method: request.method, headers: request.headers, agent },
      (res) => {
        sink.head(res.statusCode ?? 0, res.headers);
        res.on('data', (chunk: Buffer) => {
          if (!done) sink.data(chunk);
        });
        res.on('end', () => {
          if (done) return;
          done = true;
          sink.end();
        });
        res.on('error', fail);
        res.on('aborted', () => fail(new Error('the server closed the connection')));
      },
    );
    req.on('error', fail);
    req.end(request.body);
    return () => {
      done = true;
      req.destroy();
    };
  }) as Transport & { close(): void };
  transport.close = () => agent.destroy();
  return transport;
}

/**
 * A client of the server a kubeconfig names. `close()` ends its connections. Throws when the kubeconfig
 * cannot be read, lacks the context or its server, or its user needs an exec or auth-provider plugin.
 */
export function connect(opts: ConnectOptions = {}): Client & { close(): void } {
  const path = opts.kubeconfig ?? process.env.KUBECONFIG?.split(process.platform === 'win32' ? ';' : ':').find(Boolean) ?? join(homedir(), '.kube', 'config');
  // No kubeconfig named, none at home, and in a Pod: the in-cluster configuration, as client-go's default loading.
  const inCluster = opts.kubeconfig === 'in-cluster' || (!opts.kubeconfig && !process.env.KUBECONFIG && !existsSync(path) && process.env.KUBERNETES_SERVICE_HOST);
  const target = inCluster ? inClusterConfig() : resolveKubeconfig(path, opts.context);
  const transport = httpsTransport(target);
  const client = new Client(transport, target.token, opts.userAgent ?? 'kapi-sdk') as Client & { close(): void };
  client.close = () => transport.close();
  return client;
}
