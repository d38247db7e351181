/**
 * The etcd backend on a three-member etcd cluster on loopback: losing one
 * member (the leader) keeps reads, writes and watches working; losing two
 * makes calls fail with StorageUnavailableError in bounded time rather than
 * hang; service and the watch resume when the members return, with every
 * event delivered once and in order.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { StorageUnavailableError } from '../../src/storage/index.js';
import { EtcdClient } from '../../src/storage/etcd/client.js';
import { EtcdStorage } from '../../src/storage/etcd/etcd-storage.js';
import { methods } from '../../src/storage/etcd/proto.js';
import { findEtcd, startEtcdCluster, type EtcdCluster } from './etcd-helper.js';
import { collectWatch } from './watch-helper.js';

const etcd = findEtcd();
const TIMEOUT_MS = 2500;

/** The index of the member that leads the cluster now. */
async function leaderIndex(cluster: EtcdCluster): Promise<number> {
  for (let i = 0; i < cluster.members.length; i++) {
    const client = new EtcdClient({ endpoints: [cluster.endpoints[i]], requestTimeoutMs: 2000 });
    try {
      const status = await client.call(methods.status, {}, { write: false });
      if (status.leader === status.header.member_id) return i;
    } catch {
      // a member that does not answer is not the leader
    } finally {
      client.close();
    }
  }
  throw new Error('no member claims to lead');
}

async function elapsed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: T | Error }> {
  const started = Date.now();
  const result = await fn().catch((e: Error) => e);
  return { ms: Date.now() - started, result };
}

if (!etcd.bin) {
  it('etcd cluster', (t) => t.skip(etcd.reason));
} else {
  let cluster: EtcdCluster;
  before(async () => {
    cluster = await startEtcdCluster({ size: 3 });
  });
  after(async () => {
    await cluster?.cleanup();
  });

  it('survives the loss of one member, fails fast without quorum, and resumes when members return', async () => {
    const leader = await leaderIndex(cluster);
    const others = [0, 1, 2].filter((i) => i !== leader);
    // The leader first: the client starts there, so killing it also moves the client.
    const endpoints = [leader, ...others].map((i) => cluster.endpoints[i]);
    const s = new EtcdStorage({ endpoints, prefix: `/kapi-cluster/${process.pid}`, requestTimeoutMs: TIMEOUT_MS });
    try {
      const w = collectWatch(s, '/r/', await s.currentRevision());
      for (let i = 0; i < 5; i++) await s.create(`/r/${i}`, String(i));
      await w.waitFor(5);

      // One member down, and it was the leader: a new one is elected and the client fails over.
      await cluster.stop(leader);
      let racing = 0;
      for (let i = 5; i < 10; ) {
        try {
          await s.create(`/r/${i}`, String(i));
          i++;
        } catch (e) {
          // A write sent on the dead member's connection before the client noticed its end has an unknown
          // outcome and fails as unavailable (as with etcd's own client); later ones go to the others.
          if (!(e instanceof StorageUnavailableError) || ++racing > 1 || (await s.get(`/r/${i}`))) throw e;
        }
      }
      assert.equal((await s.get('/r/7'))?.value, '7');
      assert.equal((await s.range('/r/')).count, 10);
      await w.waitFor(10, 10_000);

      // Two down: no quorum. Writes and reads fail with StorageUnavailableError, in bounded time.
      await cluster.stop(others[0]);
      const [write, read] = await Promise.all([elapsed(() => s.create('/r/lost', 'x')), elapsed(() => s.get('/r/1'))]);
      assert.ok(write.result instanceof StorageUnavailableError, `write: expected unavailable, got ${write.result}`);
      assert.ok(write.ms < TIMEOUT_MS + 1500, `write failed after ${write.ms} ms`);
      assert.ok(read.result instanceof StorageUnavailableError, `read: expected unavailable, got ${read.result}`);
      assert.ok(read.ms < TIMEOUT_MS + 1500, `read failed after ${read.ms} ms`);

      // Both return: writes work again and the watch picks up where it stopped.
      await Promise.all([cluster.start(leader), cluster.start(others[0])]);
      const resumed = Date.now();
      for (let i = 10; i < 15; ) {
        try {
          await s.create(`/r/${i}`, String(i));
          i++;
        } catch (e) {
          if (!(e instanceof StorageUnavailableError) || Date.now() - resumed > 10_000) throw e;
        }
      }
      await w.waitFor(15, 10_000);
      await new Promise((r) => setTimeout(r, 200));
      const values = w.events.map((e) => e.kv.value);
      assert.ok(!values.includes('x') || (await s.get('/r/lost')) !== undefined, 'no event for a write that was not made');
      assert.deepEqual(
        values.filter((v) => v !== 'x'),
        Array.from({ length: 15 }, (_, i) => String(i)),
        'every event once, in order',
      );
      const revs = w.events.map((e) => e.kv.modRevision);
      assert.ok(revs.every((r, i) => i === 0 || r > revs[i - 1]));
      w.close();
    } finally {
      await s.close();
    }
  });
}
