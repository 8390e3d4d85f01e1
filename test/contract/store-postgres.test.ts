// The store contract on PostgreSQL: one private server for the file (initdb in a temp dir), a fresh database per test.
import { after } from 'node:test';
import { openQueryStore } from '../../module/platform/store/query/query-store.ts';
import { requirePostgres, startPostgres, type PostgresServer } from '../helpers/postgres-server.ts';
import { openedStores, runStoreContracts } from './store-contracts.ts';

let server: Promise<PostgresServer> | null = null;
let databases = 0;

after(async () => {
  if (server) await (await server).stop();
});

runStoreContracts('postgres', async (t) => {
  if (!requirePostgres(t)) return null;
  server ??= startPostgres();
  const url = await (await server).createDatabase(`contract_${++databases}`);
  const store = await openQueryStore({ engine: 'postgres', url });
  return openedStores(store, () => openQueryStore({ engine: 'postgres', url }));
});
