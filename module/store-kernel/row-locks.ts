// Row locks of conditional writes that several processes race for (claiming a task, starting an attempt), by engine.
import type { SelectQueryBuilder } from 'kysely';

/** The engines of the platform store. */
export type StoreEngine = 'sqlite' | 'postgres';

/**
 * The rows `query` selects, locked for the transaction's UPDATE of them. PostgreSQL: `FOR UPDATE`, or with
 * `skipLocked` `FOR UPDATE SKIP LOCKED` (a claimer passes over a row another process is taking instead of waiting for
 * it, then finds the next one). SQLite has one writer at a time: the query is left as it is, and the conditional UPDATE
 * that follows (`… AND status = 'pending'`) is enough.
 */
export function lockedRows<DB, TB extends keyof DB, O>(
  engine: StoreEngine, query: SelectQueryBuilder<DB, TB, O>, opts: { skipLocked?: boolean } = {},
): SelectQueryBuilder<DB, TB, O> {
  if (engine === 'sqlite') return query;
  const locked = query.forUpdate();
  return opts.skipLocked ? locked.skipLocked() : locked;
}
