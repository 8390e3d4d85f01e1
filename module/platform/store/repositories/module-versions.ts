// The module_versions table on a raw SQLite handle, synchronously: what the unit and system tests that build a module
// context on a bare database use. The platform reads and records versions through the query layer
// (../query/repositories/module-versions.ts); this file goes once those tests have moved to it.
import type Database from 'better-sqlite3';
import type { ModuleVersionStore } from '../../../contract/platform-context.ts';
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import { runMigrations } from '../migrator.ts';
import { MODULE_VERSION_MIGRATIONS } from '../query/repositories/module-versions.ts';

const migrated = new WeakSet<Database.Database>();

/** Applies the module version migrations not yet applied (idempotent). */
export function migrateModuleVersionStore(db: Database.Database): void {
  if (migrated.has(db)) return;
  runMigrations(db, 'module-versions', MODULE_VERSION_MIGRATIONS);
  migrated.add(db);
}

/** The module_versions table as the modules' version store (times from `clock`). */
export class ModuleVersionRepository implements ModuleVersionStore {
  private readonly getStmt;
  private readonly putStmt;

  constructor(db: Database.Database, private readonly clock: Clock = systemClock) {
    migrateModuleVersionStore(db);
    this.getStmt = db.prepare('SELECT version FROM module_versions WHERE module_type = ? AND module_name = ?');
    this.putStmt = db.prepare(
      `INSERT INTO module_versions (module_type, module_name, version, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (module_type, module_name) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at`,
    );
  }

  /** The installed version, or null when none is recorded. */
  installed(type: string, name: string): string | null {
    return (this.getStmt.get(type, name) as { version: string } | undefined)?.version ?? null;
  }

  record(type: string, name: string, version: string): void {
    this.putStmt.run(type, name, version, this.clock.now().toISOString());
  }

  /** Reads are never cached here: nothing to load. */
  async refresh(): Promise<void> {}
}

/** The module_versions table of `db` as the modules' version store (times from `clock`). */
export function sqliteModuleVersionStore(db: Database.Database, clock: Clock = systemClock): ModuleVersionStore {
  return new ModuleVersionRepository(db, clock);
}

/** The installed version, or null when none is recorded. */
export function installedVersion(db: Database.Database, type: string, name: string): string | null {
  return new ModuleVersionRepository(db).installed(type, name);
}

/** Records `version` as installed (at `clock`'s time). */
export function recordVersion(db: Database.Database, type: string, name: string, version: string, clock: Clock = systemClock): void {
  new ModuleVersionRepository(db, clock).record(type, name, version);
}
