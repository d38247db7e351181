/** A start that fails (a taken port, a bad audit policy) leaves nothing open behind its error. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { startKapi } from '../../src/kapi/index.js';

it('releases the store when the port is taken or the configuration is bad', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-start-'));
  const first = await startKapi({ dataDir: join(dir, 'a'), port: 0 });
  try {
    await assert.rejects(startKapi({ dataDir: join(dir, 'b'), port: first.port }), /EADDRINUSE/);
    writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n');
    await assert.rejects(startKapi({ dataDir: join(dir, 'b'), port: 0, auditPolicyFile: join(dir, 'bad.yaml'), auditLogPath: join(dir, 'audit.log') }));
    // The failed starts' store is closed: the data directory opens again, and this process can end.
    const again = await startKapi({ dataDir: join(dir, 'b'), port: 0 });
    await again.stop();
  } finally {
    await first.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
