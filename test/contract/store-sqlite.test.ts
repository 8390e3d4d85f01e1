// The store contract on SQLite (the embedded default): a fresh data directory per test.
import { openQueryStore } from '../../module/platform/store/query/query-store.ts';
import { removeDir, tempDir } from '../fixtures/platform/processes.ts';
import { runStoreContracts } from './store-contracts.ts';

runStoreContracts('sqlite', async () => {
  const dataDir = tempDir('store-contract');
  const store = await openQueryStore({ engine: 'sqlite', dataDir });
  const others: Array<Awaited<ReturnType<typeof openQueryStore>>> = [];
  return {
    store,
    async another() {
      const other = await openQueryStore({ engine: 'sqlite', dataDir });
      others.push(other);
      return other;
    },
    async close() {
      for (const other of others) await other.close();
      await store.close();
      removeDir(dataDir);
    },
  };
});
