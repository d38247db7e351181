/**
 * The test server gives back what it took: 100 start/stop cycles of `startTestServer()` in one process keep less
 * than 5 MiB of heap (each kept about 1.5 MiB when every server's metrics registry stayed referenced by the
 * process-wide collectors). Measured in a process of its own, with collections forced before each reading.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { it } from 'node:test';

const testing = pathToFileURL(join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'src', 'testing', 'index.js')).href;

const SCRIPT = `
const { startTestServer } = await import(${JSON.stringify(testing)});
const cycle = async () => { const s = await startTestServer(); await s.stop(); };
const heap = () => { for (let i = 0; i < 3; i++) globalThis.gc(); return process.memoryUsage().heapUsed; };
// Caches that fill to their bound first (compiled schemas, interned strings), then the cycles measured.
for (let i = 0; i < 20; i++) await cycle();
const before = heap();
for (let i = 0; i < 100; i++) await cycle();
process.stdout.write(String(heap() - before));
`;

it('keeps less than 5 MiB of heap over 100 start/stop cycles', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--input-type=module', '-e', SCRIPT], { timeout: 120_000, encoding: 'utf8' });
  const kept = Number(stdout);
  assert.ok(Number.isFinite(kept), stdout);
  assert.ok(kept < 5 * 1024 * 1024, `${(kept / 1048576).toFixed(2)} MiB kept over 100 cycles`);
});
