/** Maps storage and cache errors to the Kubernetes statuses clients expect. */
import { TooLargeRevisionError, TooOldRevisionError } from '../cache/errors.js';
import { errors, StatusError, type GroupResource } from '../machinery/status.js';
import { CompactedError, ConflictError, FutureRevisionError, KeyExistsError, KeyNotFoundError, StorageUnavailableError } from '../storage/errors.js';

export const MODIFIED_CONFLICT = 'the object has been modified; please apply your changes to the latest version and try again';

export function toStatusError(err: unknown, gr: GroupResource, name: string): Error {
  if (err instanceof StatusError) return err;
  if (err instanceof KeyNotFoundError) return errors.notFound(gr, name);
  if (err instanceof KeyExistsError) return errors.alreadyExists(gr, name);
  if (err instanceof ConflictError) return errors.conflict(gr, name, MODIFIED_CONFLICT);
  if (err instanceof CompactedError || err instanceof TooOldRevisionError) {
    return errors.expired(`too old resource version: ${(err as CompactedError).requestedRevision} (${oldest(err)})`);
  }
  if (err instanceof TooLargeRevisionError || err instanceof FutureRevisionError) {
    const e = err as TooLargeRevisionError;
    const status = errors.timeout(`Too large resource version: ${e.requestedRevision}, current: ${e.currentRevision}`, 1);
    return new StatusError(504, 'Timeout', status.message, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    });
  }
  if (err instanceof StorageUnavailableError) return errors.serviceUnavailable(err.message);
  return err instanceof Error ? err : new Error(String(err));
}

function oldest(err: CompactedError | TooOldRevisionError): number {
  return err instanceof CompactedError ? err.compactRevision : err.oldestRevision;
}
