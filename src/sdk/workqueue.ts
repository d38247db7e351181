/**
 * A rate-limited work queue with client-go's semantics: a key added while
 * queued is queued once; a key added while being processed is processed again
 * after; a failed key comes back after a per-key exponential backoff (5 ms
 * doubling to 1000 s, client-go's ItemExponentialFailureRateLimiter) until it
 * succeeds and is forgotten. Workers run keys concurrently, never one key twice
 * at once.
 */

export interface WorkQueueOptions {
  /** First retry delay (ms). */
  baseDelayMs?: number;
  /** Longest retry delay (ms). */
  maxDelayMs?: number;
  /** Keys processed at once. */
  workers?: number;
  /** Told about a failure before its key is retried. */
  onError?: (key: string, err: unknown, retries: number) => void;
  /**
   * Overall rate limiting of retries (client-go's BucketRateLimiter, which controller-runtime's default
   * limiter combines with the per-key backoff: a retry waits for the longer of the two).
   */
  qps?: number;
  burst?: number;
  /** Told of each key's life in the queue (for metrics). */
  observer?: WorkQueueObserver;
}

/** Callbacks on a key's way through a WorkQueue, as client-go's workqueue metrics provider. */
export interface WorkQueueObserver {
  /** A key added that was not waiting already. */
  added?(key: string): void;
  /** A key taken by a worker, after waiting `queuedMs`. */
  started?(key: string, queuedMs: number): void;
  /** A key's run over, after `workMs`. */
  finished?(key: string, workMs: number): void;
  /** A key's retry scheduled after its backoff (addRateLimited: a failure, or a requeue). */
  retried?(key: string): void;
}

/**
 * A rate-limited work queue of string keys, as client-go's workqueue: `handler` runs each key; a rejection
 * retries it after its backoff. The queue behind each Controller.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { due: number; timer: NodeJS.Timeout }>();
  /** Callers waiting for a key's next run (addAndWait), taken when that run starts. */
  private readonly runWaiters = new Map<string, Array<() => void>>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly workers: number;
  private active = 0;
  private shutDown = false;
  private readonly addedAt = new Map<string, number>();
  private tokens: number;
  private tokensAt = Date.now();
  private idleWaiters: Array<() => void> = [];

  constructor(
    /** Runs a key; `'keep'` keeps its retry count (a requeue that should back off), anything else forgets it. */
    private readonly handler: (key: string) => Promise<void | 'keep'>,
    private readonly opts: WorkQueueOptions = {},
  ) {
    this.baseDelayMs = opts.baseDelayMs ?? 5;
    this.maxDelayMs = opts.maxDelayMs ?? 1_000_000;
    this.workers = opts.workers ?? 4;
    this.tokens = opts.burst ?? 0;
  }

  /** The delay the bucket gives one more retry (reserving its token). */
  private bucketDelay(): number {
    const qps = this.opts.qps;
    if (!qps) return 0;
    const now = Date.now();
    const burst = this.opts.burst ?? 1;
    this.tokens = Math.min(burst, this.tokens + ((now - this.tokensAt) / 1000) * qps);
    this.tokensAt = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / qps) * 1000);
  }

  /** Queues a key (once, however often it is added before it runs); ignored after shutdown. */
  add(key: string): void {
    if (this.shutDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.opts.observer) {
      this.addedAt.set(key, Date.now());
      this.opts.observer.added?.(key);
    }
    if (this.processing.has(key)) return; // queued again when its current run is done
    this.queue.push(key);
    this.pump();
  }

  /** Add, and resolve when the key's next run is over (whether it succeeded or will be retried). */
  addAndWait(key: string): Promise<void> {
    if (this.shutDown) return Promise.resolve();
    return new Promise((resolve) => {
      let waiters = this.runWaiters.get(key);
      if (!waiters) this.runWaiters.set(key, (waiters = []));
      waiters.push(resolve);
      this.add(key);
    });
  }

  /** Add after a delay; a key waiting already comes at the earlier of the two times (an add now is not delayed). */
  addAfter(key: string, delayMs: number): void {
    if (this.shutDown) return;
    if (delayMs <= 0) return this.add(key);
    const due = Date.now() + delayMs;
    const waiting = this.timers.get(key);
    if (waiting) {
      if (waiting.due <= due) return;
      clearTimeout(waiting.timer);
    }
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(key, { due, timer });
  }

  /** Add after the key's backoff, which doubles with each call until forget. */
  addRateLimited(key: string): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.opts.observer?.retried?.(key);
    this.addAfter(key, Math.max(Math.min(this.baseDelayMs * 2 ** n, this.maxDelayMs), this.bucketDelay()));
  }

  /** Resets a key's backoff (its retry count). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** How many times the key was retried since it was last forgotten. */
  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Keys waiting for a worker (not those being processed or delayed). */
  get length(): number {
    return this.queue.length;
  }

  /** Resolves when nothing is queued or being processed (delayed retries do not count). */
  idle(): Promise<void> {
    return this.isIdle() ? Promise.resolve() : new Promise((r) => this.idleWaiters.push(r));
  }

  /** No more keys are taken; pending retries are dropped. */
  shutdown(): void {
    this.shutDown = true;
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
    this.queue.length = 0;
    this.dirty.clear();
    this.addedAt.clear();
    for (const waiters of this.runWaiters.values()) for (const w of waiters) w();
    this.runWaiters.clear();
    this.notifyIdle();
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && this.active === 0;
  }

  private notifyIdle(): void {
    if (this.isIdle()) for (const w of this.idleWaiters.splice(0)) w();
  }

  private pump(): void {
    while (!this.shutDown && this.active < this.workers && this.queue.length > 0) {
      const key = this.queue.shift()!;
      this.dirty.delete(key);
      this.processing.add(key);
      this.active++;
      void this.run(key);
    }
  }

  private async run(key: string): Promise<void> {
    const waiting = this.runWaiters.get(key);
    this.runWaiters.delete(key);
    const observer = this.opts.observer;
    const started = Date.now();
    if (observer) {
      observer.started?.(key, started - (this.addedAt.get(key) ?? started));
      this.addedAt.delete(key);
    }
    try {
      if ((await this.handler(key)) !== 'keep') this.forget(key);
    } catch (err) {
      if (!this.shutDown) {
        this.opts.onError?.(key, err, this.retries(key));
        this.addRateLimited(key);
      }
    } finally {
      observer?.finished?.(key, Date.now() - started);
      for (const w of waiting ?? []) w();
      this.processing.delete(key);
      this.active--;
      if (this.dirty.has(key) && !this.shutDown) this.queue.push(key);
      this.pump();
      this.notifyIdle();
    }
  }
}
