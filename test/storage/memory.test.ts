import { LogStore } from '../../src/storage/log-store.js';
import { MemoryLog } from '../../src/storage/memory/memory-log.js';
import { runStorageConformance } from './conformance.js';

runStorageConformance('memory', async () => {
  const log = new MemoryLog();
  let storage = new LogStore(log);
  return {
    storage,
    reopen: async () => {
      await storage.close();
      // The memory log outlives its store, so a new store over it sees what the old one wrote.
      storage = new LogStore(log);
      return storage;
    },
    cleanup: () => storage.close(),
  };
});
