/** Errors of the watch cache; the API layer maps them to Kubernetes statuses. */

/** The requested revision is older than the cache's window (410 Expired / Gone). */
export class TooOldRevisionError extends Error {
  constructor(readonly requestedRevision: number, readonly oldestRevision: number) {
    super(`too old resource version: ${requestedRevision} (${oldestRevision})`);
    this.name = 'TooOldRevisionError';
  }
}

/** The cache did not reach the requested revision in time (504 Timeout, "Too large resource version"). */
export class TooLargeRevisionError extends Error {
  constructor(readonly requestedRevision: number, readonly currentRevision: number) {
    super(`Too large resource version: ${requestedRevision}, current: ${currentRevision}`);
    this.name = 'TooLargeRevisionError';
  }
}

/** A watcher could not keep up and was dropped; its client should re-watch. */
export class SlowWatcherError extends Error {
  constructor() {
    super('watcher is too slow: events were dropped');
    this.name = 'SlowWatcherError';
  }
}

/** A list in steps ended because whoever asked for it is gone (CacheListOptions.aborted). */
export class ListAbortedError extends Error {
  constructor() {
    super('the list was abandoned');
    this.name = 'ListAbortedError';
  }
}
