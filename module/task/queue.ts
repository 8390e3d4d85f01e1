// The Task queue seam: one interface, two backends (embedded SQLite, BullMQ on Redis), one contract suite.
import type { TaskEventSource } from './events.ts';

/** Lifecycle of a task record. */
export type TaskStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'duplicate';

/** Retry policy of a task (the spec's ModuleJob keys). */
export interface TaskOptions {
  /** Total attempts, default 1. */
  tries: number;
  /** Seconds between attempts, default 10. */
  backoff: number;
  /** Seconds per attempt before it is aborted through its AbortSignal and counted as failed, default 600. */
  timeout: number;
  /** After this many thrown exceptions the task fails even with tries left, default 2. */
  maxExceptions: number;
}

export const DEFAULT_TASK_OPTIONS: TaskOptions = { tries: 1, backoff: 10, timeout: 600, maxExceptions: 2 };

/** A task as recorded in the platform database (input with secrets redacted). */
export interface TaskRecord {
  id: string;
  /** Job class name, e.g. `ModuleJob`. */
  job: string;
  /** Queue name, e.g. `Module`. */
  queue: string;
  /** Input data, secrets replaced by `[redacted]`. */
  input: Record<string, unknown>;
  tags: string[];
  status: TaskStatus;
  options: TaskOptions;
  /** Attempts started so far. */
  attempts: number;
  /** Exceptions thrown so far (a returned `{status:'error'}` is a failed attempt but not an exception). */
  exceptions: number;
  lastError: string | null;
  /** What the handler returned on completion. */
  result: unknown;
  /** ISO timestamps. */
  createdAt: string;
  updatedAt: string;
  /** How many times `retry` re-queued this task. */
  retries?: number;
  /** For a `duplicate` record: the id of the pending or processing task it duplicates. */
  duplicateOf?: string | null;
  /** ISO time the record became `completed`, `failed` or `duplicate`. */
  finishedAt?: string | null;
}

/** What a handler gets besides its input. */
export interface TaskContext {
  taskId: string;
  /** 1-based attempt number. */
  attempt: number;
  /** The task's retry policy (lets a handler tell its last attempt: `attempt >= options.tries`). */
  options?: TaskOptions;
  /** Exceptions thrown by earlier attempts (a throw now fails the task when `exceptions + 1 >= maxExceptions`). */
  exceptions?: number;
  /** Aborted when the attempt's timeout passes or the worker stops. */
  signal: AbortSignal;
}

/**
 * Runs one attempt. Resolve with a result to complete; a result `{status:'error', message}` fails the attempt
 * (retried by `tries`); a throw fails the attempt and counts toward `maxExceptions`.
 */
export type TaskHandler = (input: Record<string, unknown>, ctx: TaskContext) => Promise<unknown>;

/** Terminal statuses: `waitFor` resolves on them. */
export const FINAL_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'duplicate'];

/** Answer of `add`. */
export interface TaskAdded {
  id: string;
  /** `duplicate` when an identical job+queue+input+tags task was already pending or processing; it is not run. */
  status: 'pending' | 'duplicate';
}

/** Filter for listing task records. */
export interface TaskFilter {
  tag?: string;
  status?: TaskStatus;
  queue?: string;
  limit?: number;
}

/**
 * A durable task queue. Records live in the platform database for both backends; the embedded backend also
 * schedules from it, BullMQ schedules through Redis so several worker processes can share the work.
 */
export interface TaskQueue {
  /** `embedded` or `bullmq`. */
  readonly kind: 'embedded' | 'bullmq';
  /** Registers the handler of a job name (e.g. `ModuleJob`). Must happen before `start`. */
  register(job: string, handler: TaskHandler): void;
  /** Queues a task; never runs it inline. */
  add(job: string, queue: string, input: Record<string, unknown>, tags: string[], options?: Partial<TaskOptions>): Promise<TaskAdded>;
  /**
   * Starts workers on the given queues (all when omitted); recovers tasks a crashed worker left `processing`.
   * `concurrency` is the number of attempts run at once by this process (per queue for BullMQ), default 1.
   */
  start(opts?: { queues?: string[]; concurrency?: number }): Promise<void>;
  /** Stops taking work, aborts nothing that can finish within `graceMs`, then closes connections. */
  stop(graceMs?: number): Promise<void>;
  get(id: string): Promise<TaskRecord | null>;
  list(filter?: TaskFilter): Promise<TaskRecord[]>;
  /** Queues a failed task again with fresh attempts; returns the updated record. */
  retry(id: string): Promise<TaskRecord>;
  /** Resolves when the task reaches `completed`, `failed` or `duplicate`, or rejects after `timeoutMs`. */
  waitFor(id: string, timeoutMs?: number): Promise<TaskRecord>;
  /**
   * What happened to task records: queued, attempt failed and will retry, finished for good (completed or failed).
   * Raised where a record changes, also for changes a remote worker makes through the platform's worker API.
   */
  readonly events: TaskEventSource;
  /**
   * Finds runnable tasks their scheduler lost and schedules them again: embedded, records whose worker's lease
   * expired; BullMQ, also `pending` records whose job was never added (the process died between writing the record
   * and adding the job). Returns the ids recovered. Safe to call from any process, any time.
   */
  recoverLost(): Promise<string[]>;
}
