/**
 * The request and response the handlers see: what they use of Node's HTTP/1
 * objects, and a thin version of the same over a raw HTTP/2 stream.
 *
 * HTTP/2 requests are served from the stream itself rather than through
 * Node's compatibility layer (Http2ServerRequest/Response), which wraps every
 * stream in two more stream objects: a few percent of every request's CPU.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';

/** A stream event's listener, as Node types them. */
type Listener = Parameters<ServerHttp2Stream['on']>[1];

export interface Request {
  readonly headers: IncomingHttpHeaders;
  readonly method?: string;
  readonly url?: string;
  readonly readableEnded: boolean;
  /** The peer's address (HTTP/2: the session's socket). */
  readonly socket?: { remoteAddress?: string | undefined; remotePort?: number | undefined } | null | undefined;
  on(event: string, listener: Listener): unknown;
  once(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
  resume(): unknown;
}

export interface Response {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
  /** Bytes written but not yet sent (watch back-pressure). */
  readonly writableLength: number;
  setHeader(name: string, value: string | number | readonly string[]): unknown;
  writeHead(code: number, headers?: OutgoingHttpHeaders): unknown;
  /** Send the status and headers now (a watch, before its first event). */
  flushHeaders(): void;
  write(chunk: string | Buffer): boolean;
  /** Hold writes until uncork, then send them as one (a watch's events of one commit). */
  cork(): void;
  uncork(): void;
  end(chunk?: string | Buffer): unknown;
  /** 'drain': what was written went out (a write gave false). */
  once(event: 'close' | 'drain', listener: () => void): unknown;
  /** Break the answer off mid-body: the client sees it incomplete (Node's HTTP/1.1 responses have none: see breakOff). */
  breakOff?(): void;
}

/** An HTTP/2 request: its stream, with the method and target from the pseudo-headers. */
export class StreamRequest implements Request {
  readonly method: string;
  readonly url: string;

  constructor(
    private readonly stream: ServerHttp2Stream,
    readonly headers: IncomingHttpHeaders,
    /** The header lines as sent, name and value in turn (repeated headers kept apart). */
    readonly rawHeaders: string[] = [],
  ) {
    this.method = (headers[':method'] as string | undefined) ?? 'GET';
    this.url = (headers[':path'] as string | undefined) ?? '/';
  }

  get readableEnded(): boolean {
    return this.stream.readableEnded;
  }

  get socket(): { remoteAddress?: string | undefined; remotePort?: number | undefined } | undefined {
    return this.stream.session?.socket;
  }

  on(event: string, listener: Listener): this {
    this.stream.on(event, listener);
    return this;
  }

  once(event: string, listener: Listener): this {
    this.stream.once(event, listener);
    return this;
  }

  off(event: string, listener: Listener): this {
    this.stream.off(event, listener);
    return this;
  }

  resume(): this {
    this.stream.resume();
    return this;
  }
}

const STREAM_CLOSED = new Error('the HTTP/2 stream is closed');
/** Why a stream is reset mid-answer (made once: nobody reads it). */
const BROKEN_OFF = new Error('the answer was broken off');

type Destroy = (this: ServerHttp2Stream, err: Error | null, callback: (err?: Error | null) => void) => void;
let streamDestroy: Destroy | undefined;

/**
 * A stream closes (END_STREAM sent both ways) and is destroyed before the
 * callback of its last write has run, and Node 20 then builds an
 * ERR_STREAM_DESTROYED, stack trace included, that nobody reads: about a sixth
 * of a bare HTTP/2 server's CPU. A stream that holds an error when it is
 * destroyed makes none; the error is never seen, as stream errors are ignored.
 */
function destroyQuietly(this: ServerHttp2Stream, err: Error | null, callback: (err?: Error | null) => void): void {
  const state = (this as unknown as { _writableState?: { errored: Error | null } })._writableState;
  if (state && !state.errored) state.errored = STREAM_CLOSED;
  streamDestroy!.call(this, err, callback);
}

function quietOnDestroy(stream: ServerHttp2Stream): void {
  const s = stream as unknown as { _destroy: Destroy };
  streamDestroy ??= s._destroy;
  if (s._destroy === streamDestroy) s._destroy = destroyQuietly;
}

/**
 * An HTTP/2 response: headers gather until the first write, then go out as one
 * HEADERS frame. A stream the client has reset takes no more writes (they are
 * dropped, as the compatibility layer drops them).
 */
/** Headers gathered until the response's head is written (HTTP/2 streams, loopback exchanges). */
export abstract class PendingHeaders {
  statusCode = 200;
  protected readonly pending: OutgoingHttpHeaders = {};

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.pending[name.toLowerCase()] = value as string | number | string[];
    return this;
  }

  writeHead(code: number, headers?: OutgoingHttpHeaders): this {
    this.statusCode = code;
    if (headers) for (const name in headers) this.pending[name.toLowerCase()] = headers[name];
    this.headReady();
    return this;
  }

  /** writeHead was called: send the head now, or at the first write. */
  protected abstract headReady(): void;
}

export class StreamResponse extends PendingHeaders implements Response {
  constructor(private readonly stream: ServerHttp2Stream) {
    super();
    // Stream errors (a reset, a write after close) end the exchange; the handlers see 'close'.
    stream.on('error', () => {});
    quietOnDestroy(stream);
  }

  get headersSent(): boolean {
    return this.stream.headersSent;
  }

  get writableEnded(): boolean {
    return this.stream.writableEnded;
  }

  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  get writableLength(): number {
    return this.stream.writableLength;
  }

  protected headReady(): void {
    this.respond(false);
  }

  flushHeaders(): void {
    this.respond(false);
  }

  write(chunk: string | Buffer): boolean {
    this.respond(false);
    return this.open() ? this.stream.write(chunk) : false;
  }

  cork(): void {
    this.stream.cork();
  }

  uncork(): void {
    this.stream.uncork();
  }

  end(chunk?: string | Buffer): this {
    if (this.stream.writableEnded) return this;
    const empty = chunk === undefined || chunk.length === 0;
    // A response without a body ends with its HEADERS frame.
    if (!this.stream.headersSent && empty) this.respond(true);
    else {
      this.respond(false);
      if (this.open()) this.stream.end(chunk);
    }
    return this;
  }

  /**
   * Break the exchange off (RST_STREAM, INTERNAL_ERROR): what was sent is not a whole answer. Destroyed with an error,
   * not closed: close() ends the stream first, and a client whose data was all sent would see a whole answer.
   */
  destroy(): void {
    if (!this.stream.destroyed) this.stream.destroy(BROKEN_OFF);
  }

  breakOff(): void {
    this.destroy();
  }

  once(event: 'close' | 'drain', listener: () => void): this {
    this.stream.once(event, listener);
    return this;
  }

  /** Close the stream once what was written is flushed (the request's body, still coming, is not read). */
  closeWhenFlushed(): void {
    const close = () => {
      if (!this.stream.destroyed) this.stream.close(0x0);
    };
    if (this.stream.writableFinished) close();
    else this.stream.once('finish', close);
  }

  /** End the stream with RST_STREAM INTERNAL_ERROR: for when no answer can be written. */
  reset(): void {
    if (!this.stream.destroyed) this.stream.close(0x2);
  }

  private open(): boolean {
    return !this.stream.destroyed && !this.stream.closed;
  }

  private respond(endStream: boolean): void {
    if (this.stream.headersSent || !this.open()) return;
    this.pending[':status'] = this.statusCode;
    this.stream.respond(this.pending, { endStream });
  }
}
