/**
 * The request pipeline: filters composed once around the route, each seeing
 * the exchange and calling the next, as apiserver's handler chain
 * (`server/config.go` DefaultBuildHandlerChain) wraps its handlers.
 *
 * The chain: request log → authentication → authorization (authz.ts) →
 * in-flight limits → request timeout → route; an exception that leaves it
 * meets the last-resort handler (server.ts). The filters here: the request
 * log, in-flight limits and the request timeout; the last-resort handler,
 * authentication and routing are in server.ts.
 */
import type { UserInfo } from '../api/authentication.js';
import type { Request, Response } from './exchange.js';
import type { RequestInfo } from './request-info.js';
import { goQuote } from '../machinery/go-text.js';
import { errors, type Status } from '../machinery/status.js';
import { writeError, writePlain } from './respond.js';
import type { Duplex } from 'node:stream';

/** One request as it passes the filters. */
export interface Exchange {
  readonly req: Request;
  readonly res: Response;
  readonly auditId: string;
  /** process.hrtime.bigint() when the request arrived. */
  readonly started: bigint;
  path: string;
  query: URLSearchParams;
  info?: RequestInfo;
  user?: UserInfo;
  /** The authenticated user, when the request impersonates `user` (the log names both). */
  requester?: UserInfo;
  /** Set when the request timed out and its answer was sent: the handler's later writes are dropped. */
  timedOut?: boolean;
  /** Made inside the process (the in-process controllers' client, loopback.ts). */
  loopback?: boolean;
  /** A loopback request of the server's own controllers (not an embedder's client). */
  internal?: boolean;
  /** The authorizer's decision, once made (for the audit). */
  authorization?: { decision: string; reason: string };
  /** Annotations for the audit event that serving added (admission webhooks' and policies'). */
  auditAnnotations?: Record<string, string>;
  /** The Status a failed request was answered with (for the audit). */
  status?: Status;
  /** An HTTP/1.1 request to switch protocols (exec, attach, websockets): its connection, and what came after its headers. */
  upgrade?: { socket: Duplex; head: Buffer };
}

export type Handler = (x: Exchange) => Promise<void>;
export type Filter = (x: Exchange, next: Handler) => Promise<void>;

/** The handler that runs `filters` in order, then `last`: built once, no closures per request. */
export function compose(filters: readonly Filter[], last: Handler): Handler {
  return filters.reduceRight<Handler>((next, filter) => (x) => filter(x, next), last);
}

