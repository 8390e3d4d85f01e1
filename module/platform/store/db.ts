// Opens the platform SQLite store (WAL) and applies the migrations of every scope: the platform's own tables, the task
// queue, the module log and the module versions (one mechanism: ./migrator.ts).
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock, type Clock } from '../../../shared/clock.ts';
import { PLATFORM_DB_SCOPES } from './scopes.ts';
import { runMigrations } from './migrator.ts';

export type Db = Database.Database;

/** File name of the platform database inside the data directory. */
export const PLATFORM_DB_FILE = 'platform.db';

/** Opens (creating when missing) `<dataDir>/platform.db`, WAL mode, foreign keys on, every migration applied (dated by `clock`). */
export function openPlatformDb(dataDir: string, clock: Clock = systemClock): Db {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = new Database(join(dataDir, PLATFORM_DB_FILE));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  migratePlatform(db, clock);
  return db;
}

/** Applies every scope's migrations not yet recorded (see `runMigrations`); returns the versions applied per scope. */
export function migratePlatform(db: Db, clock: Clock = systemClock): Record<string, number[]> {
  const applied: Record<string, number[]> = {};
  for (const [scope, migrations] of PLATFORM_DB_SCOPES) applied[scope] = runMigrations(db, scope, migrations, clock);
  return applied;
}
