/**
 * Background compaction shared by every kapi replica on one etcd, the way
 * kube-apiserver does it: each interval, a replica tries to bump the version of
 * a bookkeeping key from the version it last saw. The one that succeeds
 * compacts to the revision it recorded one interval earlier; the others learn
 * the new version and try again next interval. So history older than about one
 * interval is dropped, once per interval, whichever replicas are alive.
 */
import type { EtcdClient } from './client.js';
import { classify } from './errors.js';
import { methods } from './proto.js';

export class Compactor {
  private timer?: NodeJS.Timeout;
  private version = 0;
  private revision = 0;
  private running?: Promise<void>;

  constructor(
    private readonly client: EtcdClient,
    private readonly key: Buffer,
    private readonly onCompacted: (revision: number) => void,
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick()
        .catch(() => undefined)
        .finally(() => (this.running = undefined));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One round (public so that tests can drive it). */
  async tick(): Promise<void> {
    const res = await this.client.call(
      methods.txn,
      {
        compare: [{ target: 'VERSION', result: 'EQUAL', key: this.key, version: this.version }],
        success: [{ request_put: { key: this.key, value: Buffer.from(String(this.revision)) } }],
        failure: [{ request_range: { key: this.key } }],
      },
      { write: true },
    );
    const seen = this.revision;
    this.revision = res.header.revision;
    if (!res.succeeded) {
      this.version = res.responses[0]?.response_range?.kvs[0]?.version ?? 0;
      return;
    }
    this.version++;
    if (seen === 0) return; // nothing recorded yet: the first round only takes the turn
    try {
      await this.client.call(methods.compact, { revision: seen }, { write: false });
      this.onCompacted(seen);
    } catch (e) {
      if (classify(e) !== 'compacted') throw e;
    }
  }
}
