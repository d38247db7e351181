/**
 * Opening a store by kind: `memory` for tests, `sqlite` (the embedded default)
 * for a data dir, `etcd` for a cluster that several kapi replicas share.
 */
import type { EtcdStorageOptions } from './etcd/etcd-storage.js';
import { LogStore, type LogStoreOptions } from './log-store.js';
import { MemoryLog } from './memory/memory-log.js';
import { SqliteLog } from './sqlite/sqlite-log.js';
import type { Storage } from './types.js';

export * from './types.js';
export * from './errors.js';
export type { EtcdStorageOptions } from './etcd/etcd-storage.js';
export type { EtcdTlsOptions } from './etcd/client.js';

/**
 * Where kapi keeps its objects (`storage` of `start`): `memory` (lost when the process ends; tests),
 * `sqlite` (a database file at `path`, the embedded default), or `etcd` (an etcd v3 cluster that several kapi
 * replicas may share). Without it, `start` uses sqlite at `<dataDir>/state.db` with compaction every 60 s.
 */
export type StorageConfig =
  | (({ kind: 'memory' } | { kind: 'sqlite'; path: string }) & LogStoreOptions)
  | ({ kind: 'etcd' } & EtcdStorageOptions);

/** Open an embedded store (memory or sqlite). */
export function openStorage(config: Exclude<StorageConfig, { kind: 'etcd' }>): Storage {
  const log = config.kind === 'memory' ? new MemoryLog() : new SqliteLog(config.path);
  return new LogStore(log, config);
}

/** Open any store; the etcd client (gRPC) is loaded only when etcd is used, keeping the embedded start fast. */
export async function openStorageAsync(config: StorageConfig): Promise<Storage> {
  if (config.kind !== 'etcd') return openStorage(config);
  const { EtcdStorage } = await import('./etcd/etcd-storage.js');
  return new EtcdStorage(config);
}
