// Schema of task records (tasks, task_tags, task_meta): the migrations of scope `tasks` (written for SQLite, derived
// for PostgreSQL), the row types as both engines store them, the store the records need, and the row ↔ TaskRecord mapping.
import type { Database } from 'better-sqlite3';
import type { Expression, Generated, Kysely, RawBuilder, Selectable } from 'kysely';
import { runMigrations, type Migration } from '../store-kernel/migrator.ts';
import type { StoreEngine } from '../store-kernel/row-locks.ts';
import type { TaskOptions, TaskRecord, TaskStatus } from './queue.ts';

/** Version 1 is the unversioned schema of the earlier layout, kept `IF NOT EXISTS` so such databases adopt it in place. */
const SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS tasks (
  id           TEXT PRIMARY KEY,
  backend      TEXT NOT NULL,
  job          TEXT NOT NULL,
  queue        TEXT NOT NULL,
  input        TEXT NOT NULL,
  raw_input    TEXT,
  tags         TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('pending','processing','completed','failed','duplicate')),
  options      TEXT NOT NULL,
  attempts     INTEGER NOT NULL DEFAULT 0,
  exceptions   INTEGER NOT NULL DEFAULT 0,
  retries      INTEGER NOT NULL DEFAULT 0,
  last_error   TEXT,
  result       TEXT,
  dedupe_key   TEXT NOT NULL,
  duplicate_of TEXT,
  available_at INTEGER NOT NULL,
  lease_until  INTEGER,
  worker_id    TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  finished_at  TEXT
);
CREATE INDEX IF NOT EXISTS tasks_claim ON tasks (backend, status, available_at);
CREATE INDEX IF NOT EXISTS tasks_dedupe ON tasks (dedupe_key, status);
CREATE INDEX IF NOT EXISTS tasks_created ON tasks (created_at);
CREATE TABLE IF NOT EXISTS task_tags (
  tag     TEXT NOT NULL,
  task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  PRIMARY KEY (tag, task_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS task_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`;

/**
 * Version 2: `seq`, the order records were written in (the dedupe and the per-service order compare it; SQLite's rowid
 * has no PostgreSQL twin), taken from the `seq` counter of task_meta inside the inserting transaction; and the index
 * of a record's tags.
 */
const TASK_ORDER = `
ALTER TABLE tasks ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
CREATE INDEX tasks_seq ON tasks (seq);
CREATE INDEX task_tags_task ON task_tags (task_id);
`;

/** Version 3: records written before version 2 get their order (SQLite: the rowid; PostgreSQL: creation time, then id). */
const TASK_ORDER_BACKFILL = 'UPDATE tasks SET seq = rowid';
const TASK_ORDER_BACKFILL_PG = `UPDATE tasks SET seq = ordered.n
  FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM tasks) AS ordered WHERE ordered.id = tasks.id`;

/** Scope `tasks` of the platform database; a step is never edited after release. */
export const TASK_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'tasks', up: SCHEMA_V1 },
  { version: 2, name: 'task-order', up: TASK_ORDER },
  { version: 3, name: 'task-order-backfill', up: TASK_ORDER_BACKFILL, postgres: TASK_ORDER_BACKFILL_PG },
];

/** Applies the task migrations not yet applied (scope `tasks`); safe to call on every start. */
export function migrateTaskStore(db: Database): void {
  runMigrations(db, 'tasks', TASK_MIGRATIONS);
}

/** The `tasks` table as both engines store it (times of scheduling in epoch ms, the rest ISO text; JSON as text). */
export interface TasksTable {
  id: string;
  backend: string;
  job: string;
  queue: string;
  input: string;
  raw_input: string | null;
  tags: string;
  status: TaskStatus;
  options: string;
  attempts: Generated<number>;
  exceptions: Generated<number>;
  retries: Generated<number>;
  last_error: string | null;
  result: string | null;
  dedupe_key: string;
  duplicate_of: string | null;
  available_at: number;
  lease_until: number | null;
  worker_id: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  /** Write order (task_meta's `seq` counter). */
  seq: Generated<number>;
}

/** The tables of the task records by name (the platform's StoreTables extends it). */
export interface TaskTables {
  tasks: TasksTable;
  task_tags: { tag: string; task_id: string };
  task_meta: { key: string; value: string };
}

/** A `tasks` row as read. */
export type TaskRow = Selectable<TasksTable>;

/**
 * What the task records need of the platform's query layer (its `QueryStore` is one): a Kysely over a database that
 * holds the task tables (among others: Kysely's database type is invariant, so it is read through `taskTables`), the
 * engine, the JSON member functions and transactions (nested ones join).
 */
export interface TaskQueryStore {
  readonly engine: StoreEngine;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any database type that includes TaskTables
  readonly db: Kysely<any>;
  jsonText(column: string, key: string): RawBuilder<string | null>;
  contains(haystack: Expression<string | null>, text: string): RawBuilder<boolean>;
  transaction<T>(work: (tx: this) => Promise<T>): Promise<T>;
}

/** The store's Kysely seen over the task tables only. */
export function taskTables(store: Pick<TaskQueryStore, 'db'>): Kysely<TaskTables> {
  return store.db as Kysely<TaskTables>;
}

/** The record the platform shows: input and result as stored (already redacted). */
export function toRecord(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    job: row.job,
    queue: row.queue,
    input: JSON.parse(row.input) as Record<string, unknown>,
    tags: JSON.parse(row.tags) as string[],
    status: row.status,
    options: JSON.parse(row.options) as TaskOptions,
    attempts: row.attempts,
    exceptions: row.exceptions,
    lastError: row.last_error,
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    retries: row.retries,
    duplicateOf: row.duplicate_of,
    finishedAt: row.finished_at,
  };
}
