// Bench (not a test): the admin services list's store query (ServiceQueries.page: COUNT + one page of 50, newest first)
// at 100,000 services on SQLite and on PostgreSQL in the same run — first, middle and last page, unfiltered and by
// location — printed as PostgreSQL/SQLite ratios against issue 22's bound (PostgreSQL within 2x of SQLite).
//
// Run: `node --import tsx test/bench/store-services-list.ts [--services 100000] [--rounds 15]`. SQLite: a temp data
// directory (WAL, as the platform opens it). PostgreSQL: a private server from test/helpers/postgres-server.ts (fsync
// off), on the same host. Both analysed after the fill. The page's rendering (web) is not part of this figure.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openQueryStore, type QueryStore } from '../../module/platform/store/query/query-store.ts';
import { ServiceQueries, type ServicePageQuery } from '../../module/platform/store/query/repositories/services.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { removeDir, tempDir } from '../fixtures/platform/processes.ts';
import { postgresBinDir, startPostgres } from '../helpers/postgres-server.ts';
import { fmt, median } from './bench-math.ts';

const { values: args } = parseArgs({ options: { services: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '15' } }, strict: true });
const N = Number(args.services);
const ROUNDS = Number(args.rounds);
const PER_PAGE = 50;
const LOCATIONS = ['ams', 'fra', 'lon', 'nyc'];

/** 8 products over 4 locations and N services spread over them, creation times one second apart. */
async function fill(store: QueryStore): Promise<void> {
  const products = Array.from({ length: 8 }, (_, i) => ({
    uuid: randomUUID(), module: 'VpnProduct', product_data: JSON.stringify({ server_location: LOCATIONS[i % 4], plan_type: 'basic', bandwidth: 10 }),
    created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
  }));
  await store.db.insertInto('products').values(products).execute();
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  await store.db.transaction().execute(async (trx) => {
    for (let offset = 0; offset < N; offset += 1000) {
      const rows = Array.from({ length: Math.min(1000, N - offset) }, (_, j) => {
        const i = offset + j;
        const at = new Date(start + i * 1000).toISOString();
        return {
          uuid: randomUUID(), product_uuid: products[i % 8].uuid, module: 'VpnProduct', service_data: JSON.stringify({ username: `user_${i}` }),
          provision_status: i % 10 === 0 ? 'suspended' : 'completed', status_reason: null, provision_data: '{}', customer_uuid: null, created_at: at, updated_at: at,
        };
      });
      await trx.insertInto('services').values(rows).execute();
    }
  });
  await sql`ANALYZE`.execute(store.db);
}

/** Median milliseconds of `page` over ROUNDS runs (after one warm-up). */
async function time(services: ServiceQueries, query: ServicePageQuery): Promise<number> {
  await services.page(query);
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = process.hrtime.bigint();
    const { uuids } = await services.page(query);
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (uuids.length === 0) throw new Error(`empty page ${JSON.stringify(query)}`);
  }
  return median(samples);
}

if (!postgresBinDir()) {
  process.stderr.write('store-services-list bench needs: postgresql (sudo bash .ci/install-system-deps.sh)\n');
  process.exit(2);
}
const box = SecretBox.fromKey(Buffer.alloc(32, 1));
const dataDir = tempDir('bench-store');
const server = await startPostgres();
const sqlite = await openQueryStore({ engine: 'sqlite', dataDir });
const postgres = await openQueryStore({ engine: 'postgres', url: server.url });
try {
  for (const store of [sqlite, postgres]) {
    const t0 = Date.now();
    await fill(store);
    process.stdout.write(`${store.engine}: ${N} services filled in ${fmt((Date.now() - t0) / 1000)} s\n`);
  }
  const pages = (total: number) => [['first', 1], ['middle', Math.ceil(total / PER_PAGE / 2)], ['last', Math.ceil(total / PER_PAGE)]] as const;
  process.stdout.write(`\n${'query'.padEnd(22)} ${'sqlite ms'.padStart(10)} ${'postgres ms'.padStart(12)} ${'ratio'.padStart(7)}  bound 2.00\n`);
  let worst = 0;
  for (const [label, filter, total] of [['all', {}, N], ['location=fra', { location: 'fra' }, Math.ceil(N / 4)]] as const) {
    for (const [where, page] of pages(total)) {
      const query = { ...filter, page, per_page: PER_PAGE };
      const a = await time(new ServiceQueries(sqlite, box), query);
      const b = await time(new ServiceQueries(postgres, box), query);
      worst = Math.max(worst, b / a);
      process.stdout.write(`${`${label} ${where}`.padEnd(22)} ${fmt(a, 2).padStart(10)} ${fmt(b, 2).padStart(12)} ${fmt(b / a, 2).padStart(7)}  ${b / a <= 2 ? 'within' : 'OVER'}\n`);
    }
  }
  process.stdout.write(`\nworst PostgreSQL/SQLite ratio ${fmt(worst, 2)} (bound 2.00)\n`);
} finally {
  await sqlite.close();
  await postgres.close();
  await server.stop();
  removeDir(dataDir);
}
