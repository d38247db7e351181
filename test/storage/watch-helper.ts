/** Collects a storage watch's events for tests, with bounded waits. */
import type { Storage, WatchEvent } from '../../src/storage/index.js';

export interface CollectedWatch {
  events: WatchEvent[];
  /** Resolves with the first error the watch reports. */
  error: Promise<Error>;
  waitFor(count: number, timeoutMs?: number): Promise<WatchEvent[]>;
  close(): void;
}

export function collectWatch(storage: Storage, prefix: string, afterRevision: number): CollectedWatch {
  const events: WatchEvent[] = [];
  let wake = () => {};
  let failed: (e: Error) => void = () => {};
  const error = new Promise<Error>((resolve) => (failed = resolve));
  const handle = storage.watch(prefix, afterRevision, {
    onEvents(batch) {
      events.push(...batch);
      wake();
    },
    onError(e) {
      failed(e);
    },
  });
  return {
    events,
    error,
    close: () => handle.close(),
    async waitFor(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (events.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`watch: expected ${count} events, got ${events.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 50));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return events.slice(0, count);
    },
  };
}
