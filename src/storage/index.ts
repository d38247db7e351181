/**
 * Opening a store by kind: `memory` for tests, `sqlite` (the embedded default)
 * for a data dir, `etcd` for a cluster that several kapi replicas share.
 */
import { EtcdStorage, type EtcdStorageOptions } from './etcd/etcd-storage.js';
import { LogStore, type LogStoreOptions } from './log-store.js';
import { MemoryLog } from './memory/memory-log.js';
import { SqliteLog } from './sqlite/sqlite-log.js';
import type { Storage } from './types.js';

export * from './types.js';
export * from './errors.js';
export type { EtcdStorageOptions } from './etcd/etcd-storage.js';
export type { EtcdTlsOptions } from './etcd/client.js';

export type StorageConfig =
  | (({ kind: 'memory' } | { kind: 'sqlite'; path: string }) & LogStoreOptions)
  | ({ kind: 'etcd' } & EtcdStorageOptions);

export function openStorage(config: StorageConfig): Storage {
  if (config.kind === 'etcd') return new EtcdStorage(config);
  const log = config.kind === 'memory' ? new MemoryLog() : new SqliteLog(config.path);
  return new LogStore(log, config);
}
