// The task records' statements every task runs (insert, start of an attempt, settlement), compiled once per engine
// (store-kernel/compiled-statement.ts): Kysely's build and compile of each cost more than SQLite takes to run them.
import type { Settlement } from './attempt.ts';
import { CompiledListStatement, CompiledStatement, type StatementStore } from '../store-kernel/compiled-statement.ts';
import { NEXT_WRITE_ORDER } from './task-insert.ts';
import { waitsForEarlier } from './task-order.ts';
import { taskTables, type TaskRow } from './task-schema.ts';

/** A `tasks` row as inserted (the statement's bound values). */
type InsertedTask = {
  id: string; backend: string; job: string; queue: string; input: string; rawInput: string | null; tags: string; status: 'pending' | 'duplicate';
  options: string; dedupeKey: string; duplicateOf: string | null; availableAt: number; at: string; finishedAt: string | null;
};

/** The INSERT of a `tasks` row, returning it. */
function insertTaskRow(store: StatementStore, v: InsertedTask) {
  return taskTables(store).insertInto('tasks').values({
    id: v.id, backend: v.backend, job: v.job, queue: v.queue, input: v.input, raw_input: v.rawInput, tags: v.tags, status: v.status,
    options: v.options, dedupe_key: v.dedupeKey, duplicate_of: v.duplicateOf, available_at: v.availableAt, lease_until: null,
    worker_id: null, last_error: null, result: null, created_at: v.at, updated_at: v.at, finished_at: v.finishedAt, seq: NEXT_WRITE_ORDER,
  }).returningAll();
}

const INSERT_TASK = new CompiledStatement<InsertedTask, TaskRow>(insertTaskRow);

/**
 * PostgreSQL: the record and its tag rows in one statement (data-modifying CTEs; the tag rows' foreign key is checked at
 * the statement's end, when the record is there), one round trip instead of two.
 */
const INSERT_TASK_AND_TAGS = new CompiledListStatement<InsertedTask, TaskRow>((count) => (store, v) => taskTables(store)
  .with('inserted', () => insertTaskRow(store, v))
  .with('tagged', (db) => db.insertInto('task_tags')
    .values(Array.from({ length: count }, (_, at) => ({ tag: v[`tag${at}`]!, task_id: v.id })))
    .onConflict((oc) => oc.columns(['tag', 'task_id']).doNothing()).returning('task_id'))
  .selectFrom('inserted').selectAll());

/** Inserts a record and the rows of its `tags` (normalised: distinct); answers the record's row. */
export async function insertTask(store: StatementStore, task: InsertedTask, tags: readonly string[]): Promise<TaskRow> {
  if (store.engine === 'postgres' && tags.length > 0) return (await INSERT_TASK_AND_TAGS.execute(store, 'tag', tags, task)).rows[0]!;
  const [row] = (await INSERT_TASK.execute(store, task)).rows;
  if (tags.length > 0) await insertTags(store, task.id, tags);
  return row!;
}

type AttemptStart = { id: string; workerId: string; leaseUntil: number; at: string };

/** beginAttempt's usual case: a `pending` record with nothing earlier of its service unfinished, started. */
function startAttempt(store: StatementStore, v: AttemptStart) {
  return taskTables(store).updateTable('tasks')
    .set((eb) => ({ status: 'processing', attempts: eb('attempts', '+', 1), worker_id: v.workerId, lease_until: v.leaseUntil, updated_at: v.at }))
    .where('id', '=', v.id).where('status', '=', 'pending').where((eb) => eb.not(waitsForEarlier('tasks')));
}

export const START_ATTEMPT = new CompiledStatement<AttemptStart, TaskRow>((store, v) => startAttempt(store, v).returningAll());
/** The same, only for the record's generation `retries` (a job of an earlier `retry` starts nothing). */
export const START_GENERATION = new CompiledStatement<AttemptStart & { retries: number }, TaskRow>((store, v) =>
  startAttempt(store, v).where('retries', '=', v.retries).returningAll());

type Settled = {
  id: string; workerId: string; status: Settlement['status']; exceptions: number; lastError: string | null; result: string | null;
  availableAt: number; at: string; finishedAt: string | null;
};

/** An attempt's outcome, written only while `workerId` still holds the record. */
export const SETTLE = new CompiledStatement<Settled, TaskRow>((store, v) => taskTables(store).updateTable('tasks').set({
  status: v.status, exceptions: v.exceptions, last_error: v.lastError, result: v.result, available_at: v.availableAt, lease_until: null,
  updated_at: v.at, finished_at: v.finishedAt,
}).where('id', '=', v.id).where('status', '=', 'processing').where('worker_id', '=', v.workerId).returningAll());

/** The tag rows of a new record (one statement per count of tags). */
const INSERT_TAGS = new CompiledListStatement<{ taskId: string }, unknown>((count) => (store, v) => taskTables(store).insertInto('task_tags')
  .values(Array.from({ length: count }, (_, at) => ({ tag: v[`tag${at}`], task_id: v.taskId })))
  .onConflict((oc) => oc.columns(['tag', 'task_id']).doNothing()));

/** Writes the rows of `tags` (already normalised: distinct) for record `taskId`. */
async function insertTags(store: StatementStore, taskId: string, tags: readonly string[]): Promise<void> {
  await INSERT_TAGS.execute(store, 'tag', tags, { taskId });
}
