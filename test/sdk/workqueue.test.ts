/** The controllers' work queue: one run per key at a time, re-runs for keys added meanwhile, backoff on failure. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkQueue } from '../../src/sdk/workqueue.js';

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

describe('WorkQueue', () => {
  it('queues a key once while it waits, and runs it again when added while running', async () => {
    const runs: string[] = [];
    let release: () => void = () => {};
    const q = new WorkQueue(async (key) => {
      runs.push(key);
      if (key === 'a' && runs.length === 1) await new Promise<void>((r) => (release = r));
    }, { workers: 1 });
    q.add('a');
    await tick();
    q.add('a'); // while running: once more afterwards
    q.add('a');
    q.add('b');
    q.add('b'); // while waiting: once
    await tick(5);
    assert.deepEqual(runs, ['a'], 'b waits for the one worker');
    release();
    await q.idle();
    assert.deepEqual(runs, ['a', 'b', 'a']);
  });

  it('never runs one key twice at once, whatever the workers', async () => {
    let running = 0;
    let most = 0;
    const q = new WorkQueue(async () => {
      running++;
      most = Math.max(most, running);
      await tick(2);
      running--;
    }, { workers: 8 });
    for (let i = 0; i < 20; i++) {
      q.add('same');
      await tick(1);
    }
    await q.idle();
    await tick(10);
    await q.idle();
    assert.equal(most, 1);
  });

  it('retries a failing key with a doubling delay until it succeeds, then forgets its failures', async () => {
    const times: number[] = [];
    const errors: number[] = [];
    let fail = 3;
    const q = new WorkQueue(
      async () => {
        times.push(Date.now());
        if (fail-- > 0) throw new Error('not yet');
      },
      { baseDelayMs: 20, onError: (_k, _e, retries) => errors.push(retries) },
    );
    q.add('k');
    const deadline = Date.now() + 5000;
    while (times.length < 4 && Date.now() < deadline) await tick(5);
    assert.equal(times.length, 4);
    assert.deepEqual(errors, [0, 1, 2]);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    assert.ok(gaps[0] >= 18 && gaps[1] >= 38 && gaps[2] >= 78, `delays double: ${gaps}`);
    assert.equal(q.retries('k'), 0, 'a success forgets the failures');
    q.shutdown();
  });

  it('brings a delayed key forward when it is asked for sooner', async () => {
    const runs: number[] = [];
    const q = new WorkQueue(async () => {
      runs.push(Date.now());
    });
    const start = Date.now();
    q.addAfter('k', 10_000);
    q.addAfter('k', 20);
    const deadline = Date.now() + 2000;
    while (runs.length === 0 && Date.now() < deadline) await tick(5);
    assert.equal(runs.length, 1);
    assert.ok(runs[0] - start < 1000, 'the sooner time wins');
    q.shutdown();
  });

  it('drops pending retries on shutdown', async () => {
    let runs = 0;
    const q = new WorkQueue(async () => {
      runs++;
      throw new Error('always');
    }, { baseDelayMs: 30 });
    q.add('k');
    await tick(5);
    q.shutdown();
    await tick(60);
    assert.equal(runs, 1);
  });
});
