/**
 * One storage watch over one etcd Watch stream, kept alive across etcd
 * restarts, leader changes and endpoint failures.
 *
 * `delivered` is the revision up to which the listener has been told
 * everything (by events or by progress). When a stream breaks, a new one is
 * opened (on another endpoint when this one failed) from `delivered + 1`, so
 * the listener sees every event once and in order; if etcd compacted that
 * revision meanwhile, the watch ends with CompactedError.
 *
 * Progress: etcd notifies each watch of its revision on its own now and then
 * (progress_notify, always in order with the events); on request (a watch
 * progress request) it notifies at once. From etcd 3.4.25 and 3.5.8 that answer
 * waits until the watch has caught up, so it is exact. Older servers (Debian
 * ships 3.4.23) may send it ahead of events still queued for the stream, so
 * for them the answer is held until the stream has been quiet for QUIET_MS and
 * the watch has caught up since its creation; an event that still turns up
 * behind a reported progress ends the watch with StorageUnavailableError, so
 * the consumer relists rather than trusting a wrong revision.
 */
import { status as Status } from '@grpc/grpc-js';
import { CompactedError, StorageError, StorageUnavailableError } from '../errors.js';
import type { WatchEvent, WatchHandle, WatchListener } from '../types.js';
import type { EtcdClient, Endpoint, WatchStream } from './client.js';
import { isServiceError } from './errors.js';
import type { EtcdRange } from './keys.js';
import type { PbEvent, PbWatchResponse } from './proto.js';

/** Old etcd: how long the stream must stay free of events before a progress answer is trusted. */
const QUIET_MS = 25;
/** Old etcd: a new watch replays its history within this time (etcd syncs lagging watches every 100 ms). */
const CATCH_UP_MS = 300;
const MAX_BACKOFF_MS = 2000;
/** A progress request unanswered this long is taken as lost (etcd drops it when the stream's buffer is full). */
const PROGRESS_ANSWER_MS = 2000;

export interface EtcdWatchConfig {
  client: EtcdClient;
  range: EtcdRange;
  afterRevision: number;
  listener: WatchListener;
  decode(event: PbEvent): WatchEvent;
  /** Called once when the watch ends, whichever way. */
  onEnd(watch: EtcdWatch): void;
  /** etcd reported a compaction. */
  onCompacted(revision: number): void;
}

/** Servers whose progress answers wait for the watch to catch up (etcd PR 15248). */
export function exactProgress(version: string): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major !== 3) return major > 3;
  if (minor === 4) return patch >= 25;
  if (minor === 5) return patch >= 8;
  return minor > 5;
}

export class EtcdWatch implements WatchHandle {
  /** Everything up to this revision has reached the listener. */
  delivered: number;
  private lastEvent: number;
  private stream?: WatchStream;
  private endpoint?: Endpoint;
  private exact = false;
  private created = false;
  private createdRevision = 0;
  private createdAt = 0;
  private caughtUp = false;
  private fragments: PbEvent[] = [];
  /** When the unanswered progress request was sent (0: none). */
  private progressPending = 0;
  private progressWanted = false;
  private candidate?: { revision: number; timer: NodeJS.Timeout };
  private backoffMs = 0;
  private reconnectTimer?: NodeJS.Timeout;
  private ended = false;

  constructor(private readonly config: EtcdWatchConfig) {
    this.delivered = config.afterRevision;
    this.lastEvent = config.afterRevision;
    void this.connect();
  }

  close(): void {
    this.end();
  }

  /** Ask etcd for this watch's progress; coalesced with a request already on its way. */
  requestProgress(): void {
    if (this.ended) return;
    const waiting = this.progressPending > 0 && Date.now() - this.progressPending < PROGRESS_ANSWER_MS;
    if (!this.created || waiting || this.candidate) {
      this.progressWanted = true;
      return;
    }
    this.progressWanted = false;
    this.progressPending = Date.now();
    this.stream?.write({ progress_request: {} });
  }

  /** End the watch with an error (the storage is closing, or the stream cannot go on). */
  fail(err: Error): void {
    if (this.ended) return;
    this.end();
    this.config.listener.onError(err);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.dropStream();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.config.onEnd(this);
  }

  private async connect(): Promise<void> {
    this.reconnectTimer = undefined;
    const { client } = this.config;
    if (this.ended) return;
    if (client.isClosed) return this.fail(new StorageUnavailableError('storage is closed'));
    const ep = await client.connected(Date.now() + client.timeoutMs);
    if (this.ended) return;
    if (!ep) return this.reconnectLater();
    const version = await client.version(ep);
    if (this.ended) return;
    let stream: WatchStream;
    try {
      stream = client.openWatch(ep);
    } catch (e) {
      return this.fail(e as Error);
    }
    this.stream = stream;
    this.endpoint = ep;
    this.exact = exactProgress(version);
    this.created = false;
    this.caughtUp = false;
    this.fragments = [];
    this.progressPending = 0;
    stream.on('data', (res: PbWatchResponse) => this.onResponse(stream, res));
    stream.on('error', (err: Error) => this.onBroken(stream, err));
    stream.on('end', () => this.onBroken(stream));
    stream.write({
      create_request: {
        key: this.config.range.key,
        range_end: this.config.range.rangeEnd,
        start_revision: this.delivered + 1,
        progress_notify: true,
        prev_kv: true,
        fragment: true,
      },
    });
  }

