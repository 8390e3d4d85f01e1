// Module log reads for the admin API: newest first, paged, filtered by module, level, service (its uuid, provision
// status, product, location) and text.
import type Database from 'better-sqlite3';
import type { LogLevel, ModuleLogRow } from '../../contract/log.ts';
import { PagedQuery, SERVICE_FILTER_SQL, serviceFilterParams, type PageQuery, type ServiceFilter } from '../store/paged-query.ts';
import { migrateModuleLogStore, toModuleLogRow } from '../store/repositories/module-logs.ts';

/** Filters and page of `GET /api/admin/module-logs`; the ServiceFilter members select by the entry's service. */
export interface ModuleLogQuery extends ServiceFilter, PageQuery {
  type?: string;
  module?: string;
  level?: LogLevel;
  /** `context.service_uuid`. */
  service?: string;
  /** Substring of the action, request, response or context text. */
  q?: string;
}

/** Reads the module_logs table (entries are scrubbed before storage, so rows are answered as stored). */
export class ModuleLogQueries {
  private readonly pages;

  constructor(db: Database.Database) {
    migrateModuleLogStore(db);
    const where = `FROM module_logs l
      LEFT JOIN services s ON s.uuid = json_extract(l.context, '$.service_uuid')
      LEFT JOIN products p ON p.uuid = s.product_uuid
      WHERE (@type IS NULL OR l.module_type = @type) AND (@module IS NULL OR l.module_name = @module)
        AND (@level IS NULL OR l.level = @level)
        AND (@service IS NULL OR json_extract(l.context, '$.service_uuid') = @service)
        AND ${SERVICE_FILTER_SQL}
        AND (@q IS NULL OR instr(l.action, @q) > 0 OR instr(l.request, @q) > 0 OR instr(l.response, @q) > 0 OR instr(l.context, @q) > 0)`;
    this.pages = new PagedQuery<Record<string, string | number>>(db, 'l.*', where, 'l.id DESC');
  }

  list(query: ModuleLogQuery): { logs: ModuleLogRow[]; page: number; per_page: number; total: number } {
    const { rows, total } = this.pages.run({
      ...serviceFilterParams(query), type: query.type ?? null, module: query.module ?? null, level: query.level ?? null,
      service: query.service ?? null, q: query.q || null,
    }, query);
    return { logs: rows.map(toModuleLogRow), page: query.page, per_page: query.per_page, total };
  }
}
