/**
 * The connection to an etcd cluster: one gRPC channel per endpoint (plain or
 * TLS, with an optional client certificate), unary calls bounded in time that
 * fail over between endpoints, and watch streams opened on a live endpoint.
 *
 * Every call carries etcd's `hasleader` metadata, so a member cut off from the
 * quorum answers "no leader" at once (and cancels its watch streams) instead
 * of holding requests until they time out; the client then tries the next
 * endpoint. No call outlives its deadline: when no endpoint answers in time
 * the caller gets StorageUnavailableError.
 */
import { readFileSync } from 'node:fs';
import {
  Client,
  ChannelCredentials,
  Metadata,
  connectivityState,
  credentials,
  type ChannelOptions,
  type ClientDuplexStream,
  type ServiceError,
} from '@grpc/grpc-js';
import { StorageUnavailableError } from '../errors.js';
import { classify, toStorageError } from './errors.js';
import { methods, type PbWatchRequest, type PbWatchResponse, type UnaryMethod } from './proto.js';

/** TLS to etcd: each of the CA, certificate and key given inline (PEM) or as a file (the inline one wins). */
export interface EtcdTlsOptions {
  /** CA certificates (PEM) to verify the servers with; the system's roots when absent. */
  ca?: string | Buffer;
  /** `ca` from a file. */
  caFile?: string;
  /** Client certificate chain and key (PEM), for etcd's --client-cert-auth. */
  cert?: string | Buffer;
  /** `cert` from a file. */
  certFile?: string;
  /** The client certificate's private key (PEM); cert and key go together, one alone is an error when the store opens. */
  key?: string | Buffer;
  /** `key` from a file. */
  keyFile?: string;
  /** The name the server certificates are checked against, when it differs from the endpoint's host. */
  serverName?: string;
}

export interface EtcdClientOptions {
  /** `http://host:port`, `https://host:port`, or `host:port` (TLS when tls is set). */
  endpoints: string[];
  /** TLS for the endpoints (those without a scheme, and `https://` ones). */
  tls?: EtcdTlsOptions;
  /** Bound on one storage call, failover and retries included (default 10 s). */
  requestTimeoutMs?: number;
}

export interface Endpoint {
  readonly url: string;
  readonly client: Client;
}

export type WatchStream = ClientDuplexStream<PbWatchRequest, PbWatchResponse>;

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_BACKOFF_MS = 500;
/** How long a read attempt may take on one endpoint before the next one is tried. */
const MIN_ATTEMPT_MS = 1000;

const CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.max_receive_message_length': -1,
  'grpc.max_send_message_length': -1,
  // Come back quickly after an etcd restart (grpc-js backs off up to 120 s by default).
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  // etcd refuses pings more often than every 5 s (--grpc-keepalive-min-time).
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
};

export class EtcdClient {
  readonly timeoutMs: number;
  private readonly endpoints: Endpoint[];
  private current = 0;
  private closed = false;

  constructor(options: EtcdClientOptions) {
    if (options.endpoints.length === 0) throw new Error('etcd: no endpoints given');
    this.timeoutMs = options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    const tls = options.tls ? loadTls(options.tls) : undefined;
    this.endpoints = options.endpoints.map((url) => {
      const { address, secure } = parseEndpoint(url, tls !== undefined);
      const creds = secure ? credentials.createSsl(tls?.ca, tls?.key, tls?.cert) : credentials.createInsecure();
      const channelOptions = { ...CHANNEL_OPTIONS };
      if (secure && options.tls?.serverName) channelOptions['grpc.ssl_target_name_override'] = options.tls.serverName;
      return { url, client: new Client(address, creds as ChannelCredentials, channelOptions) };
    });
  }

  /**
   * One unary call, on the current endpoint first and then on the others, until
   * it succeeds, fails for good, or the deadline passes. `write` marks calls
   * that must not be repeated once they may have reached etcd.
   */
  async call<Req, Res>(m: UnaryMethod<Req, Res>, request: Req, opts: { write: boolean; deadline?: number }): Promise<Res> {
    const deadline = opts.deadline ?? Date.now() + this.timeoutMs;
    let lastError: unknown;
    for (let attempt = 0; ; attempt++) {
      this.assertOpen();
      const index = this.current;
      const ep = this.endpoints[index];
      if (await this.ready(ep, Math.min(deadline, Date.now() + MIN_ATTEMPT_MS))) {
        const until = opts.write ? deadline : Math.min(deadline, Date.now() + Math.max(MIN_ATTEMPT_MS, this.timeoutMs / 3));
        try {
          return await unary(ep.client, m, request, until);
        } catch (e) {
          const verdict = classify(e);
          if (verdict === 'compacted' || verdict === 'future' || verdict === 'fatal') throw e;
          if (verdict === 'unknown' && opts.write) {
            // The connection broke or hung: whatever became of this write, the next call goes elsewhere.
            this.failed(index);
            throw toStorageError(e, m.path);
          }
          lastError = e;
        }
      } else {
        lastError = new Error(`${ep.url} is not reachable`);
      }
      this.failed(index);
      const left = deadline - Date.now();
      if (left <= 0) {
        const reason = lastError instanceof Error ? ((lastError as ServiceError).details ?? lastError.message) : String(lastError);
        throw new StorageUnavailableError(`etcd: no endpoint answered ${m.path} within ${this.timeoutMs} ms: ${reason}`);
      }
      // Once every endpoint has been tried, wait a little before the next round.
      if ((attempt + 1) % this.endpoints.length === 0) {
        const round = (attempt + 1) / this.endpoints.length;
        await sleep(Math.min(left, 25 * 2 ** Math.min(round, 5), MAX_BACKOFF_MS));
      }
    }
  }

