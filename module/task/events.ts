// Queue events: what happened to a task record, raised where the record changed (both backends and the worker API
// routes go through the same record store), so the platform's service lifecycle needs no second opinion on retries.
import type { TaskRecord } from './queue.ts';

/**
 * - `queued`: a runnable record was written (`requeued` when a failed task was queued again by `retry`);
 * - `retrying`: an attempt failed and the task will run again (status back to `pending`);
 * - `finished`: the task ended for good, `completed` or `failed` (tries or maxExceptions spent, lost worker on the
 *   last try, unreadable input, could not be scheduled).
 */
export type TaskEvent =
  | { type: 'queued'; task: TaskRecord; requeued: boolean }
  | { type: 'retrying'; task: TaskRecord; error: string }
  | { type: 'finished'; task: TaskRecord; outcome: 'completed' | 'failed'; error: string | null };

/**
 * Where an event is raised. With the platform's task store, `tx` is the open transaction that changed the record: a
 * listener's writes through it (the service status) commit or roll back together with the record. `afterCommit` runs
 * a function once that transaction committed (hooks, log lines: nothing that must be undone with it). A store that does
 * not own the records (a remote worker's) raises events with `tx` null and runs `afterCommit` functions at once.
 */
export interface TaskEventContext<Tx = unknown> {
  readonly tx: Tx | null;
  afterCommit(fn: () => void): void;
}

/** Awaited where the record changed, inside its transaction; a throw rolls the change back. */
export type TaskEventListener<Tx = unknown> = (event: TaskEvent, context: TaskEventContext<Tx>) => void | Promise<void>;

/** Subscribe side of the events (what `TaskQueue.events` exposes). */
export interface TaskEventSource<Tx = unknown> {
  /** Adds a listener; returns its removal. */
  on(listener: TaskEventListener<Tx>): () => void;
}

/** The context of events raised outside any transaction: `afterCommit` runs at once. */
export const NO_TRANSACTION: TaskEventContext<never> = { tx: null, afterCommit: (fn) => fn() };

/** A small emitter of task events whose listeners are awaited in turn. */
export class TaskEvents<Tx = unknown> implements TaskEventSource<Tx> {
  // Stored without their transaction type, so that an emitter of a store's transactions is one of the task stores'.
  private readonly listeners = new Set<TaskEventListener<never>>();

  on(listener: TaskEventListener<Tx>): () => void {
    const stored = listener as TaskEventListener<never>;
    this.listeners.add(stored);
    return () => void this.listeners.delete(stored);
  }

  /** True when someone listens (lets a store skip building records nobody reads). */
  get active(): boolean {
    return this.listeners.size > 0;
  }

  async emit(event: TaskEvent, context: TaskEventContext<Tx> = NO_TRANSACTION): Promise<void> {
    for (const listener of [...this.listeners]) await (listener as TaskEventListener<Tx>)(event, context);
  }

  /** The event of a record an attempt (or a release) just changed: `retrying` when pending again, else `finished`. */
  async emitChange(task: TaskRecord, context: TaskEventContext<Tx> = NO_TRANSACTION): Promise<void> {
    const event = changeEvent(task);
    if (event) await this.emit(event, context);
  }
}

/** `retrying` for a record back to `pending` after an attempt, `finished` for a final one; null otherwise. */
export function changeEvent(task: TaskRecord): TaskEvent | null {
  if (task.status === 'pending') return { type: 'retrying', task, error: task.lastError ?? '' };
  if (task.status === 'completed') return { type: 'finished', task, outcome: 'completed', error: null };
  if (task.status === 'failed') return { type: 'finished', task, outcome: 'failed', error: task.lastError };
  return null;
}
