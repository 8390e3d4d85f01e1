// The store contract on SQLite (the embedded default): a fresh data directory per test.
import { openQueryStore } from '../../module/platform/store/query/query-store.ts';
import { removeDir, tempDir } from '../fixtures/platform/processes.ts';
import { openedStores, runStoreContracts } from './store-contracts.ts';

runStoreContracts('sqlite', async () => {
  const dataDir = tempDir('store-contract');
  const store = await openQueryStore({ engine: 'sqlite', dataDir });
  return openedStores(store, () => openQueryStore({ engine: 'sqlite', dataDir }), () => removeDir(dataDir));
});