/** Subresources that stream as long as the client wants (upstream's BasicLongRunningRequestCheck). */
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** A request that holds no in-flight seat and has no request timeout, as upstream's long-running check: watches and the streaming subresources. */
export function isLongRunning(x: Exchange): boolean {
  return x.info?.kind === 'resource' && (x.info.verb === 'watch' || (x.info.subresource !== undefined && LONG_RUNNING_SUBRESOURCES.has(x.info.subresource)));
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const SYSTEM_MASTERS = 'system:masters';

export interface Limits {
  /** --max-requests-inflight: read-only requests served at once (0: no limit). */
  maxRequestsInFlight: number;
  /** --max-mutating-requests-inflight: mutating requests served at once (0: no limit). */
  maxMutatingRequestsInFlight: number;
  /** --max-watches: watches open at once (0: no limit). */
  maxWatches: number;
  /** --request-timeout in milliseconds, for requests that are not long-running (0: none). */
  requestTimeoutMs: number;
}

/** upstream's tooManyRequests: a plain-text 429 with Retry-After: 1. */
function tooManyRequests(res: Response): void {
  writePlain(res, 429, 'Too many requests, please try again later.', { 'Retry-After': '1' });
}

/**
 * In-flight limits as apiserver's WithMaxInFlightLimit: mutating and
 * read-only requests each hold a seat while served (body reading included),
 * long-running requests hold none, and when the seats are taken a member of
 * system:masters is served all the same ("so powerful that they should always
 * get an answer").
 * Watches have a limit of their own (kapi's), since each holds memory for as
 * long as it is open.
 */
export function inFlightLimits(limits: Limits): Filter {
  let readOnly = 0;
  let mutating = 0;
  let watches = 0;
  return async (x, next) => {
    const longRunning = isLongRunning(x);
    const isMutating = !longRunning && MUTATING.has(x.req.method ?? 'GET');
    const limit = longRunning ? limits.maxWatches : isMutating ? limits.maxMutatingRequestsInFlight : limits.maxRequestsInFlight;
    // --max-watches is kapi's bound on what clients hold open; the in-process controllers' few watches are the server's own.
    if (limit <= 0 || (longRunning && x.loopback)) return next(x);
    const held = longRunning ? watches : isMutating ? mutating : readOnly;
    if (held >= limit) return x.user?.groups.includes(SYSTEM_MASTERS) ? next(x) : tooManyRequests(x.res);
    if (longRunning) {
      // Open for long: a reaction to its end, not a suspended frame, holds the seat's release.
      watches++;
      return next(x).finally(() => watches--);
    }
    if (isMutating) mutating++;
    else readOnly++;
    try {
      await next(x);
    } finally {
      if (isMutating) mutating--;
      else readOnly--;
    }
  };
}

const TIMEOUT_BODY = '{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}\n';

/** How often deadlines are checked: a request times out within this much after its deadline. */
const TIMEOUT_TICK_MS = 100;

/**
 * The request timeout (--request-timeout; a shorter `?timeout=` of the request
 * wins): a request not answered in time gets upstream's 504, and whatever its
 * handler writes afterwards is dropped; a request whose body has not all come
 * is then ended (`endExchange`), so that a stalled upload holds nothing; an
 * answer whose headers went out but not all of its body is broken off (`abortExchange`).
 * Long-running requests have their own timeouts. Deadlines are checked by one
 * timer for all requests, not one timer each.
 */
export function requestTimeout(defaultMs: number, endExchange: (x: Exchange) => void, abortExchange: (x: Exchange) => void): Filter {
  const deadlines = new Map<Exchange, number>();
  let ticker: NodeJS.Timeout | undefined;
  const expire = (x: Exchange) => {
    if (x.res.writableEnded) return;
    // A connection that switched protocols (an aggregated server's console session) is not an answer, and the
    // in-process client's answer is not on a connection.
    if (x.res.headersSent && (x.upgrade || x.loopback)) return;
    if (x.res.headersSent) {
      // An answer still going out (a large one to a client that reads slowly, or not at all): broken off, as
      // upstream's timeout filter aborts its handler (http.ErrAbortHandler), so that it holds its seat no longer.
      x.timedOut = true;
      abortExchange(x);
      return;
    }
    // As upstream's timeout filter writes it: the Status without kind and apiVersion, no Content-Type of its own.
    x.res.writeHead(504, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': TIMEOUT_BODY.length });
    x.res.end(TIMEOUT_BODY);
    x.timedOut = true;
    if (!x.req.readableEnded) endExchange(x);
  };
  const tick = () => {
    const now = performance.now();
    for (const [x, at] of deadlines) {
      if (at > now) continue;
      deadlines.delete(x);
      expire(x);
    }
    if (deadlines.size === 0) {
      clearInterval(ticker);
      ticker = undefined;
    }
  };
  return async (x, next) => {
    if (isLongRunning(x)) return next(x);
    let ms = defaultMs;
    const asked = x.query.get('timeout');
    if (asked !== null && asked !== '') {
      const parsed = parseGoDuration(asked);
      if (parsed === undefined) {
        return writeError(x.res, errors.badRequest(`invalid timeout specified in the request URL - time: invalid duration ${goQuote(asked.length > 64 ? asked.slice(0, 64) : asked)}`));
      }
      if (parsed > 0 && (ms <= 0 || parsed < ms)) ms = parsed;
    }
    if (ms <= 0) return next(x);
    deadlines.set(x, performance.now() + ms);
    if (!ticker) {
      ticker = setInterval(tick, Math.min(TIMEOUT_TICK_MS, ms));
      ticker.unref();
    }
    try {
      await next(x);
    } catch (err) {
      // The handler goes on after a timeout (as upstream's does); its failure then is nobody's answer.
      if (!x.timedOut) throw err;
    } finally {
      deadlines.delete(x);
    }
  };
}

/** The peer's address as `ip:port` (brackets around IPv6). */
function remoteOf(socket: { remoteAddress?: string; remotePort?: number } | undefined): string {
  const ip = socket?.remoteAddress ?? '';
  return ip.includes(':') ? `[${ip}]:${socket?.remotePort ?? 0}` : `${ip}:${socket?.remotePort ?? 0}`;
}

const MAX_LOGGED_CHARS = 2048;

/** A value for a log line: quoted, escaped (no control characters get through), cut to a bound. */
export function logQuote(s: string): string {
  const cut = s.length > MAX_LOGGED_CHARS ? `${s.slice(0, MAX_LOGGED_CHARS)}...` : s;
  return JSON.stringify(cut).replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function verbOf(x: Exchange): string {
  const info = x.info;
  if (info?.kind !== 'resource') return x.req.method ?? 'GET';
  switch (info.verb) {
    case 'list':
      return 'LIST';
    case 'watch':
      return 'WATCH';
    default:
      return x.req.method ?? 'GET';
  }
}

/** klog's header: `I1125 17:01:02.123456   <pid> httplog.go:134] `. */
function klogHeader(now: Date): string {
  const p2 = (n: number) => String(n).padStart(2, '0');
  const micros = String(now.getUTCMilliseconds() * 1000).padStart(6, '0');
  return `I${p2(now.getUTCMonth() + 1)}${p2(now.getUTCDate())} ${p2(now.getUTCHours())}:${p2(now.getUTCMinutes())}:${p2(now.getUTCSeconds())}.${micros} ${String(process.pid).padStart(7)} httplog.go:134] `;
}

/**
 * The request log at -v=2 and above, one line per request when it ends, in
 * the form of kube-apiserver's httplog: verb, URI, latency, user agent, audit
 * id, source address, user and status. Every value is quoted and bounded.
 */
export function requestLog(write: (line: string) => void): Filter {
  return async (x, next) => {
    try {
      await next(x);
    } finally {
      const end = () => {
        const latency = Number(process.hrtime.bigint() - x.started) / 1e6;
        const ua = x.req.headers['user-agent'];
        const ct = x.req.headers['content-type'];
        write(
          `${klogHeader(new Date())}"HTTP" verb=${logQuote(verbOf(x))} URI=${logQuote(x.req.url ?? '')} latency=${logQuote(`${latency.toFixed(3)}ms`)} ` +
            `userAgent=${logQuote(typeof ua === 'string' ? ua : '')} contentType=${logQuote(typeof ct === 'string' ? ct : '')} audit-ID=${logQuote(x.auditId)} srcIP=${logQuote(remoteOf(x.req.socket ?? undefined))} ` +
            `user=${logQuote(x.user?.name ?? '')} resp=${x.res.statusCode}\n`,
        );
      };
      // Logged once the answer is out: a watch when its stream closes, a request that threw once the
      // last-resort handler (outside this filter) has answered it.
      if (!x.res.writableEnded && !x.res.destroyed) x.res.once('close', end);
      else end();
    }
  };
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION = /^([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)/;

/** Go's time.ParseDuration, in milliseconds; undefined where Go fails. Bounded: at most 64 characters. */
export function parseGoDuration(s: string): number | undefined {
  if (s.length === 0 || s.length > 64) return undefined;
  let rest = s;
  let sign = 1;
  if (rest[0] === '-' || rest[0] === '+') {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  while (rest !== '') {
    const m = DURATION.exec(rest);
    if (!m || m[1] === '' || m[1] === '.') return undefined;
    total += Number(m[1]) * DURATION_UNITS[m[2]];
    rest = rest.slice(m[0].length);
  }
  // Go's Duration is an int64 of nanoseconds.
  if (total * 1e6 > 9.223372036854776e18) return undefined;
  return sign * total;
}
