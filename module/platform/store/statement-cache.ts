// Prepared statements kept per database handle and SQL text: preparing costs more than running a small query, so
// repositories on a page's hot path prepare each of their statements once.
import type { Statement } from 'better-sqlite3';
import type { Db } from './db.ts';

const caches = new WeakMap<Db, Map<string, Statement>>();

/** The statement of `sql` on `db`, prepared on first use and reused afterwards. */
export function statement(db: Db, sql: string): Statement {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let prepared = cache.get(sql);
  if (!prepared) {
    prepared = db.prepare(sql);
    cache.set(sql, prepared);
  }
  return prepared;
}
