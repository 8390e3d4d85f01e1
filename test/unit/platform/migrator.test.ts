// runMigrations: ordered versioned steps per scope, each once, in its own transaction; the earlier ledger adopted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { appliedMigrations, moduleScope, runMigrations, type Migration } from '../../../module/platform/store/migrator.ts';
import { manualClock } from '../../../shared/clock.ts';

const tables = (db: Database.Database) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);

test('steps run in ascending version order, each once, and are recorded per scope', () => {
  const db = new Database(':memory:');
  const order: number[] = [];
  const steps: Migration[] = [
    { version: 2, name: 'second', up: (d) => { order.push(2); d.exec('ALTER TABLE vp_things ADD COLUMN label TEXT'); } },
    { version: 1, name: 'first', up: 'CREATE TABLE vp_things (id INTEGER PRIMARY KEY)' },
  ];
  assert.deepEqual(runMigrations(db, moduleScope('Product', 'VpnProduct'), steps), [1, 2]);
  assert.deepEqual(order, [2]);
  assert.deepEqual(runMigrations(db, moduleScope('Product', 'VpnProduct'), steps), []);
  assert.deepEqual(order, [2]);
  // Another scope with the same versions is independent.
  assert.deepEqual(runMigrations(db, 'tasks', [{ version: 1, name: 'other', up: 'CREATE TABLE other_t (x)' }]), [1]);
  assert.deepEqual(
    appliedMigrations(db).map((m) => [m.scope, m.version, m.name]),
    [['module:Product/VpnProduct', 1, 'first'], ['module:Product/VpnProduct', 2, 'second'], ['tasks', 1, 'other']],
  );
  const later = [...steps, { version: 3, name: 'third', up: 'CREATE INDEX vp_things_label ON vp_things (label)' }];
  assert.deepEqual(runMigrations(db, 'module:Product/VpnProduct', later), [3]);
});

test('a failing step rolls back whole and is not recorded; earlier steps stay', () => {
  const db = new Database(':memory:');
  const steps: Migration[] = [
    { version: 1, name: 'ok', up: 'CREATE TABLE a (x)' },
    { version: 2, name: 'broken', up: 'CREATE TABLE b (x); INSERT INTO nowhere VALUES (1)' },
  ];
  assert.throws(() => runMigrations(db, 'platform', steps), /no such table: nowhere/);
  assert.deepEqual(tables(db), ['a', 'platform_migrations']);
  assert.deepEqual(appliedMigrations(db, 'platform').map((m) => m.version), [1]);
});

test('bad lists and scopes are refused before anything runs', () => {
  const db = new Database(':memory:');
  assert.throws(() => runMigrations(db, 'platform', [{ version: 1, name: 'a', up: 'CREATE TABLE a (x)' }, { version: 1, name: 'b', up: '' }]), /defined twice/);
  assert.throws(() => runMigrations(db, 'platform', [{ version: 0, name: 'zero', up: '' }]), /positive integer/);
  assert.throws(() => runMigrations(db, 'whatever', []), /invalid migration scope/);
  assert.throws(() => runMigrations(db, 'module:product/x', []), /invalid migration scope/);
  assert.equal(tables(db).includes('a'), false);
});

test('the earlier unscoped ledger platform_migrations(id, name, applied_at) becomes scope platform', () => {
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE platform_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);
    INSERT INTO platform_migrations VALUES (1, 'initial', '2026-01-01T00:00:00.000Z'), (2, 'token-scopes', '2026-01-02T00:00:00.000Z');
    CREATE TABLE t1 (x);`);
  const steps: Migration[] = [
    { version: 1, name: 'initial', up: 'CREATE TABLE t1 (x)' },
    { version: 2, name: 'token-scopes', up: 'ALTER TABLE t1 ADD COLUMN y' },
    { version: 3, name: 'new', up: 'ALTER TABLE t1 ADD COLUMN z' },
  ];
  assert.deepEqual(runMigrations(db, 'platform', steps, manualClock(new Date('2026-03-04T05:06:07.000Z'))), [3]);
  assert.deepEqual(
    appliedMigrations(db).map((m) => [m.scope, m.version, m.name, m.applied_at]),
    [['platform', 1, 'initial', '2026-01-01T00:00:00.000Z'], ['platform', 2, 'token-scopes', '2026-01-02T00:00:00.000Z'], ['platform', 3, 'new', '2026-03-04T05:06:07.000Z']],
  );
  assert.equal(tables(db).includes('platform_migrations_unscoped'), false);
});
