// SQLite store: pragmas, numbered migrations applied once in order, rollback of a failing migration, repositories.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadMigrations, migrate, openDatabase, tableExists } from '../../../panel/store/db.ts';
import { SettingsRepository } from '../../../panel/store/repositories/settings.ts';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'vpnhost-store-'));
}

describe('openDatabase', () => {
  it('uses WAL, foreign keys and a busy timeout, and records the migrations', () => {
    const dir = tempDir();
    try {
      const db = openDatabase(join(dir, 'sub', 'panel.db'));
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
      assert.equal(db.pragma('busy_timeout', { simple: true }), 5000);
      const rows = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as Array<{ version: number; name: string }>;
      assert.deepEqual(rows[0], { version: 1, name: '001-core.sql' });
      assert.deepEqual(rows.map((r) => r.version), loadMigrations().map((m) => m.version));
      for (const table of ['access_hashes', 'settings', 'license']) assert.ok(tableExists(db, table), table);
      db.close();
      const again = openDatabase(join(dir, 'sub', 'panel.db'));
      assert.equal((again.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get() as { n: number }).n, rows.length, 'not applied twice');
      again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('applies migrations in number order and rolls back a failing one', () => {
    const dir = tempDir();
    try {
      const migrations = join(dir, 'migrations');
      mkdirSync(migrations);
      writeFileSync(join(migrations, '002-second.sql'), 'CREATE TABLE b (id INTEGER REFERENCES a(id));');
      writeFileSync(join(migrations, '001-first.sql'), 'CREATE TABLE a (id INTEGER PRIMARY KEY);');
      writeFileSync(join(migrations, '003-broken.sql'), 'CREATE TABLE c (id INTEGER); CREATE TABLE oops (;');
      writeFileSync(join(migrations, 'README.md'), 'ignored');
      const list = loadMigrations(migrations);
      assert.deepEqual(list.map((m) => m.name), ['001-first.sql', '002-second.sql', '003-broken.sql']);
      const db = openDatabase(':memory:', { migrations: [] });
      assert.throws(() => migrate(db, list));
      assert.ok(tableExists(db, 'a') && tableExists(db, 'b'));
      assert.ok(!tableExists(db, 'c'), 'the failing migration left nothing behind');
      assert.deepEqual((db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map((r) => r.version), [1, 2]);
      assert.throws(() => db.prepare('INSERT INTO b (id) VALUES (99)').run(), /FOREIGN KEY/);
      db.close();
      writeFileSync(join(migrations, '002-dup.sql'), 'SELECT 1;');
      assert.throws(() => loadMigrations(migrations), /duplicate migration number/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SettingsRepository', () => {
  it('stores JSON values, overwrites, deletes, and ignores unreadable rows', () => {
    const db = openDatabase(':memory:');
    const settings = new SettingsRepository(db);
    assert.equal(settings.get('x'), undefined);
    settings.set('x', { a: 1 });
    settings.set('x', { a: 2 });
    assert.deepEqual(settings.get('x'), { a: 2 });
    settings.setMany({ y: 'text', z: [1] });
    assert.equal(settings.get('y'), 'text');
    settings.delete('y');
    assert.equal(settings.get('y'), undefined);
    db.prepare("INSERT INTO settings (key, value, updated_at) VALUES ('bad', '{nope', 'now')").run();
    assert.equal(settings.get('bad'), undefined);
    db.close();
  });
});
