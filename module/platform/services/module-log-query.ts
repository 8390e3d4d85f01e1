// Module log reads for the admin API: newest first, paged, filtered by module, level, service (its uuid, provision
// status, product, location) and text.
import type Database from 'better-sqlite3';
import type { LogLevel, ModuleLogRow } from '../../contract/log.ts';
import { migrateModuleLogStore, toModuleLogRow } from '../store/repositories/module-logs.ts';

export interface ModuleLogQuery {
  type?: string;
  module?: string;
  level?: LogLevel;
  /** `context.service_uuid`. */
  service?: string;
  /** The provision status of the entry's service. */
  status?: string;
  /** The product of the entry's service. */
  product?: string;
  /** The `server_location` of that product. */
  location?: string;
  /** Substring of the action, request, response or context text. */
  q?: string;
  page: number;
  per_page: number;
}

/** Reads the module_logs table (entries are scrubbed before storage, so rows are answered as stored). */
export class ModuleLogQueries {
  private readonly countStmt;
  private readonly pageStmt;

  constructor(db: Database.Database) {
    migrateModuleLogStore(db);
    const where = `FROM module_logs l
      LEFT JOIN services s ON s.uuid = json_extract(l.context, '$.service_uuid')
      LEFT JOIN products p ON p.uuid = s.product_uuid
      WHERE (@type IS NULL OR l.module_type = @type) AND (@module IS NULL OR l.module_name = @module)
        AND (@level IS NULL OR l.level = @level)
        AND (@service IS NULL OR json_extract(l.context, '$.service_uuid') = @service)
        AND (@status IS NULL OR s.provision_status = @status)
        AND (@product IS NULL OR s.product_uuid = @product)
        AND (@location IS NULL OR json_extract(p.product_data, '$.server_location') = @location)
        AND (@q IS NULL OR instr(l.action, @q) > 0 OR instr(l.request, @q) > 0 OR instr(l.response, @q) > 0 OR instr(l.context, @q) > 0)`;
    this.countStmt = db.prepare(`SELECT COUNT(*) AS n ${where}`);
    this.pageStmt = db.prepare(`SELECT l.* ${where} ORDER BY l.id DESC LIMIT @limit OFFSET @offset`);
  }

  list(query: ModuleLogQuery): { logs: ModuleLogRow[]; page: number; per_page: number; total: number } {
    const params = {
      type: query.type ?? null, module: query.module ?? null, level: query.level ?? null, service: query.service ?? null, status: query.status ?? null,
      product: query.product ?? null, location: query.location ?? null, q: query.q || null,
      limit: query.per_page, offset: (query.page - 1) * query.per_page,
    };
    const total = (this.countStmt.get(params) as { n: number }).n;
    const rows = this.pageStmt.all(params) as Array<Record<string, string | number>>;
    const logs = rows.map(toModuleLogRow);
    return { logs, page: query.page, per_page: query.per_page, total };
  }
}
