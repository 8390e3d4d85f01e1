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
 * Called synchronously where the record changed; with the SQLite store, inside the transaction that changed it, so a
 * listener's own writes (the service status) commit or roll back together with the record. A throw rolls it back.
 */
export type TaskEventListener = (event: TaskEvent) => void;

/** Subscribe side of the events (what `TaskQueue.events` exposes). */
export interface TaskEventSource {
  /** Adds a listener; returns its removal. */
  on(listener: TaskEventListener): () => void;
}

/** A small synchronous emitter of task events. */
export class TaskEvents implements TaskEventSource {
  private readonly listeners = new Set<TaskEventListener>();

  on(listener: TaskEventListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** True when someone listens (lets a store skip building records nobody reads). */
  get active(): boolean {
    return this.listeners.size > 0;
  }

  emit(event: TaskEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  /** The event of a record an attempt (or a release) just changed: `retrying` when pending again, else `finished`. */
  emitChange(task: TaskRecord): void {
    const event = changeEvent(task);
    if (event) this.emit(event);
  }
}

/** `retrying` for a record back to `pending` after an attempt, `finished` for a final one; null otherwise. */
export function changeEvent(task: TaskRecord): TaskEvent | null {
  if (task.status === 'pending') return { type: 'retrying', task, error: task.lastError ?? '' };
  if (task.status === 'completed') return { type: 'finished', task, outcome: 'completed', error: null };
  if (task.status === 'failed') return { type: 'finished', task, outcome: 'failed', error: task.lastError };
  return null;
}
