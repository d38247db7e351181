/**
 * Loopback exchanges: a request made inside the process that is served by the
 * same handler as a network one (every filter: authentication, authorization,
 * limits, timeouts; admission, managed fields), with no socket or TLS between.
 * The in-process controllers' client talks to the server through it, as
 * upstream's loopback client does over a local connection.
 */
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { PendingHeaders, type Request, type Response } from './exchange.js';
import type { LoopbackRequest, LoopbackSink } from '../api/serving.js';


export type LoopbackHandler = (req: Request, res: Response) => Promise<void>;

/** Serve one loopback request; the returned function abandons it (the server sees its client go). */
export function loopbackExchange(handle: LoopbackHandler, request: LoopbackRequest, sink: LoopbackSink): () => void {
  const headers: IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(request.headers)) headers[k.toLowerCase()] = v;
  if (request.body) headers['content-length'] = String(request.body.length);
  const req = Object.assign(Readable.from(request.body ? [request.body] : [], { objectMode: false }), {
    headers,
    method: request.method,
    url: request.path,
    socket: null,
  });
  const res = new LoopbackResponse(sink);
  void handle(req as unknown as Request, res);
  return () => {
    res.destroy();
    req.destroy();
  };
}

class LoopbackResponse extends PendingHeaders implements Response {
  headersSent = false;
  writableEnded = false;
  destroyed = false;
  readonly writableLength = 0;
  private readonly events = new EventEmitter();

  constructor(private readonly sink: LoopbackSink) {
    super();
  }

  /** The head goes to the client with the first write (or the end). */
  protected headReady(): void {}

  once(event: 'close', listener: () => void): this {
    this.events.once(event, listener);
    return this;
  }

  private emitClose(): void {
    this.events.emit('close');
  }

  flushHeaders(): void {
    this.sendHead();
  }

  write(chunk: string | Buffer): boolean {
    return this.send(chunk);
  }

  /** The body's bytes to the client (end() uses it too, not write(), which a filter may have wrapped). */
  private send(chunk: string | Buffer): boolean {
    this.sendHead();
    if (this.destroyed || this.writableEnded) return false;
    this.sink.data(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    return true;
  }

  cork(): void {}

  uncork(): void {}

  end(chunk?: string | Buffer): this {
    if (this.writableEnded) return this;
    if (chunk !== undefined && chunk.length > 0) this.send(chunk);
    this.sendHead();
    this.writableEnded = true;
    if (!this.destroyed) this.sink.end();
    this.emitClose();
    return this;
  }

  /** The server breaks the answer off: the client gets the body so far, ended (it does not parse). */
  breakOff(): void {
    this.end();
  }

  /** The client went away: writes are dropped, and the handler hears 'close'. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (!this.writableEnded) this.emitClose();
  }

  private sendHead(): void {
    if (this.headersSent) return;
    this.headersSent = true;
    if (!this.destroyed) this.sink.head(this.statusCode, this.pending);
  }
}
