/**
 * An acknowledged write is durable: a writer killed with SIGKILL mid-stream
 * loses none of the writes it had been told were committed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';
import { openStorage } from '../../src/storage/index.js';

const child = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'durability-writer.js');

it('keeps every acknowledged write after the writer is killed with SIGKILL', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-durability-'));
  const path = join(dir, 'state.db');
  try {
    const proc = spawn(process.execPath, [child, path], { stdio: ['ignore', 'pipe', 'inherit'] });
    const acked: string[] = [];
    let buffered = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${acked.length} acks within 20s`)), 20_000);
      proc.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) if (line.startsWith('ACK ')) acked.push(line.slice(4));
        if (acked.length >= 3000) {
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
    rmSync(dir, { recursive: true, force: true });
  }
});
