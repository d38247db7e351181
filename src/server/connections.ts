/**
 * Idle connections, closed as Go's server closes them after IdleTimeout: a
 * connection (an HTTP/1.1 socket or an HTTP/2 session) with no request open
 * for idleMs is closed, whether it ever sent a request or not; one with a
 * request open (a watch that is quiet for hours) is not. One timer checks all
 * connections; a request costs a counter. Expired connections are closed a
 * hundred at a time with the event loop polling between (closing 10,000 at
 * once stalls it for most of a second).
 */
const CLOSE_BATCH = 100;

export interface Connection {
  open: number;
  /** performance.now() when the last request ended (or the connection opened). */
  idleSince: number;
  close(): void;
}

export class IdleConnections {
  private readonly connections = new Set<Connection>();
  private ticker?: NodeJS.Timeout;

  constructor(private readonly idleMs: number) {}

  /** A new connection; `close` ends it (GOAWAY for HTTP/2). Call `forget` when it is gone. */
  track(close: () => void): Connection {
    const conn: Connection = { open: 0, idleSince: performance.now(), close };
    if (this.idleMs <= 0) return conn;
    this.connections.add(conn);
    if (!this.ticker) {
      this.ticker = setInterval(() => this.sweep(), Math.max(10, Math.min(1000, this.idleMs / 4)));
      this.ticker.unref();
    }
    return conn;
  }

  forget(conn: Connection): void {
    this.connections.delete(conn);
    if (this.connections.size === 0 && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  opened(conn: Connection | undefined): void {
    if (conn) conn.open++;
  }

  closed(conn: Connection | undefined): void {
    if (conn && --conn.open === 0) conn.idleSince = performance.now();
  }

  private sweep(): void {
    const now = performance.now();
    let closed = 0;
    for (const conn of this.connections) {
      if (conn.open === 0 && now - conn.idleSince >= this.idleMs) {
        if (closed++ === CLOSE_BATCH) {
          setImmediate(() => this.sweep());
          return;
        }
        this.forget(conn);
        conn.close();
      }
    }
  }
}

/**
 * Sockets to destroy, a batch per turn of the loop: destroying one (TLS state freed, handle closed) costs tens of
 * µs, and thousands of clients closing at once would otherwise hold the loop for all of them in one go.
 */
export class BatchedCloser {
  private readonly pending: Array<{ destroy(): void }> = [];
  private scheduled = false;

  add(socket: { destroy(): void }): void {
    this.pending.push(socket);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    const batch = this.pending.splice(0, CLOSE_BATCH);
    for (const s of batch) s.destroy();
    if (this.pending.length > 0) setImmediate(() => this.drain());
    else this.scheduled = false;
  }
}
