// What both backends share: handler registry, record reads from the task store, waitFor, lifecycle notices.
import { EventEmitter } from 'node:events';
import type { TaskEventSource } from './events.ts';
import { FINAL_STATUSES, type TaskAdded, type TaskFilter, type TaskHandler, type TaskOptions, type TaskQueue, type TaskRecord } from './queue.ts';
import type { TaskRecordStore } from './task-record-store.ts';

/** pino-compatible sink for worker errors (defaults to stderr). */
export interface TaskLogger {
  error(obj: object, msg: string): void;
}

const stderrLogger: TaskLogger = {
  error: (obj, msg) => process.stderr.write(`[task] ${msg} ${JSON.stringify(obj)}\n`),
};

const NO_HANDLER_ERROR = 'No handler registered for job';

/**
 * Base of the embedded and BullMQ queues: records live in the platform database, reached through a TaskRecordStore
 * (the SQLite TaskStore in the platform's processes, the worker API for a remote worker).
 */
export abstract class StoreBackedQueue<S extends TaskRecordStore = TaskRecordStore> implements TaskQueue {
  abstract readonly kind: 'embedded' | 'bullmq';
  protected readonly handlers = new Map<string, TaskHandler>();
  /** Emits `<taskId>` whenever this process changed a record, so waitFor need not wait a full poll. */
  private readonly changes = new EventEmitter();
  protected started = false;
  protected readonly logger: TaskLogger;

  protected constructor(protected readonly store: S, protected readonly pollMs: number, logger?: TaskLogger) {
    this.changes.setMaxListeners(0);
    this.logger = logger ?? stderrLogger;
  }

  register(job: string, handler: TaskHandler): void {
    if (this.started) throw new Error(`Register job ${job} before starting the queue`);
    this.handlers.set(job, handler);
  }

  abstract add(job: string, queue: string, input: Record<string, unknown>, tags: string[], options?: Partial<TaskOptions>): Promise<TaskAdded>;
  abstract start(opts?: { queues?: string[]; concurrency?: number }): Promise<void>;
  abstract stop(graceMs?: number): Promise<void>;
  abstract retry(id: string): Promise<TaskRecord>;
  abstract recoverLost(): Promise<string[]>;

  /** The record store's events (every change of a record made through it, by this queue or anyone sharing it). */
  get events(): TaskEventSource {
    return this.store.events;
  }

  async get(id: string): Promise<TaskRecord | null> {
    return this.store.get(id);
  }

  async list(filter?: TaskFilter): Promise<TaskRecord[]> {
    return this.store.list(filter);
  }

  /** Polls the record (every `pollMs`, sooner when this process changes it) until final or `timeoutMs` passes. */
  async waitFor(id: string, timeoutMs = 60_000): Promise<TaskRecord> {
    // A duration, measured on the monotonic clock (not the injected wall Clock).
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const record = await this.store.get(id);
      if (!record) throw new Error(`Task ${id} not found`);
      if (FINAL_STATUSES.includes(record.status)) return record;
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`Task ${id} did not finish within ${timeoutMs} ms (status ${record.status})`);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.changes.off(id, done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(left, this.pollMs));
        this.changes.once(id, done);
      });
    }
  }

  /**
   * Awaits `drain` — what finished attempts set off that may still add tasks (the platform's hook listeners) — logging
   * its failure: a stopping queue's last wait before it closes to adds.
   */
  protected async awaitDrain(drain: (() => Promise<void>) | undefined): Promise<void> {
    await drain?.().catch((error: unknown) => this.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'task queue drain failed'));
  }

  protected notify(id: string): void {
    this.changes.emit(id);
  }

  protected handlerFor(job: string): TaskHandler {
    const handler = this.handlers.get(job);
    if (handler) return handler;
    return async () => {
      throw new Error(`${NO_HANDLER_ERROR} ${job}`);
    };
  }
}
