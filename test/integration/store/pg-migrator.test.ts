// The PostgreSQL migrator on a private server: racing processes apply each step once, schema-only steps of a scope
// already in use are applied as their additive difference, anything else is refused before it changes a thing, and the
// schema matches SQLite's table for table.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type pg from 'pg';
import { createPgPool, PLATFORM_STORE_SCOPES } from '../../../module/platform/store/query/query-store.ts';
import { migratePostgres, type ScopeList } from '../../../module/platform/store/sql/pg-migrator.ts';
import { readSqliteSchema } from '../../../module/platform/store/sql/schema-model.ts';
import { openPlatformDb } from '../../../module/platform/store/db.ts';
import { runMigrations, type Migration } from '../../../module/platform/store/migrator.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';
import { requirePostgres, startPostgres, type PostgresServer } from '../../helpers/postgres-server.ts';

let server: Promise<PostgresServer> | null = null;
let databases = 0;
const pools: pg.Pool[] = [];

after(async () => {
  await Promise.all(pools.map((p) => p.end()));
  if (server) await (await server).stop();
});

async function freshPool(): Promise<pg.Pool> {
  server ??= startPostgres();
  const pool = createPgPool(await (await server).createDatabase(`migrator_${++databases}`));
  pools.push(pool);
  return pool;
}

const columnsOf = async (pool: pg.Pool, table: string): Promise<string[]> =>
  (await pool.query<{ column_name: string }>('SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position', [table]))
    .rows.map((r) => r.column_name);

const DEMO: Migration[] = [
  { version: 1, name: 'demo', up: 'CREATE TABLE demo_items (id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT NOT NULL, product_uuid TEXT REFERENCES products(uuid))' },
  { version: 2, name: 'demo-notes', up: `ALTER TABLE demo_items ADD COLUMN note TEXT NOT NULL DEFAULT '';
    CREATE INDEX demo_items_label ON demo_items (label);
    CREATE TABLE demo_tags (item_id INTEGER NOT NULL REFERENCES demo_items(id), tag TEXT NOT NULL CHECK (length(tag) > 0), PRIMARY KEY (item_id, tag))` },
];
const withDemo = (steps: Migration[]): ScopeList => [...PLATFORM_STORE_SCOPES, ['module:Test/Demo', steps]];

test('processes racing to migrate a fresh database: each step applied once, by one of them', async (t) => {
  if (!requirePostgres(t)) return;
  const pool = await freshPool();
  const results = await Promise.all([1, 2, 3].map(() => migratePostgres(pool, PLATFORM_STORE_SCOPES)));
  const appliers = results.filter((r) => r.platform.length > 0);
  assert.equal(appliers.length, 1);
  assert.deepEqual(appliers[0].platform, PLATFORM_STORE_SCOPES[0][1].map((m) => m.version));
  const ledger = await pool.query<{ n: number }>('SELECT COUNT(*) AS n FROM platform_migrations');
  assert.equal(ledger.rows[0].n, PLATFORM_STORE_SCOPES.reduce((n, [, list]) => n + list.length, 0));
  const roles = await pool.query<{ n: number }>('SELECT COUNT(*) AS n FROM admin_roles');
  assert.equal(roles.rows[0].n, 1, 'the seeded role once');
});

