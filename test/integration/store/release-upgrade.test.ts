// A data directory made by today's release (test/fixtures/platform/release-2026-11) opens with this release: its ledger
// kept, every later step applied in place, every row kept, and its schema the one a fresh database gets.
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { openPlatformDb, PLATFORM_DB_FILE } from '../../../module/platform/store/db.ts';
import { appliedMigrations, runMigrations } from '../../../module/platform/store/migrator.ts';
import { PLATFORM_STORE_SCOPES, sqliteQueryStore } from '../../../module/platform/store/query/query-store.ts';
import { ProductQueries } from '../../../module/platform/store/query/repositories/products.ts';
import { CustomerQueries } from '../../../module/platform/store/query/repositories/customers.ts';
import { readSqliteSchema } from '../../../module/platform/store/sql/schema-model.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

const FIXTURE = new URL('../../fixtures/platform/release-2026-11/', import.meta.url).pathname;

test('the release fixture upgrades in place: ledger and rows kept, schema equal to a fresh database', async () => {
  const dir = tempDir('release-upgrade');
  const fresh = tempDir('release-fresh');
  try {
    cpSync(FIXTURE, dir, { recursive: true });
    // The release's file as it was, read without opening a store (which would migrate it first).
    const before = new Database(`${dir}/${PLATFORM_DB_FILE}`, { readonly: true });
    const oldLedger = appliedMigrations(before);
    const tables = (before.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>).map((t) => t.name);
    const oldRows = new Map(tables.map((name) => [name, before.prepare(`SELECT * FROM "${name}"`).all()]));
    before.close();

    const db = openPlatformDb(dir);
    const empty = openPlatformDb(fresh);
    try {
      for (const [scope, list] of PLATFORM_STORE_SCOPES) {
        runMigrations(db, scope, list);
        runMigrations(empty, scope, list);
      }
      const ledger = appliedMigrations(db);
      for (const row of oldLedger) assert.ok(ledger.some((r) => JSON.stringify(r) === JSON.stringify(row)), `${row.scope} v${row.version} kept as recorded`);
      for (const [scope, list] of PLATFORM_STORE_SCOPES) {
        assert.deepEqual(ledger.filter((r) => r.scope === scope).map((r) => r.version), list.map((m) => m.version).sort((a, b) => a - b), scope);
      }
      for (const [name, rows] of oldRows) {
        if (name === 'platform_migrations') continue;
        const now = db.prepare(`SELECT * FROM "${name}"`).all() as Array<Record<string, unknown>>;
        assert.equal(now.length, rows.length, name);
        // Columns a later step adds may be new; every column the release had keeps its value. Rows are compared as
        // sets: without ORDER BY the order is the query plan's, which an index a later step adds may change.
        const columns = Object.keys((rows[0] ?? {}) as Record<string, unknown>);
        const canonical = (list: Array<Record<string, unknown>>) => list.map((row) => JSON.stringify(columns.map((c) => row[c]))).sort();
        assert.deepEqual(canonical(now), canonical(rows as Array<Record<string, unknown>>), name);
      }
      // The platform's own tables as a fresh database builds them (modules' come with their manifests; VpnProduct's
      // moved the early `panels` table into its own, so the release has none).
      const upgraded = readSqliteSchema(db);
      const built = readSqliteSchema(empty);
      const shared = built.tables.filter((t) => upgraded.tables.some((u) => u.name === t.name));
      assert.ok(shared.length >= built.tables.length - 1, 'only the moved panels table may be missing');
      for (const table of shared) assert.deepEqual(upgraded.tables.find((t) => t.name === table.name), table, table.name);
      const indexesOf = (indexes: typeof built.indexes) => indexes.filter((i) => shared.some((t) => t.name === i.table)).sort((a, b) => a.name.localeCompare(b.name));
      assert.deepEqual(indexesOf(upgraded.indexes), indexesOf(built.indexes));

      const store = sqliteQueryStore(db);
      assert.deepEqual((await new ProductQueries(store).list()).map((p) => p.uuid), (db.prepare('SELECT uuid FROM products ORDER BY position, created_at, uuid').all() as Array<{ uuid: string }>).map((p) => p.uuid));
      assert.equal((await new CustomerQueries(store).list()).length, (db.prepare('SELECT uuid FROM customers').all()).length);
      await store.close();
    } finally {
      db.close();
      empty.close();
    }
  } finally {
    removeDir(dir);
    removeDir(fresh);
  }
});
