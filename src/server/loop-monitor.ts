/**
 * The event loop's delay, watched: kapi serves every request on one loop, so a step that computes for long
 * holds every other request (and /healthz) that long. A timer that should fire every `intervalMs` measures how
 * late it fires; each delay goes to a histogram (`kapi_event_loop_delay_seconds` on /metrics), and a delay over
 * `stallMs` is a stall, told to the server with the requests that were being served while it lasted (those in
 * flight, and those that finished during it), so that the log can name them and their users.
 *
 * The timer is unref'd (it never keeps a process alive) and costs a few microseconds per tick.
 */
import { performance } from 'node:perf_hooks';

export interface LoopStall {
  /** How long the loop was held, in ms (the timer's lateness). */
  ms: number;
  /** When the hold began and ended (performance.now()). */
  start: number;
  end: number;
}

export interface LoopMonitorOptions {
  intervalMs?: number;
  stallMs?: number;
  /** Every tick's delay, in seconds. */
  onDelay?: (seconds: number) => void;
  onStall?: (stall: LoopStall) => void;
}

export class LoopMonitor {
  private timer?: NodeJS.Timeout;
  private last = 0;
  readonly intervalMs: number;
  readonly stallMs: number;

  constructor(private readonly options: LoopMonitorOptions = {}) {
    this.intervalMs = options.intervalMs ?? 20;
    this.stallMs = options.stallMs ?? 100;
  }

  start(): void {
    if (this.timer) return;
    this.last = performance.now();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    const now = performance.now();
    const late = Math.max(0, now - this.last - this.intervalMs);
    this.last = now;
    this.options.onDelay?.(late / 1000);
    if (late >= this.stallMs) this.options.onStall?.({ ms: late, start: now - late, end: now });
  }
}

/** What the stall log needs of a request. */
export interface Served {
  /** performance.now() at its start, and at its end once it ended. */
  start: number;
  end?: number;
  /** The request as the log names it (read when a stall is logged: the user is known by then). */
  describe(): string;
}

/**
 * The requests being served, and a few that just finished: who was being served while a stall lasted.
 * Adding and removing is O(1); the finished ones are a ring of fixed size.
 */
export class ServedRequests {
  private readonly open = new Set<Served>();
  private readonly finished: Array<Served | undefined>;
  private next = 0;

  constructor(finishedKept = 64) {
    this.finished = new Array<Served | undefined>(finishedKept);
  }

  begin(s: Served): void {
    this.open.add(s);
  }

  end(s: Served): void {
    if (!this.open.delete(s)) return;
    s.end = performance.now();
    this.finished[this.next] = s;
    this.next = (this.next + 1) % this.finished.length;
  }

  /** The requests served while the stall lasted: open ones begun before it ended, finished ones that ended after it began. */
  during(stall: LoopStall): Served[] {
    const out: Served[] = [];
    for (const s of this.open) if (s.start <= stall.end) out.push(s);
    for (const s of this.finished) if (s?.end !== undefined && s.end >= stall.start && s.start <= stall.end) out.push(s);
    return out;
  }
}
