/**
 * EtcdStorage: the `Storage` interface over an etcd v3 cluster.
 *
 * Every write is one Txn, so its compare-and-swap and its effect are a single
 * etcd revision: create compares mod_revision = 0, update compares
 * mod_revision with the expected one, delete optionally does; the failure
 * branch reads the key so a conflict carries the current value. Reads are
 * linearizable ranges. Watches are etcd watches with prev_kv (see watch.ts).
 * etcd numbers revisions for the whole cluster, so revisions skip the writes
 * other installations make under other prefixes.
 */
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
  StorageUnavailableError,
} from '../errors.js';
import type {
  DeleteResult,
  KeyValue,
  RangeOptions,
  RangeResult,
  Storage,
  WatchEvent,
  WatchHandle,
  WatchListener,
} from '../types.js';
import { EtcdClient, type EtcdClientOptions } from './client.js';
import { Compactor } from './compactor.js';
import { classify, toStorageError } from './errors.js';
import { Keyspace } from './keys.js';
import { methods, type PbCompare, type PbEvent, type PbKeyValue, type PbTxnRequest, type PbTxnResponse, type UnaryMethod } from './proto.js';
import { EtcdWatch } from './watch.js';

/** Options of the etcd store: the cluster (endpoints, TLS, timeout), the key prefix, compaction and watch progress. */
export interface EtcdStorageOptions extends EtcdClientOptions {
  /** Takes the place of `/registry` in etcd keys (default `/registry`); see keys.ts. */
  prefix?: string;
  /** Background compaction period in ms, coordinated across replicas (0 or absent: off). */
  compactIntervalMs?: number;
  /**
   * How often every watch asks etcd for its progress (default 1000 ms, 0: never), so that a watch on a quiet
   * prefix still learns the revisions written elsewhere (by other replicas too).
   */
  progressIntervalMs?: number;
}

export class EtcdStorage implements Storage {
  private readonly client: EtcdClient;
  private readonly keys: Keyspace;
  private readonly watches = new Set<EtcdWatch>();
  private readonly compactor?: Compactor;
  private readonly progressTimer?: NodeJS.Timeout;
  /** The newest revision any etcd answer has shown. */
  private latest = 0;
  /** The newest compact revision known here (a lower bound of etcd's). */
  private compacted = 0;
  private closed = false;

  constructor(options: EtcdStorageOptions) {
    this.client = new EtcdClient(options);
    this.keys = new Keyspace(options.prefix);
    if (options.compactIntervalMs && options.compactIntervalMs > 0) {
      this.compactor = new Compactor(this.client, this.keys.internal('compact_rev_key'), (rev) => this.noteCompacted(rev));
      this.compactor.start(options.compactIntervalMs);
    }
    const progressMs = options.progressIntervalMs ?? 1000;
    if (progressMs > 0) {
      this.progressTimer = setInterval(() => this.requestProgress(true), progressMs);
      this.progressTimer.unref();
    }
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const res = await this.read(methods.range, { key: this.keys.toEtcd(key) });
    return res.kvs.length > 0 ? this.toKeyValue(res.kvs[0]) : undefined;
  }