  /** Report that an endpoint failed, so that the next call starts with another one. */
  failed(endpoint: number | Endpoint): void {
    const index = typeof endpoint === 'number' ? endpoint : this.endpoints.indexOf(endpoint);
    if (index === this.current) this.current = (index + 1) % this.endpoints.length;
  }

  /** Wait (until the deadline) for an endpoint with a working connection, trying them in turn; undefined if none. */
  async connected(deadline: number): Promise<Endpoint | undefined> {
    for (let attempt = 0; !this.closed; attempt++) {
      const ep = this.endpoints[this.current];
      if (await this.ready(ep, Math.min(deadline, Date.now() + MIN_ATTEMPT_MS))) return ep;
      this.failed(this.current);
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      if ((attempt + 1) % this.endpoints.length === 0) await sleep(Math.min(left, 100));
    }
    return undefined;
  }

  /** The etcd version a member reports ('' when it does not answer in time). */
  async version(ep: Endpoint, timeoutMs = 1000): Promise<string> {
    try {
      const status = await unary(ep.client, methods.status, {}, Date.now() + timeoutMs);
      return status.version;
    } catch {
      return '';
    }
  }

  openWatch(ep: Endpoint): WatchStream {
    this.assertOpen();
    return ep.client.makeBidiStreamRequest(
      methods.watch.path,
      methods.watch.requestSerialize,
      methods.watch.responseDeserialize,
      leaderMetadata(),
    );
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ep of this.endpoints) ep.client.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageUnavailableError('storage is closed');
  }

  /** Is the endpoint's channel connected, or does it connect before the deadline? False at the first failure. */
  private ready(ep: Endpoint, deadline: number): Promise<boolean> | boolean {
    const channel = ep.client.getChannel();
    if (channel.getConnectivityState(false) === connectivityState.READY) return true;
    return new Promise((resolve) => {
      const check = (): void => {
        let state: connectivityState;
        try {
          state = channel.getConnectivityState(true);
        } catch {
          return resolve(false);
        }
        if (state === connectivityState.READY) return resolve(true);
        if (state === connectivityState.TRANSIENT_FAILURE || state === connectivityState.SHUTDOWN) return resolve(false);
        if (Date.now() >= deadline) return resolve(false);
        channel.watchConnectivityState(state, deadline, (err) => (err ? resolve(false) : check()));
      };
      check();
    });
  }
}

function unary<Req, Res>(client: Client, m: UnaryMethod<Req, Res>, request: Req, deadline: number): Promise<Res> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      m.path,
      m.requestSerialize,
      m.responseDeserialize,
      request,
      leaderMetadata(),
      { deadline },
      (err, res) => (err || res === undefined ? reject(err ?? new Error(`${m.path}: empty response`)) : resolve(res)),
    );
  });
}

function leaderMetadata(): Metadata {
  const md = new Metadata();
  // etcd's clientv3.WithRequireLeader: refuse at once on a member without a leader.
  md.set('hasleader', 'true');
  return md;
}

function parseEndpoint(url: string, tlsConfigured: boolean): { address: string; secure: boolean } {
  const m = /^(https?):\/\/([^/]+)\/?$/.exec(url);
  if (m) return { address: m[2], secure: m[1] === 'https' };
  if (/^[^/]+:\d+$/.test(url)) return { address: url, secure: tlsConfigured };
  throw new Error(`etcd: bad endpoint ${JSON.stringify(url)} (want http://host:port or https://host:port)`);
}

function loadTls(tls: EtcdTlsOptions): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const pick = (inline: string | Buffer | undefined, file: string | undefined) =>
    inline !== undefined ? Buffer.from(inline) : file ? readFileSync(file) : undefined;
  const out = { ca: pick(tls.ca, tls.caFile), cert: pick(tls.cert, tls.certFile), key: pick(tls.key, tls.keyFile) };
  if ((out.cert === undefined) !== (out.key === undefined)) throw new Error('etcd: a client certificate needs both cert and key');
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
