/**
 * An acknowledged write is durable: a writer killed with SIGKILL mid-stream
 * loses none of the writes it had been told were committed, even when the
 * files are then put back as a power loss would leave them (only what was
 * fsynced survives). A SIGKILL alone cannot show a missing fsync: the kernel
 * still holds the written pages. An LD_PRELOAD shim (fixtures/fsync-snapshot.c,
 * built with the machine's gcc into .cache/) copies each file at each fsync;
 * the test puts the last copies back. With `synchronous=OFF` or `NORMAL` it
 * fails: acknowledged commits were never synced.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';
import { openStorage } from '../../src/storage/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const child = join(here, 'fixtures', 'durability-writer.js');
const repoRoot = join(here, '..', '..', '..');

/** The shim, built once per source version into .cache/. */
function fsyncShim(): string {
  const source = join(repoRoot, 'test', 'storage', 'fixtures', 'fsync-snapshot.c');
  const hash = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 12);
  const out = join(repoRoot, '.cache', `fsync-snapshot-${hash}.so`);
  if (!existsSync(out)) {
    mkdirSync(dirname(out), { recursive: true });
    execFileSync('gcc', ['-shared', '-fPIC', '-O2', '-o', out, source, '-ldl'], { stdio: 'inherit', timeout: 60_000 });
  }
  return out;
}

// Killed before the first checkpoint (with synchronous=NORMAL only checkpoints sync, so all would be lost) and after a few.
for (const kills of [500, 3000]) {
  it(`keeps every acknowledged write after the writer is killed with SIGKILL (after ${kills} acknowledgements) and the unsynced writes are lost`, async () => {
    const root = mkdtempSync(join(tmpdir(), 'kapi-durability-'));
    const dir = join(root, 'data');
    const snapshots = join(root, 'synced');
    mkdirSync(dir);
    mkdirSync(snapshots);
    const path = join(dir, 'state.db');
    try {
      const proc = spawn(process.execPath, [child, path], {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, LD_PRELOAD: fsyncShim(), KAPI_FSYNC_WATCH: dir, KAPI_FSYNC_SNAPSHOTS: snapshots },
      });
      const acked: string[] = [];
      let buffered = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${acked.length} acks within 20s`)), 20_000);
        proc.stdout.on('data', (chunk: Buffer) => {
          buffered += chunk.toString();
          const lines = buffered.split('\n');
          buffered = lines.pop()!;
          for (const line of lines) if (line.startsWith('ACK ')) acked.push(line.slice(4));
          if (acked.length >= kills) {
            clearTimeout(timer);
            proc.kill('SIGKILL');
            resolve();
          }
        });
        proc.on('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      await new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r(null) : proc.once('exit', r)));
      assert.equal(proc.signalCode, 'SIGKILL', 'the writer was killed mid-stream');
      assert.ok(acked.length >= kills, `${acked.length} acknowledged writes`);

      // The power loss: every file goes back to its last synced copy; one never synced is gone.
      for (const f of readdirSync(dir)) rmSync(join(dir, f));
      const synced = readdirSync(snapshots).filter((f) => !f.startsWith('.'));
      assert.ok(synced.some((f) => f.endsWith('-wal')), `the write-ahead log was synced: ${synced.join(', ')}`);
      for (const f of synced) copyFileSync(join(snapshots, f), join(dir, f));

      const storage = openStorage({ kind: 'sqlite', path });
      try {
        const present = new Set((await storage.range('/registry/durability/')).kvs.map((kv) => kv.key));
        const lost = acked.filter((k) => !present.has(k));
        assert.deepEqual(lost, [], 'acknowledged writes lost');
        assert.ok((await storage.currentRevision()) >= acked.length);
      } finally {
        await storage.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
}