  async range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    const { key, rangeEnd } = this.keys.range(prefix, options.startKey);
    const revision = options.revision ?? 0;
    let res;
    try {
      res = await this.read(methods.range, { key, range_end: rangeEnd, limit: options.limit ?? 0, revision });
    } catch (e) {
      throw await this.revisionError(e, revision);
    }
    return { kvs: res.kvs.map((kv) => this.toKeyValue(kv)), revision: revision || res.header.revision, more: res.more, count: res.count };
  }

  async create(key: string, value: string): Promise<KeyValue> {
    const k = this.keys.toEtcd(key);
    const res = await this.txn({
      compare: [{ target: 'MOD', result: 'EQUAL', key: k, mod_revision: 0 }],
      success: [{ request_put: { key: k, value: Buffer.from(value, 'utf8') } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) {
      const current = this.currentFromFailure(res);
      throw new KeyExistsError(key, current);
    }
    const rev = res.header.revision;
    return { key, value, createRevision: rev, modRevision: rev };
  }

  async update(key: string, value: string, expectedModRevision: number): Promise<KeyValue> {
    const k = this.keys.toEtcd(key);
    const res = await this.txn({
      compare: [exists(k), { target: 'MOD', result: 'EQUAL', key: k, mod_revision: expectedModRevision }],
      // The keys-only read before the put yields the create revision without shipping the old value.
      success: [{ request_range: { key: k, keys_only: true } }, { request_put: { key: k, value: Buffer.from(value, 'utf8') } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) {
      const current = this.currentFromFailure(res);
      if (!current) throw new KeyNotFoundError(key);
      throw new ConflictError(key, expectedModRevision, current);
    }
    const before = res.responses[0]?.response_range?.kvs[0];
    const rev = res.header.revision;
    return { key, value, createRevision: before?.create_revision ?? rev, modRevision: rev };
  }

  async delete(key: string, expectedModRevision?: number): Promise<DeleteResult> {
    const k = this.keys.toEtcd(key);
    const compare = [exists(k)];
    if (expectedModRevision !== undefined) compare.push({ target: 'MOD', result: 'EQUAL', key: k, mod_revision: expectedModRevision });
    const res = await this.txn({
      compare,
      success: [{ request_delete_range: { key: k, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) {
      const current = this.currentFromFailure(res);
      if (!current) throw new KeyNotFoundError(key);
      throw new ConflictError(key, expectedModRevision ?? 0, current);
    }
    const prev = res.responses[0]?.response_delete_range?.prev_kvs[0];
    if (!prev) throw new KeyNotFoundError(key);
    return { prevKv: this.toKeyValue(prev), revision: res.header.revision };
  }

  watch(prefix: string, afterRevision: number, listener: WatchListener): WatchHandle {
    if (this.closed) {
      queueMicrotask(() => listener.onError(new StorageUnavailableError('storage is closed')));
      return { close: () => undefined };
    }
    if (afterRevision < this.compacted) {
      const err = new CompactedError(afterRevision, this.compacted);
      queueMicrotask(() => listener.onError(err));
      return { close: () => undefined };
    }
    const watch = new EtcdWatch({
      client: this.client,
      range: this.keys.range(prefix),
      afterRevision,
      listener,
      decode: (e) => this.toWatchEvent(e),
      onEnd: (w) => this.watches.delete(w),
      onCompacted: (rev) => this.noteCompacted(rev),
    });
    this.watches.add(watch);
    return watch;
  }

  async currentRevision(): Promise<number> {
    const res = await this.read(methods.range, { key: this.keys.internal('revision'), count_only: true });
    // Whoever asks for the current revision usually waits for watches to reach it.
    this.requestProgress();
    return res.header.revision;
  }

  async compact(revision: number): Promise<void> {
    try {
      await this.read(methods.compact, { revision });
    } catch (e) {
      const verdict = classify(e);
      if (verdict === 'compacted') return; // at or before an earlier compaction: nothing to do
      if (verdict === 'future') throw new FutureRevisionError(revision, await this.currentRevision());
      throw toStorageError(e, 'compact');
    }
    this.noteCompacted(revision);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.progressTimer) clearInterval(this.progressTimer);
    await this.compactor?.stop();
    for (const w of [...this.watches]) w.fail(new StorageUnavailableError('storage is closed'));
    this.client.close();
  }

  /** Ask the watches (all, or those behind the newest revision seen here) for their progress. */
  private requestProgress(all = false): void {
    for (const w of this.watches) if (all || w.delivered < this.latest) w.requestProgress();
  }

  private noteCompacted(revision: number): void {
    if (revision > this.compacted) this.compacted = revision;
  }

  private async read<Req, Res extends { header: { revision: number } }>(m: UnaryMethod<Req, Res>, req: Req): Promise<Res> {
    this.assertOpen();
    let res: Res;
    try {
      res = await this.client.call(m, req, { write: false });
    } catch (e) {
      throw classify(e) === 'compacted' || classify(e) === 'future' ? e : toStorageError(e, m.path);
    }
    this.seen(res.header.revision);
    return res;
  }

  private async txn(req: PbTxnRequest): Promise<PbTxnResponse> {
    this.assertOpen();
    let res: PbTxnResponse;
    try {
      res = await this.client.call(methods.txn, req, { write: true });
    } catch (e) {
      throw toStorageError(e, 'txn');
    }
    this.seen(res.header.revision);
    return res;
  }

  private seen(revision: number): void {
    if (revision > this.latest) this.latest = revision;
  }

  /** CompactedError / FutureRevisionError for a failed read at a revision, with the revisions they report. */
  private async revisionError(e: unknown, requested: number): Promise<Error> {
    const verdict = classify(e);
    if (verdict === 'future') return new FutureRevisionError(requested, await this.currentRevision());
    if (verdict !== 'compacted') return e as Error;
    if (this.compacted <= requested) this.noteCompacted(await this.probeCompactRevision(requested));
    return new CompactedError(requested, this.compacted);
  }

  /**
   * etcd's compact revision, which only a watch reports: one from revision 1
   * is refused with it at once. Falls back to the least possible value.
   */
  private probeCompactRevision(requested: number): Promise<number> {
    return new Promise((resolve) => {
      const fallback = requested + 1;
      const timer = setTimeout(() => {
        handle.close();
        resolve(fallback);
      }, 2000);
      const handle = new EtcdWatch({
        client: this.client,
        range: { key: this.keys.internal('compact-probe'), rangeEnd: Buffer.alloc(0) },
        afterRevision: 0,
        listener: {
          onEvents: () => undefined,
          onError: (err) => {
            clearTimeout(timer);
            resolve(err instanceof CompactedError ? err.compactRevision : fallback);
          },
        },
        decode: (ev) => this.toWatchEvent(ev),
        onEnd: () => undefined,
        onCompacted: () => undefined,
      });
    });
  }

  private currentFromFailure(res: PbTxnResponse): KeyValue | undefined {
    const kv = res.responses[0]?.response_range?.kvs[0];
    return kv ? this.toKeyValue(kv) : undefined;
  }

  private toKeyValue(kv: PbKeyValue): KeyValue {
    return {
      key: this.keys.fromEtcd(kv.key),
      value: kv.value.toString('utf8'),
      createRevision: kv.create_revision,
      modRevision: kv.mod_revision,
    };
  }

  private toWatchEvent(e: PbEvent): WatchEvent {
    const prevKv = e.prev_kv && e.prev_kv.key.length > 0 ? this.toKeyValue(e.prev_kv) : undefined;
    if (e.type === 'DELETE') {
      const kv = { key: this.keys.fromEtcd(e.kv.key), value: '', createRevision: prevKv?.createRevision ?? 0, modRevision: e.kv.mod_revision };
      return { type: 'DELETE', kv, prevKv };
    }
    return { type: 'PUT', kv: this.toKeyValue(e.kv), prevKv };
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageUnavailableError('storage is closed');
  }
}

function exists(key: Buffer): PbCompare {
  return { target: 'CREATE', result: 'GREATER', key, create_revision: 0 };
}
