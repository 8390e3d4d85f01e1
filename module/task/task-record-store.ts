// The seam between the queues and the task records: what a BullMQ worker needs from wherever the records live
// (the platform's store through TaskStore, or the platform's worker API over HTTP for a remote worker).
import type { Settlement } from './attempt.ts';
import type { TaskEventSource } from './events.ts';
import type { TaskAdded, TaskFilter, TaskOptions, TaskRecord } from './queue.ts';

/** Value or promise of it (both stores answer with promises; a test twin may answer at once). */
export type MaybePromise<T> = T | Promise<T>;

/** Which backend schedules a record (the embedded poller never claims a BullMQ record). */
export type TaskBackend = 'embedded' | 'bullmq';

/** `beginAttempt`'s answer for a task that must wait for an earlier one of its service. */
export const BLOCKED = 'blocked' as const;

/** A record claimed for an attempt, with the unredacted input the handler needs. */
export interface ClaimedTask {
  record: TaskRecord;
  rawInput: Record<string, unknown>;
}

/** What `insert` takes: the raw input (secrets are sealed or redacted by the record store, never by the caller). */
export interface TaskInsert {
  backend: TaskBackend;
  job: string;
  queue: string;
  input: Record<string, unknown>;
  tags: string[];
  options: TaskOptions;
}

/**
 * Task records as the store-backed queues use them. `TaskStore` (the platform's query layer) implements it;
 * `RemoteTaskStore` (module/platform/remote) forwards each call to the platform's `/api/worker/tasks` routes.
 * Every state change is conditional on the record's state in the platform store, so several processes (local or
 * remote) may share the records.
 */
export interface TaskRecordStore {
  /** Changes of records made through this store (see TaskEvent), raised where the record changed. */
  readonly events: TaskEventSource;
  /** Records a task (or a `duplicate` of an identical pending/processing one). */
  insert(task: TaskInsert): MaybePromise<TaskAdded>;
  get(id: string): MaybePromise<TaskRecord | null>;
  list(filter?: TaskFilter): MaybePromise<TaskRecord[]>;
  /**
   * Starts an attempt of a record scheduled by BullMQ; null when gone, final, or just failed for want of tries;
   * `blocked` while an earlier task of the same service is unfinished (ask again later). With `retries`, only a record of
   * that generation (how many times `retry` requeued it) is begun; null otherwise.
   */
  beginAttempt(id: string, workerId: string, leaseMs: number, retries?: number): MaybePromise<ClaimedTask | typeof BLOCKED | null>;
  /** Applies an attempt's outcome if `workerId` still holds the record; the updated record, else null. */
  settle(id: string, workerId: string, settlement: Settlement): MaybePromise<TaskRecord | null>;
  /** Hands back records (a stopping worker's, or those whose lease expired); the ids released. */
  release(backend: TaskBackend, scope: { expired: true } | { workerId: string; ids: string[] }): MaybePromise<string[]>;
  /** Puts a `failed` record back to `pending` with fresh attempts. */
  resetForRetry(id: string, backend: TaskBackend): MaybePromise<TaskRecord>;
  /** Fails a non-final record outright. */
  fail(id: string, message: string): MaybePromise<TaskRecord | null>;
  /** Queue names that have runnable records of `backend`. */
  activeQueues(backend: TaskBackend): MaybePromise<string[]>;
  /**
   * `pending` records of `backend` untouched since before `olderThan` (epoch ms), oldest first: candidates for a
   * lost schedule (a BullMQ job never added). Absent where the records are not local (a remote worker).
   */
  stalePending?(backend: TaskBackend, olderThan: number, limit: number): MaybePromise<TaskRecord[]>;
}
