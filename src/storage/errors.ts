/**
 * Typed storage errors. The API layer maps them to Kubernetes statuses:
 * NotFound → 404, AlreadyExists → 409, Conflict → 409, Compacted → 410,
 * Unavailable → 503/504.
 */
import type { KeyValue } from './types.js';

export class StorageError extends Error {
  constructor(message: string, readonly key?: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class KeyNotFoundError extends StorageError {
  constructor(key: string) {
    super(`key not found: ${key}`, key);
  }
}

export class KeyExistsError extends StorageError {
  constructor(key: string, readonly current?: KeyValue) {
    super(`key exists: ${key}`, key);
  }
}

/**
 * A compare-and-swap lost: the key's mod revision is not the one expected. Concurrent writers of one object meet it
 * often and the store retries on it, so it is made without a stack trace (which cost more than the rest of it:
 * 3 µs of a contended status patch's 140, bench/stages.ts); it never reaches a client as it is.
 */
export class ConflictError extends StorageError {
  readonly expectedRevision: number;
  readonly current: KeyValue;
  constructor(key: string, expectedRevision: number, current: KeyValue) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(`conflict on ${key}: expected revision ${expectedRevision}, found ${current.modRevision}`, key);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.expectedRevision = expectedRevision;
    this.current = current;
  }
}

/** The requested revision has been compacted away. */
export class CompactedError extends StorageError {
  constructor(readonly requestedRevision: number, readonly compactRevision: number) {
    super(`required revision ${requestedRevision} has been compacted (compact revision ${compactRevision})`);
  }
}

/** A revision newer than the store's current one was asked for. */
export class FutureRevisionError extends StorageError {
  constructor(readonly requestedRevision: number, readonly currentRevision: number) {
    super(`required revision ${requestedRevision} is a future revision (current ${currentRevision})`);
  }
}

/** The backend cannot serve the request now (closed, disk error, cluster without quorum). */
export class StorageUnavailableError extends StorageError {}

/** The data on disk cannot be used: corrupt, or written by a newer kapi. */
export class StorageFormatError extends StorageError {}
