// SQLite schema of task records (tasks, task_tags, task_meta) and the row ↔ TaskRecord mapping.
import type { Database } from 'better-sqlite3';
import { runMigrations, type Migration } from '../platform/store/migrator.ts';
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

/** Scope `tasks` of the platform database; a step is never edited after release. */
export const TASK_MIGRATIONS: readonly Migration[] = [{ version: 1, name: 'tasks', up: SCHEMA_V1 }];

/** Applies the task migrations not yet applied (scope `tasks`); safe to call on every start. */
export function migrateTaskStore(db: Database): void {
  runMigrations(db, 'tasks', TASK_MIGRATIONS);
}

/** A `tasks` row as SQLite returns it. */
export interface TaskRow {
  id: string;
  backend: string;
  job: string;
  queue: string;
  input: string;
  raw_input: string | null;
  tags: string;
  status: TaskStatus;
  options: string;
  attempts: number;
  exceptions: number;
  retries: number;
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
