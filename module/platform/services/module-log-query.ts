// Module log reads for the admin API: newest first, paged, filtered by module, level, service (its uuid, provision
// status, product, location) and text; one query text for both engines.
import type { LogLevel, ModuleLogRow } from '../../contract/log.ts';
import type { PageQuery, ServiceFilter } from '../store/paged-query.ts';
import type { QueryStore } from '../store/query/query-store.ts';
import { toModuleLogRow } from '../store/query/repositories/module-logs.ts';

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
  /** @param settled waits for this process's log writes still on their way (ModuleLogRepository.settled). */
  constructor(private readonly store: QueryStore, private readonly settled: () => Promise<void> = async () => undefined) {}

  async list(query: ModuleLogQuery): Promise<{ logs: ModuleLogRow[]; page: number; per_page: number; total: number }> {
    await this.settled();
    const { store } = this;
    const serviceUuid = store.jsonText('l.context', 'service_uuid');
    let base = store.db.selectFrom('module_logs as l')
      .leftJoin('services as s', (join) => join.on((eb) => eb('s.uuid', '=', serviceUuid)))
      .leftJoin('products as p', 'p.uuid', 's.product_uuid');
    if (query.type) base = base.where('l.module_type', '=', query.type);
    if (query.module) base = base.where('l.module_name', '=', query.module);
    if (query.level) base = base.where('l.level', '=', query.level);
    if (query.service) base = base.where(serviceUuid, '=', query.service);
    if (query.status !== undefined) base = base.where('s.provision_status', '=', query.status);
    if (query.product !== undefined) base = base.where('s.product_uuid', '=', query.product);
    if (query.location !== undefined) base = base.where(store.jsonText('p.product_data', 'server_location'), '=', query.location);
    const text = query.q;
    if (text) {
      base = base.where((eb) => eb.or([
        store.contains(eb.ref('l.action'), text), store.contains(eb.ref('l.request'), text),
        store.contains(eb.ref('l.response'), text), store.contains(eb.ref('l.context'), text),
      ]));
    }
    const [{ total }, rows] = await Promise.all([
      base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      base.selectAll('l').orderBy('l.id', 'desc').limit(query.per_page).offset((query.page - 1) * query.per_page).execute(),
    ]);
    return { logs: rows.map(toModuleLogRow), page: query.page, per_page: query.per_page, total: Number(total) };
  }
}
