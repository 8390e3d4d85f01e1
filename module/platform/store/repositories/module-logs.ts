// The module_logs table on a raw SQLite handle, synchronously: what the unit and system tests that build a lifecycle or
// a module context on a bare database use. The platform itself writes and reads through the query layer
// (../query/repositories/module-logs.ts); this file goes once those tests have moved to it.
import type Database from 'better-sqlite3';
import { scrub, type LogLevel, type ModuleLogEntry, type ModuleLogRow, type ModuleLogSink } from '../../../contract/log.ts';
import { runMigrations } from '../migrator.ts';
import { MODULE_LOG_MIGRATIONS, toModuleLogRow } from '../query/repositories/module-logs.ts';
import type { Selectable } from 'kysely';
import type { ModuleLogsTable } from '../query/tables/host.ts';

const migrated = new WeakSet<Database.Database>();

/** Applies the module log migrations not yet applied (idempotent). */
export function migrateModuleLogStore(db: Database.Database): void {
  if (migrated.has(db)) return;
  runMigrations(db, 'module-logs', MODULE_LOG_MIGRATIONS);
  migrated.add(db);
}

/** Filter of `ModuleLogStore.read` (the admin API's paged, joined queries are services/module-log-query.ts). */
export interface ModuleLogFilter {
  type?: string;
  name?: string;
  level?: LogLevel;
  /** Newest entries returned, default 100. */
  limit?: number;
}

/** Owner of the module_logs table: one INSERT per entry, batches in one transaction. */
export class ModuleLogStore implements ModuleLogSink {
  private readonly insert;

  constructor(private readonly db: Database.Database) {
    migrateModuleLogStore(db);
    this.insert = db.prepare(
      'INSERT INTO module_logs (module_type, module_name, action, level, request, response, context, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
  }

  write(e: ModuleLogEntry): void {
    this.insert.run(e.module_type, e.module_name, e.action, e.level, JSON.stringify(e.request ?? null), JSON.stringify(e.response ?? null), JSON.stringify(e.context ?? {}), e.created_at);
  }

  /**
   * Entries a remote worker sent (`POST /api/worker/module-logs`), all or none in one transaction. They come scrubbed
   * by the worker's logModule; scrubbed again here so a secret-named member never lands at rest.
   */
  writeReceived(entries: readonly ModuleLogEntry[]): void {
    this.db.transaction(() => {
      for (const entry of entries) {
        this.write({ ...entry, request: scrub(entry.request, []), response: scrub(entry.response, []), context: scrub(entry.context, []) as Record<string, unknown> });
      }
    })();
  }

  /** Stored entries, newest first. */
  read(filter: ModuleLogFilter = {}): ModuleLogRow[] {
    return readModuleLogs(this.db, filter);
  }
}

/** The module_logs table of `db` as a sink (one INSERT per entry). */
export function sqliteModuleLogSink(db: Database.Database): ModuleLogSink {
  return new ModuleLogStore(db);
}

/** Stored log rows of a module, newest first. */
export function readModuleLogs(db: Database.Database, filter: ModuleLogFilter = {}): ModuleLogRow[] {
  migrateModuleLogStore(db);
  const conditions = [
    ['module_type', filter.type],
    ['module_name', filter.name],
    ['level', filter.level],
  ].filter((c): c is [string, string] => typeof c[1] === 'string' && c[1] !== '');
  const where = conditions.map(([column]) => `${column} = ?`);
  const args = conditions.map(([, value]) => value);
  const sql = `SELECT * FROM module_logs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
  return (db.prepare(sql).all(...args, filter.limit ?? 100) as Array<Selectable<ModuleLogsTable>>).map(toModuleLogRow);
}
