// The store contract on PostgreSQL: one private server for the file (initdb in a temp dir), a fresh database per test.
import { after } from 'node:test';
import { openQueryStore } from '../../module/platform/store/query/query-store.ts';
import { requirePostgres, startPostgres, type PostgresServer } from '../helpers/postgres-server.ts';
import { runStoreContracts } from './store-contracts.ts';

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
  const others: Array<Awaited<ReturnType<typeof openQueryStore>>> = [];
  return {
    store,
    async another() {
      const other = await openQueryStore({ engine: 'postgres', url });
      others.push(other);
      return other;
    },
    async close() {
      for (const other of others) await other.close();
      await store.close();
    },
  };
});
