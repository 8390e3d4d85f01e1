// One paged admin list over SQLite: a COUNT and a page statement sharing one FROM … WHERE text and its named parameters.
import type Database from 'better-sqlite3';

/** Page of an admin list: `page` from 1, `per_page` rows. */
export interface PageQuery {
  page: number;
  per_page: number;
}

/** Filters of the admin lists that select by service: its provision status, its product, that product's `server_location`. */
export interface ServiceFilter {
  status?: string;
  product?: string;
  location?: string;
}

/** The WHERE condition of a ServiceFilter over `services s LEFT JOIN products p ON p.uuid = s.product_uuid`. */
export const SERVICE_FILTER_SQL = `(@status IS NULL OR s.provision_status = @status) AND (@product IS NULL OR s.product_uuid = @product)
  AND (@location IS NULL OR json_extract(p.product_data, '$.server_location') = @location)`;

/** The SQL parameters of a ServiceFilter (`@status`, `@product`, `@location`), null when absent. */
export function serviceFilterParams(filter: ServiceFilter): { status: string | null; product: string | null; location: string | null } {
  return { status: filter.status ?? null, product: filter.product ?? null, location: filter.location ?? null };
}

/** Both statements prepared once; `run` binds the same parameters (plus `@limit`, `@offset`) to each. */
export class PagedQuery<Row> {
  private readonly countStmt;
  private readonly pageStmt;

  /**
   * @param columns the page's SELECT list, e.g. `s.uuid`
   * @param fromWhere `FROM … WHERE …` with named parameters
   * @param orderBy the page's ORDER BY list
   */
  constructor(db: Database.Database, columns: string, fromWhere: string, orderBy: string) {
    this.countStmt = db.prepare(`SELECT COUNT(*) AS n ${fromWhere}`);
    this.pageStmt = db.prepare(`SELECT ${columns} ${fromWhere} ORDER BY ${orderBy} LIMIT @limit OFFSET @offset`);
  }

  /** The rows of `page` and the total count under the same filters. */
  run(params: Record<string, unknown>, page: PageQuery): { rows: Row[]; total: number } {
    const bound = { ...params, limit: page.per_page, offset: (page.page - 1) * page.per_page };
    return { total: (this.countStmt.get(bound) as { n: number }).n, rows: this.pageStmt.all(bound) as Row[] };
  }
}
