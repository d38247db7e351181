import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage, type Storage } from '../../src/storage/index.js';
import { runStorageConformance } from './conformance.js';

runStorageConformance('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-sqlite-'));
  const path = join(dir, 'state.db');
  let storage: Storage = openStorage({ kind: 'sqlite', path });
  return {
    storage,
    reopen: async () => {
      await storage.close();
      storage = openStorage({ kind: 'sqlite', path });
      return storage;
    },
    cleanup: async () => {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
