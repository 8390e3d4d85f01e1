// Opens the platform SQLite store (WAL) and applies the platform's numbered migrations plus those of the task queue,
// the module log and the module versions.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PLATFORM_MIGRATIONS, type Migration } from './migrations.ts';
import { EXTERNAL_MIGRATORS } from './external-migrations.ts';

export type Db = Database.Database;

/** File name of the platform database inside the data directory. */
export const PLATFORM_DB_FILE = 'platform.db';

/** Opens (creating when missing) `<dataDir>/platform.db`, WAL mode, foreign keys on, every migration applied. */
export function openPlatformDb(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = new Database(join(dataDir, PLATFORM_DB_FILE));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  migratePlatform(db);
  for (const migrate of EXTERNAL_MIGRATORS) migrate(db);
  return db;
}

/** Applies the platform migrations not yet recorded in `platform_migrations`, each in its own transaction. */
export function migratePlatform(db: Db, migrations: readonly Migration[] = PLATFORM_MIGRATIONS): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS platform_migrations (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const applied = new Set(
    (db.prepare('SELECT id FROM platform_migrations').all() as Array<{ id: number }>).map((row) => row.id),
  );
  const done: number[] = [];
  for (const migration of [...migrations].sort((a, b) => a.id - b.id)) {
    if (applied.has(migration.id)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO platform_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(
        migration.id, migration.name, new Date().toISOString(),
      );
    }).immediate();
    done.push(migration.id);
  }
  return done;
}
