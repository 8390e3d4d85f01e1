// The write order of task inserts: the locks an insert takes first (on PostgreSQL: one transaction-scoped advisory lock
// per `service:` tag and per dedupe key; SQLite's one writer needs none), its place in the write order, and what it
// reads under them to decide between `pending` and `duplicate` (see TaskStore.insert).
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { StoreEngine } from '../store-kernel/row-locks.ts';
import { CompiledListStatement, type StatementStore } from '../store-kernel/compiled-statement.ts';
import { taskTables, type TaskTables } from './task-schema.ts';

const RUNNABLE = ['pending', 'processing'] as const;

/** A signed 64-bit advisory lock key of `name` (the first 8 bytes of its SHA-256). */
function lockKey(name: string): bigint {
  return createHash('sha256').update(name).digest().readBigInt64BE(0);
}

/**
 * Holds, until the transaction ends, the order of the inserts that share one of `names` (the insert's `service:` tags
 * and its dedupe key): an insert taking any of them waits for the one holding it to commit, so inserts of one service
 * (or of one input) are written, numbered and committed one after the other, and each reads every earlier one. Inserts
 * of different services do not wait for each other. PostgreSQL: `pg_advisory_xact_lock` per name, taken in key order
 * (two inserts never wait for each other crosswise). SQLite: nothing to take, the transaction holds the one write lock.
 */
export async function lockInsertOrder(db: Kysely<TaskTables>, engine: StoreEngine, names: string[]): Promise<void> {
  if (engine === 'sqlite' || names.length === 0) return;
  const keys = [...new Set(names.map(lockKey))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map(String);
  // A function scan of the array yields its elements in order, so the locks are taken in key order.
  await sql`SELECT pg_advisory_xact_lock(k) FROM unnest(CAST(${keys} AS bigint[])) AS k`.execute(db);
}

/**
 * The insert's place in the write order: one past the largest written. Inserts of one service or one input hold their
 * lockInsertOrder locks, so each reads the one before it and comes after it; inserts of different services may share a
 * place on PostgreSQL (nothing compares them). On SQLite the transaction's write lock makes every place its own.
 */
export const NEXT_WRITE_ORDER = sql<number>`(SELECT coalesce(max(seq), 0) + 1 FROM tasks)`;

/**
 * The record an insert of dedupe key `key` and `service:` tags `serial` duplicates, read in one statement under
 * lockInsertOrder: the newest `pending`/`processing` record with the same key, unless a later record of the same service
 * (not itself a duplicate, which does nothing) was written since, which may undo what that one does — then none, and
 * the insert runs too.
 */
export async function duplicateOriginal(store: StatementStore, key: string, serial: string[]): Promise<string | undefined> {
  const [newest] = (await DUPLICATE_LOOKUP.execute(store, 'tag', serial, { key })).rows;
  return newest && Number(newest.overtaken) === 0 ? newest.id : undefined;
}

/** duplicateOriginal's read for a count of service tags. */
const DUPLICATE_LOOKUP = new CompiledListStatement<{ key: string }, { id: string; overtaken: number }>((serialCount) => (store, v) => {
  const db = taskTables(store);
  const serial = Array.from({ length: serialCount }, (_, at) => v[`tag${at}`]);
  const overtaken = serialCount === 0 ? sql<number>`0` : sql<number>`CASE WHEN ${db.selectFrom('task_tags as later_tag')
    .innerJoin('tasks as later', 'later.id', 'later_tag.task_id').select('later.id')
    .where('later_tag.tag', 'in', serial).whereRef('later.seq', '>', sql.ref<number>('o.seq')).where('later.status', '<>', 'duplicate').limit(1)} IS NULL THEN 0 ELSE 1 END`;
  return db.selectFrom('tasks as o').select(['o.id', overtaken.as('overtaken')]).where('o.dedupe_key', '=', v.key)
    .where('o.status', 'in', RUNNABLE).orderBy('o.seq', 'desc').limit(1);
});