test('a schema-only step of a scope in use is applied as its difference; a rebuild or a row change is refused untouched', async (t) => {
  if (!requirePostgres(t)) return;
  const pool = await freshPool();
  assert.deepEqual((await migratePostgres(pool, withDemo(DEMO.slice(0, 1))))['module:Test/Demo'], [1]);
  await pool.query("INSERT INTO demo_items (label) VALUES ('kept')");
  assert.deepEqual((await migratePostgres(pool, withDemo(DEMO)))['module:Test/Demo'], [2]);
  assert.deepEqual(await columnsOf(pool, 'demo_items'), ['id', 'label', 'product_uuid', 'note']);
  assert.deepEqual((await pool.query('SELECT label, note FROM demo_items')).rows, [{ label: 'kept', note: '' }]);
  await assert.rejects(pool.query("INSERT INTO demo_tags (item_id, tag) VALUES (1, '')"), /check/i);
  await assert.rejects(pool.query("INSERT INTO demo_tags (item_id, tag) VALUES (99, 'x')"), /foreign key/i);
  const indexes = await pool.query("SELECT indexname FROM pg_indexes WHERE indexname = 'demo_items_label'");
  assert.equal(indexes.rows.length, 1);

  const rebuild: Migration = { version: 3, name: 'rebuild', up: `CREATE TABLE demo_v3 (id INTEGER PRIMARY KEY, label TEXT);
    INSERT INTO demo_v3 SELECT id, label FROM demo_items; DROP TABLE demo_tags; DROP TABLE demo_items; ALTER TABLE demo_v3 RENAME TO demo_items;` };
  await assert.rejects(migratePostgres(pool, withDemo([...DEMO, rebuild])), /module:Test\/Demo v3 rebuild changes rows; on PostgreSQL it needs a portable form/);
  const exprDefault: Migration = { version: 3, name: 'typed', up: 'DROP INDEX demo_items_label; CREATE TABLE demo_x (a TEXT DEFAULT (lower(\'X\')))' };
  await assert.rejects(migratePostgres(pool, withDemo([...DEMO, exprDefault])), /demo_x\.a: default .* has no PostgreSQL form/);
  assert.equal((await pool.query("SELECT indexname FROM pg_indexes WHERE indexname = 'demo_items_label'")).rows.length, 1, 'refused before any statement ran');
  const ledger = await pool.query("SELECT version FROM platform_migrations WHERE scope = 'module:Test/Demo' ORDER BY version");
  assert.deepEqual(ledger.rows.map((r) => r.version), [1, 2]);

  // With its `postgres` form, a step that changes rows runs there; the next step's difference starts from its schema.
  const backfill: Migration = { version: 3, name: 'backfill', up: (db) => { db.prepare("UPDATE demo_items SET note = 'n/a' WHERE note = ''").run(); },
    postgres: "UPDATE demo_items SET note = 'n/a' WHERE note = ''" };
  const more: Migration = { version: 4, name: 'more', up: 'ALTER TABLE demo_items ADD COLUMN rank INTEGER NOT NULL DEFAULT 0' };
  assert.deepEqual((await migratePostgres(pool, withDemo([...DEMO, backfill, more])))['module:Test/Demo'], [3, 4]);
  assert.deepEqual((await pool.query('SELECT label, note, rank FROM demo_items')).rows, [{ label: 'kept', note: 'n/a', rank: 0 }]);
  // A function form runs inside the migration's transaction: when it throws, nothing of the run stays.
  const ranked: Migration = { version: 5, name: 'ranked', up: (db) => { db.prepare('UPDATE demo_items SET rank = 1').run(); },
    postgres: async (client) => { await client.query('UPDATE demo_items SET rank = (SELECT COUNT(*) FROM demo_items)'); } };
  const broken: Migration = { version: 6, name: 'broken', up: 'CREATE TABLE demo_more (x TEXT)', postgres: async (client) => { await client.query('SELECT no_such_column FROM demo_items'); } };
  await assert.rejects(migratePostgres(pool, withDemo([...DEMO, backfill, more, ranked, broken])), /no_such_column/);
  assert.deepEqual((await pool.query('SELECT rank FROM demo_items')).rows, [{ rank: 0 }], 'step 5 rolled back with step 6');
  assert.deepEqual((await migratePostgres(pool, withDemo([...DEMO, backfill, more, ranked])))['module:Test/Demo'], [5]);
  assert.deepEqual((await pool.query('SELECT rank FROM demo_items')).rows, [{ rank: 1 }]);
});

test('a platform database on PostgreSQL made at version 6 takes the later platform steps in place (additive ones derived)', async (t) => {
  if (!requirePostgres(t)) return;
  const pool = await freshPool();
  const [platformScope, platformSteps] = PLATFORM_STORE_SCOPES[0];
  assert.ok(platformSteps.some((m) => m.version > 6), 'steps written after the release fixture (7: product-listing)');
  const older: ScopeList = PLATFORM_STORE_SCOPES.map(([scope, list]) => [scope, scope === platformScope ? list.filter((m) => m.version <= 6) : list]);
  await migratePostgres(pool, older);
  await pool.query("INSERT INTO products (uuid, module, product_data, created_at, updated_at) VALUES ('p-1', 'VpnProduct', '{}', 'now', 'now')");
  const applied = await migratePostgres(pool, PLATFORM_STORE_SCOPES);
  assert.deepEqual(applied[platformScope], platformSteps.filter((m) => m.version > 6).map((m) => m.version));
  const fresh = await freshPool();
  await migratePostgres(fresh, PLATFORM_STORE_SCOPES);
  for (const table of ['products', 'services', 'invoices', 'transactions']) assert.deepEqual(await columnsOf(pool, table), await columnsOf(fresh, table), table);
  const indexes = async (p: pg.Pool) => (await p.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname")).rows.map((r) => r.indexname);
  assert.deepEqual(await indexes(pool), await indexes(fresh));
  assert.equal((await pool.query('SELECT COUNT(*) AS n FROM products')).rows[0].n, 1, 'rows kept');
});

test('PostgreSQL gets SQLite\'s tables, columns, NOT NULLs and indexes', async (t) => {
  if (!requirePostgres(t)) return;
  const pool = await freshPool();
  await migratePostgres(pool, PLATFORM_STORE_SCOPES);
  const dir = tempDir('pg-schema');
  const db = openPlatformDb(dir);
  try {
    for (const [scope, list] of PLATFORM_STORE_SCOPES) runMigrations(db, scope, list);
    const model = readSqliteSchema(db);
    const pgColumns = await pool.query<{ table_name: string; column_name: string; is_nullable: string }>(
      "SELECT table_name, column_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position");
    const pgTables = [...new Set(pgColumns.rows.map((r) => r.table_name))].filter((n) => n !== 'platform_migrations').sort();
    assert.deepEqual(pgTables, model.tables.map((t) => t.name).sort());
    for (const table of model.tables) {
      const mine = pgColumns.rows.filter((r) => r.table_name === table.name).map((r) => [r.column_name, r.is_nullable === 'NO']);
      assert.deepEqual(mine, table.columns.map((c) => [c.name, c.notNull]), table.name);
    }
    const pgIndexes = await pool.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'");
    const names = new Set(pgIndexes.rows.map((r) => r.indexname));
    for (const index of model.indexes) assert.ok(names.has(index.name), index.name);
  } finally {
    db.close();
    removeDir(dir);
  }
});
