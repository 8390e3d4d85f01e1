// The module_logs table (scope `module-logs`) over the query layer: the platform's ModuleLogSink (modules' logModule and
// the lifecycle's job outcomes), batches received from remote workers (one transaction) and reads of stored entries.
import { scrub, type LogLevel, type ModuleLogEntry, type ModuleLogRow, type ModuleLogSink } from '../../../../contract/log.ts';
import type { Migration } from '../../migrator.ts';
import type { QueryStore } from '../query-store.ts';
import type { Insertable, Selectable } from 'kysely';
import type { ModuleLogsTable } from '../tables/host.ts';
import { InsertBatcher } from '../insert-batcher.ts';

/** Scope `module-logs` of the platform database (version 1 is the earlier unversioned table, hence `IF NOT EXISTS`). */
export const MODULE_LOG_MIGRATIONS: readonly Migration[] = [{
  version: 1,
  name: 'module-logs',
  up: `CREATE TABLE IF NOT EXISTS module_logs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    module_type TEXT NOT NULL,
    module_name TEXT NOT NULL,
    action TEXT NOT NULL,
    level TEXT NOT NULL CHECK (level IN ('info', 'error', 'debug')),
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    context TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS module_logs_module ON module_logs (module_type, module_name, id);`,
}];

/** A module_logs row as answered (request, response and context parsed back from JSON). */
export function toModuleLogRow(row: Selectable<ModuleLogsTable>): ModuleLogRow {
  return {
    id: Number(row.id),
    module_type: row.module_type,
    module_name: row.module_name,
    action: row.action,
    level: row.level,
    request: JSON.parse(row.request) as unknown,
    response: JSON.parse(row.response) as unknown,
    context: JSON.parse(row.context) as Record<string, unknown>,
    created_at: row.created_at,
  };
}

/** Filter of `ModuleLogRepository.read` (the admin API's paged, joined queries are services/module-log-query.ts). */
export interface ModuleLogFilter {
  type?: string;
  name?: string;
  level?: LogLevel;
  /** Newest entries returned, default 100. */
  limit?: number;
}

/** Most entries written by one INSERT. */
const BATCH_ROWS = 200;

/** The row of an entry. */
function rowOf(e: ModuleLogEntry): Insertable<ModuleLogsTable> {
  return {
    module_type: e.module_type, module_name: e.module_name, action: e.action, level: e.level,
    request: JSON.stringify(e.request ?? null), response: JSON.stringify(e.response ?? null), context: JSON.stringify(e.context ?? {}), created_at: e.created_at,
  };
}

/**
 * Owner of the module_logs table. `write` answers a promise settled once the row is stored; entries written outside a
 * transaction are stored together, in the order written, by one INSERT per batch: the entries of one run of code
 * (before it awaits), and every entry written while the INSERT before was on its way (one at a time, so many jobs
 * logging at once cost one statement per round trip, not one per entry). logModule
 * does not wait for it, so `read` (and `settled`) first wait for this process's writes still on their way: a reader
 * sees what was logged before it asked. `within(tx)` writes inside a caller's transaction (the lifecycle's status
 * change and its log row commit together).
 */
export class ModuleLogRepository implements ModuleLogSink {
  private readonly pending = new Set<Promise<unknown>>();
  /** Entries written outside a transaction, stored together (insert-batcher.ts). */
  private readonly batches: InsertBatcher<Insertable<ModuleLogsTable>>;

  constructor(private readonly store: QueryStore) {
    this.batches = new InsertBatcher(async (rows) => void await this.store.db.insertInto('module_logs').values(rows).execute(), BATCH_ROWS);
  }

  /** The same table on `tx` (a store handed out by `QueryStore.transaction`): its writes commit or roll back with it. */
  within(tx: QueryStore): ModuleLogRepository {
    return new ModuleLogRepository(tx);
  }

  /** Stores one entry (already scrubbed by logModule). */
  write(e: ModuleLogEntry): Promise<void> {
    const done = this.store.inTransaction
      ? this.store.db.insertInto('module_logs').values(rowOf(e)).execute().then(() => undefined)
      : this.batches.add(rowOf(e));
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done)).catch(() => undefined);
    return done;
  }

  /**
   * Entries a remote worker sent (`POST /api/worker/module-logs`), all or none in one transaction. They come scrubbed
   * by the worker's logModule; scrubbed again here so a secret-named member never lands at rest.
   */
  async writeReceived(entries: readonly ModuleLogEntry[]): Promise<void> {
    await this.store.transaction(async (tx) => {
      const logs = this.within(tx);
      for (const entry of entries) {
        await logs.write({ ...entry, request: scrub(entry.request, []), response: scrub(entry.response, []), context: scrub(entry.context, []) as Record<string, unknown> });
      }
    });
  }

  /** Resolves once every write this repository started has settled (stored or failed). */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  /** Stored entries, newest first (after this process's writes on their way). */
  async read(filter: ModuleLogFilter = {}): Promise<ModuleLogRow[]> {
    await this.settled();
    let query = this.store.db.selectFrom('module_logs').selectAll();
    if (filter.type) query = query.where('module_type', '=', filter.type);
    if (filter.name) query = query.where('module_name', '=', filter.name);
    if (filter.level) query = query.where('level', '=', filter.level);
    return (await query.orderBy('id', 'desc').limit(filter.limit ?? 100).execute()).map(toModuleLogRow);
  }
}