  private onResponse(stream: WatchStream, res: PbWatchResponse): void {
    if (stream !== this.stream || this.ended) return;
    if (res.created) {
      if (res.canceled) return this.fail(new StorageError(`etcd refused the watch: ${res.cancel_reason}`));
      this.created = true;
      this.createdRevision = res.header.revision;
      this.createdAt = Date.now();
      this.backoffMs = 0;
      if (this.progressWanted) this.requestProgress();
      return;
    }
    if (res.compact_revision > 0) {
      this.config.onCompacted(res.compact_revision);
      return this.fail(new CompactedError(this.delivered, res.compact_revision));
    }
    if (res.canceled) {
      // A member that lost its leader cancels its watches (with hasleader set): go elsewhere.
      if (/no leader|not capable|stopped/.test(res.cancel_reason)) return this.onBroken(stream, new Error(res.cancel_reason));
      return this.fail(new StorageUnavailableError(`etcd canceled the watch: ${res.cancel_reason || 'no reason given'}`));
    }
    if (res.fragment) {
      this.fragments.push(...res.events);
      return;
    }
    const events = this.fragments.length > 0 ? [...this.fragments, ...res.events] : res.events;
    this.fragments = [];
    if (events.length > 0) return this.onEvents(events);
    if (res.watch_id === -1) return this.onProgressAnswer(res.header.revision);
    // etcd's own periodic notification: sent only to a watch that has caught up, in order.
    this.caughtUp = true;
    this.progress(res.header.revision);
  }

  private onEvents(batch: PbEvent[]): void {
    const out: WatchEvent[] = [];
    for (const e of batch) {
      const rev = e.kv.mod_revision;
      if (rev <= this.lastEvent) continue;
      if (rev <= this.delivered) {
        return this.fail(
          new StorageUnavailableError(
            `etcd sent an event at revision ${rev} after reporting progress to ${this.delivered}; restart the watch (etcd before 3.4.25/3.5.8)`,
          ),
        );
      }
      out.push(this.config.decode(e));
    }
    if (out.length === 0) return;
    const last = out[out.length - 1].kv.modRevision;
    this.lastEvent = last;
    this.delivered = last;
    if (last >= this.createdRevision) this.caughtUp = true;
    if (this.candidate) {
      if (this.candidate.revision <= last) this.dropCandidate();
      else this.candidate.timer.refresh();
    }
    try {
      this.config.listener.onEvents(out);
    } catch (e) {
      this.fail(e as Error);
    }
  }

  private onProgressAnswer(revision: number): void {
    this.progressPending = 0;
    if (this.exact) {
      this.progress(revision);
      if (this.progressWanted) this.requestProgress();
      return;
    }
    this.dropCandidate();
    const settle = (): void => {
      const catchingUp = this.caughtUp ? 0 : this.createdAt + CATCH_UP_MS - Date.now();
      if (catchingUp > 0 && this.candidate) {
        this.candidate.timer = setTimeout(settle, catchingUp);
        return;
      }
      this.candidate = undefined;
      this.caughtUp = true;
      this.progress(revision);
      if (this.progressWanted) this.requestProgress();
    };
    this.candidate = { revision, timer: setTimeout(settle, QUIET_MS) };
  }

  private dropCandidate(): void {
    if (!this.candidate) return;
    clearTimeout(this.candidate.timer);
    this.candidate = undefined;
    if (this.progressWanted) queueMicrotask(() => this.requestProgress());
  }

  private progress(revision: number): void {
    if (revision <= this.delivered || this.ended) return;
    this.delivered = revision;
    try {
      this.config.listener.onProgress?.(revision);
    } catch (e) {
      this.fail(e as Error);
    }
  }

  private onBroken(stream: WatchStream, err?: Error): void {
    if (stream !== this.stream || this.ended) return;
    this.dropStream();
    if (this.config.client.isClosed) return this.fail(new StorageUnavailableError('storage is closed'));
    if (err && isServiceError(err) && (err.code === Status.PERMISSION_DENIED || err.code === Status.UNAUTHENTICATED)) {
      return this.fail(new StorageError(`etcd watch: ${err.details}`));
    }
    if (this.endpoint) this.config.client.failed(this.endpoint);
    this.reconnectLater();
  }

  private reconnectLater(): void {
    if (this.ended || this.reconnectTimer) return;
    this.backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(50, this.backoffMs * 2));
    this.reconnectTimer = setTimeout(() => void this.connect(), this.backoffMs);
  }

  private dropStream(): void {
    if (this.candidate) clearTimeout(this.candidate.timer);
    this.candidate = undefined;
    this.progressPending = 0;
    const stream = this.stream;
    this.stream = undefined;
    this.created = false;
    if (stream) {
      stream.removeAllListeners('data');
      stream.on('error', () => undefined);
      stream.cancel();
    }
  }
}
