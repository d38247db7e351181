/** Opening a store by kind: `memory` for tests, `sqlite` (the embedded default) for a data dir. */
import { LogStore, type LogStoreOptions } from './log-store.js';
import { MemoryLog } from './memory/memory-log.js';
import { SqliteLog } from './sqlite/sqlite-log.js';
import type { Storage } from './types.js';

export * from './types.js';
export * from './errors.js';

export type StorageConfig = ({ kind: 'memory' } | { kind: 'sqlite'; path: string }) & LogStoreOptions;

export function openStorage(config: StorageConfig): Storage {
  const log = config.kind === 'memory' ? new MemoryLog() : new SqliteLog(config.path);
  return new LogStore(log, config);
}
