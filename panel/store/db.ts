// Opens the panel's SQLite database (WAL, foreign keys, busy timeout) and applies numbered migrations in order.
import Database from 'better-sqlite3';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Db = Database.Database;

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
const MIGRATION_FILE = /^(\d{3})-[a-z0-9-]+\.sql$/;

/** One migration file: `NNN-name.sql`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The migrations in `dir`, sorted by number; throws on a duplicate number. */
export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const out: Migration[] = [];
  for (const file of readdirSync(dir)) {
    const match = MIGRATION_FILE.exec(file);
    if (!match) continue;
    out.push({ version: Number(match[1]), name: file, sql: readFileSync(join(dir, file), 'utf8') });
  }
  out.sort((a, b) => a.version - b.version);
  for (let i = 1; i < out.length; i++) {
    if (out[i].version === out[i - 1].version) throw new Error(`duplicate migration number ${out[i].name}`);
  }
  return out;
}

/**
 * Applies every migration not yet recorded in `schema_migrations`, each in its own IMMEDIATE transaction
 * (so a CLI and a running panel opening the same file never apply one twice). Returns the versions applied.
 */
export function migrate(db: Db, migrations = loadMigrations()): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const isApplied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?');
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const applied: number[] = [];
  for (const m of migrations) {
    const apply = db.transaction(() => {
      if (isApplied.get(m.version)) return false;
      db.exec(m.sql);
      record.run(m.version, m.name, new Date().toISOString());
      return true;
    });
    if (apply.immediate()) applied.push(m.version);
  }
  return applied;
}

/**
 * Opens (creating when missing) the database at `path`, or an in-memory one for `':memory:'`, with WAL journal,
 * foreign keys on and a 5 s busy timeout, then applies the migrations of panel/store/migrations.
 */
export function openDatabase(path: string, opts: { migrations?: Migration[] } = {}): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    db.pragma('busy_timeout = 5000');
    if (path !== ':memory:') db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    migrate(db, opts.migrations);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Whether a table exists (for checks of what the migrations created). */
export function tableExists(db: Db, name: string): boolean {
  return !!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name);
}

/** Path of the panel database inside a data directory. */
export function databasePath(dataDir: string): string {
  return join(dataDir, 'panel.db');
}
