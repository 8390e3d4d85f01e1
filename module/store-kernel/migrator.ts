// The one migration mechanism of the platform database (shared by the platform and the task records): ordered, versioned schema steps per scope, recorded in
// platform_migrations(scope, version, name, applied_at); databases of the earlier layout are adopted in place.
import type Database from 'better-sqlite3';
import type { ClientBase as PgClient } from 'pg';
import { systemClock, type Clock } from '../../shared/clock.ts';

/** One ordered schema step of a scope; never edited after release. */
export interface Migration {
  version: number;
  name: string;
  /** SQL text (may hold several statements) or a function run inside the step's transaction (given the migrator's clock). */
  up: string | ((db: Database.Database, clock: Clock) => void);
  /**
   * The step rebuilds a table other tables reference (SQLite's way to change a CHECK or a column: create the new
   * table, copy, drop, rename): it runs with foreign keys off, and `PRAGMA foreign_key_check` must find nothing
   * before it commits.
   */
  rebuildsTables?: boolean;
  /**
   * PostgreSQL's form of the step, run instead of the derived schema difference when the step meets an existing
   * PostgreSQL database (sql/pg-migrator.ts): required there for a function step, a step that changes rows or one that
   * rebuilds, renames or drops a table. SQL text, or a function given the migration's connection (inside its
   * transaction) and clock. It must leave the schema SQLite's step leaves. A fresh PostgreSQL database is built from
   * the schema all steps produce and never runs it.
   */
  postgres?: string | ((client: PgClient, clock: Clock) => Promise<void>);
}

/** The scope of the platform's own tables (panels, products, services, tokens). */
export const PLATFORM_SCOPE = 'platform';

/** Scope name of a module's own tables: `module:<Type>/<Name>`. */
export function moduleScope(type: string, name: string): string {
  return `module:${type}/${name}`;
}

const SCOPE_PATTERN = /^(?:platform|tasks|module-logs|module-versions|module-host|sessions|module:[A-Z][A-Za-z0-9]*\/[A-Za-z][A-Za-z0-9_-]*)$/;

/** Databases whose ledger is known to be in the current layout (checked once per handle). */
const ready = new WeakSet<Database.Database>();

/**
 * Creates the ledger, or adopts the earlier one: before scopes, `platform_migrations(id, name, applied_at)` held the
 * platform's steps only, so its rows become scope `platform` with the same versions. (The task, module log and module
 * version tables of that layout were unversioned `CREATE TABLE IF NOT EXISTS`; version 1 of their scopes is that same
 * idempotent SQL, so on such a database it only records itself.)
 */
function ensureLedger(db: Database.Database): void {
  if (ready.has(db)) return;
  db.transaction(() => {
    const columns = (db.prepare("SELECT name FROM pragma_table_info('platform_migrations')").all() as Array<{ name: string }>).map((c) => c.name);
    if (columns.length > 0 && !columns.includes('scope')) {
      db.exec('ALTER TABLE platform_migrations RENAME TO platform_migrations_unscoped');
      createLedger(db);
      db.prepare(
        'INSERT INTO platform_migrations (scope, version, name, applied_at) SELECT ?, id, name, applied_at FROM platform_migrations_unscoped',
      ).run(PLATFORM_SCOPE);
      db.exec('DROP TABLE platform_migrations_unscoped');
    } else if (columns.length === 0) {
      createLedger(db);
    }
  }).immediate();
  ready.add(db);
}

function createLedger(db: Database.Database): void {
  db.exec(`CREATE TABLE platform_migrations (
    scope      TEXT NOT NULL,
    version    INTEGER NOT NULL,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    PRIMARY KEY (scope, version)
  ) WITHOUT ROWID`);
}

function checkList(scope: string, migrations: readonly Migration[]): Migration[] {
  if (!SCOPE_PATTERN.test(scope)) throw new Error(`invalid migration scope ${JSON.stringify(scope)}`);
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  sorted.forEach((migration, i) => {
    if (!Number.isSafeInteger(migration.version) || migration.version < 1) {
      throw new Error(`migration ${scope} ${JSON.stringify(migration.name)}: version must be a positive integer`);
    }
    if (i > 0 && sorted[i - 1].version === migration.version) throw new Error(`migration ${scope} v${migration.version} is defined twice`);
  });
  return sorted;
}

/**
 * Applies the scope's migrations not yet recorded in `platform_migrations(scope, version, name, applied_at)`, each in
 * one IMMEDIATE transaction, in ascending version order. Scopes: 'platform', 'tasks', 'module-logs', 'module-versions',
 * and `module:<Type>/<Name>` for a module's own tables (prefix its tables with a short snake-case of the module name).
 * Returns the versions applied. Safe when several processes open the same file at once: each step re-checks the
 * ledger inside its transaction. Recorded versions the list does not know (a newer release's) are left alone.
 * `applied_at` is read from `clock`.
 */
export function runMigrations(db: Database.Database, scope: string, migrations: readonly Migration[], clock: Clock = systemClock): number[] {
  const steps = checkList(scope, migrations);
  ensureLedger(db);
  const isApplied = db.prepare('SELECT 1 FROM platform_migrations WHERE scope = ? AND version = ?');
  const record = db.prepare('INSERT INTO platform_migrations (scope, version, name, applied_at) VALUES (?, ?, ?, ?)');
  const applied: number[] = [];
  for (const step of steps) {
    if (isApplied.get(scope, step.version)) continue;
    // foreign_keys can only change outside a transaction; it is put back whatever the step does.
    const keys = step.rebuildsTables ? (db.pragma('foreign_keys', { simple: true }) as number) : 0;
    if (keys) db.pragma('foreign_keys = OFF');
    try {
      const ran = db.transaction((): boolean => {
        if (isApplied.get(scope, step.version)) return false;
        if (typeof step.up === 'string') db.exec(step.up);
        else step.up(db, clock);
        if (step.rebuildsTables) {
          const broken = db.pragma('foreign_key_check') as unknown[];
          if (broken.length > 0) throw new Error(`migration ${scope} v${step.version} ${step.name}: ${broken.length} foreign key violations`);
        }
        record.run(scope, step.version, step.name, clock.now().toISOString());
        return true;
      }).immediate();
      if (ran) applied.push(step.version);
    } finally {
      if (keys) db.pragma('foreign_keys = ON');
    }
  }
  return applied;
}

/** One ledger row. */
export interface AppliedMigration {
  scope: string;
  version: number;
  name: string;
  applied_at: string;
}

/** The ledger (of one scope, or all), ordered by scope then version. */
export function appliedMigrations(db: Database.Database, scope?: string): AppliedMigration[] {
  ensureLedger(db);
  const sql = `SELECT scope, version, name, applied_at FROM platform_migrations ${scope === undefined ? '' : 'WHERE scope = ?'} ORDER BY scope, version`;
  return db.prepare(sql).all(...(scope === undefined ? [] : [scope])) as AppliedMigration[];
}
