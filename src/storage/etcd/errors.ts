/**
 * How a failed etcd call is read: whether another attempt (on this or another
 * endpoint) may follow, and which storage error the caller sees otherwise.
 *
 * A write may only be retried when etcd cannot have applied it: the request
 * never reached a server (no connection, stream refused) or the server turned
 * it away before proposing it (no leader, too many requests). A timeout or a
 * connection lost mid-call leaves a write's outcome unknown, so it surfaces as
 * StorageUnavailableError (503/504 at the API) rather than being repeated.
 */
import { status as Status, type ServiceError } from '@grpc/grpc-js';
import { StorageError, StorageUnavailableError } from '../errors.js';

export type Verdict =
  /** Not applied: try again, preferably on another endpoint. */
  | 'retry'
  /** Maybe applied: reads try again, writes fail as unavailable. */
  | 'unknown'
  /** Compacted revision: the caller maps it. */
  | 'compacted'
  /** Future revision: the caller maps it. */
  | 'future'
  /** Final: fail with the error. */
  | 'fatal';

const NOT_APPLIED = [
  'etcdserver: no leader',
  'etcdserver: not capable',
  'etcdserver: too many requests',
  'etcdserver: unhealthy cluster',
  'etcdserver: rpc not supported for learner',
];

export function isServiceError(e: unknown): e is ServiceError {
  return e instanceof Error && typeof (e as Partial<ServiceError>).code === 'number';
}

export function classify(e: unknown): Verdict {
  if (!isServiceError(e)) return 'fatal';
  const details = e.details ?? '';
  if (details.includes('required revision has been compacted')) return 'compacted';
  if (details.includes('required revision is a future revision')) return 'future';
  switch (e.code) {
    case Status.UNAVAILABLE:
      if (NOT_APPLIED.some((m) => details.includes(m))) return 'retry';
      // grpc-js: no subchannel was ready, so nothing was sent.
      if (details.includes('No connection established') || details.includes('Stream refused')) return 'retry';
      return 'unknown';
    case Status.RESOURCE_EXHAUSTED:
      return details.includes('too many requests') ? 'retry' : 'fatal';
    case Status.DEADLINE_EXCEEDED:
    case Status.CANCELLED:
    case Status.INTERNAL:
    case Status.UNKNOWN:
      return 'unknown';
    default:
      return 'fatal';
  }
}

/** The storage error for a call that failed for good. */
export function toStorageError(e: unknown, what: string): Error {
  if (e instanceof StorageError) return e;
  if (!isServiceError(e)) return e instanceof Error ? e : new Error(String(e));
  const details = e.details || e.message;
  if (e.code === Status.RESOURCE_EXHAUSTED && details.includes('database space exceeded')) {
    return new StorageUnavailableError(`etcd ${what}: ${details}`);
  }
  const verdict = classify(e);
  if (verdict === 'retry' || verdict === 'unknown') return new StorageUnavailableError(`etcd ${what}: ${details}`);
  return new StorageError(`etcd ${what}: ${details}`);
}
