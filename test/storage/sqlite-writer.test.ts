/** The sqlite log's writer thread: batches commit there, and writes keep working when it is gone. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import type { LogRow } from '../../src/storage/log.js';
import { SqliteLog } from '../../src/storage/sqlite/sqlite-log.js';

const dir = mkdtempSync(join(tmpdir(), 'kapi-sqlite-writer-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const rows = (from: number, n: number): LogRow[] =>
  Array.from({ length: n }, (_, i) => ({ revision: from + i, key: `/k/${from + i}`, created: true, deleted: false, createRevision: from + i, prevRevision: 0, value: `v${from + i}` }));

// The log's internals this test drives: whether the thread is up, and the thread itself.
type Internals = { writerUp: boolean; writer: { terminate(): Promise<number> } };

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

it('commits batches on the writer thread, and on its own connection once the thread is gone', async () => {
  const path = join(dir, 'state.db');
  const log = new SqliteLog(path);
  const internals = log as unknown as Internals;
  await until(() => internals.writerUp, 'the writer thread');
  const onThread = log.append(rows(1, 5));
  assert.ok(onThread instanceof Promise, 'a batch goes to the writer thread');
  await onThread;
  await internals.writer.terminate();
  await until(() => !internals.writerUp, 'the log to notice the thread is gone');
  await log.append(rows(6, 5));
  assert.equal(log.readValue(10), 'v10');
  await log.close();

  const reopened = new SqliteLog(path);
  const loaded = reopened.load();
  assert.equal(loaded.revision, 10);
  // The load leaves values in the log; they are read back by revision, one or many at a time.
  assert.deepEqual(loaded.live.map((kv) => reopened.readValue(kv.modRevision)).sort(), rows(1, 10).map((r) => r.value).sort());
  assert.deepEqual(reopened.readValues(loaded.live.map((kv) => kv.modRevision)).sort(), rows(1, 10).map((r) => r.value).sort());
  await reopened.close();
});

it('reads values back many at a time, in the order asked, across statements', async () => {
  const log = new SqliteLog(join(dir, 'values.db'));
  await log.append(rows(1, 700));
  const asked = Array.from({ length: 700 }, (_, i) => 700 - i).filter((r) => r % 3 !== 0);
  assert.deepEqual(log.readValues(asked), asked.map((r) => `v${r}`));
  assert.throws(() => log.readValues([5, 701]), /no row/);
  await log.close();
});
