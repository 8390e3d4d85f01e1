// In-memory TaskQueue (module/task/queue.ts) for contract unit tests only: tasks run when the test calls drain().
import { DEFAULT_TASK_OPTIONS, type TaskAdded, type TaskFilter, type TaskHandler, type TaskOptions, type TaskQueue, type TaskRecord } from '../../../../module/task/queue.ts';
import type { TaskFacade } from '../../../../module/contract/platform-context.ts';
import { TaskEvents } from '../../../../module/task/events.ts';

const OPTION_KEYS = ['tries', 'backoff', 'timeout', 'maxExceptions'] as const;

/** Keeps inputs as live objects (module instances included); no timers: `drain()` runs every attempt at once. */
export class FakeQueue implements TaskQueue {
  readonly kind = 'embedded' as const;
  readonly records: TaskRecord[] = [];
  /** Raised like the real queues: queued on add, retrying / finished after each attempt of drain(). */
  readonly events = new TaskEvents();
  private readonly handlers = new Map<string, TaskHandler>();
  private seq = 0;

  register(job: string, handler: TaskHandler): void {
    this.handlers.set(job, handler);
  }

  async add(job: string, queue: string, input: Record<string, unknown>, tags: string[], options: Partial<TaskOptions> = {}): Promise<TaskAdded> {
    const now = new Date().toISOString();
    const id = `task-${++this.seq}`;
    this.records.push({
      id, job, queue, input, tags: [...tags], status: 'pending', options: { ...DEFAULT_TASK_OPTIONS, ...options },
      attempts: 0, exceptions: 0, lastError: null, result: null, createdAt: now, updatedAt: now,
    });
    await this.events.emit({ type: 'queued', task: this.records[this.records.length - 1], requeued: false });
    return { id, status: 'pending' };
  }

  async recoverLost(): Promise<string[]> {
    return [];
  }

  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  async get(id: string): Promise<TaskRecord | null> {
    return this.records.find((r) => r.id === id) ?? null;
  }

  async list(filter: TaskFilter = {}): Promise<TaskRecord[]> {
    return this.records
      .filter((r) => (!filter.tag || r.tags.includes(filter.tag)) && (!filter.status || r.status === filter.status) && (!filter.queue || r.queue === filter.queue))
      .slice(0, filter.limit ?? Infinity);
  }

  async retry(id: string): Promise<TaskRecord> {
    const record = await this.get(id);
    if (!record) throw new Error(`no task ${id}`);
    Object.assign(record, { status: 'pending', attempts: 0, exceptions: 0, lastError: null });
    return record;
  }

  async waitFor(id: string): Promise<TaskRecord> {
    await this.drain();
    const record = await this.get(id);
    if (!record) throw new Error(`no task ${id}`);
    return record;
  }

  /** Runs every pending task through all its attempts (no backoff waits); bounded by the tasks' tries. */
  async drain(): Promise<void> {
    for (const record of this.records.filter((r) => r.status === 'pending')) {
      const handler = this.handlers.get(record.job);
      if (!handler) throw new Error(`no handler for ${record.job}`);
      record.status = 'processing';
      while (record.status === 'processing') {
        record.attempts += 1;
        let failed = false;
        try {
          record.result = await handler(record.input, {
            taskId: record.id, attempt: record.attempts, options: record.options, exceptions: record.exceptions, signal: new AbortController().signal,
          });
          const r = record.result as { status?: unknown; message?: unknown } | null;
          if (r && r.status === 'error') (failed = true), (record.lastError = String(r.message ?? ''));
        } catch (error) {
          failed = true;
          record.exceptions += 1;
          record.lastError = error instanceof Error ? error.message : String(error);
        }
        if (!failed) record.status = 'completed';
        else if (record.attempts >= record.options.tries || record.exceptions >= record.options.maxExceptions) record.status = 'failed';
        if (record.status !== 'processing') await this.events.emitChange(record);
        else await this.events.emitChange({ ...record, status: 'pending' });
      }
    }
  }
}

/** The `Task.add` facade over a queue: option keys of the input become task options. */
export function taskFacade(queue: TaskQueue): TaskFacade {
  return {
    async add(jobName, queueName, inputData, tags) {
      const input: Record<string, unknown> = {};
      const options: Partial<TaskOptions> = {};
      for (const [key, value] of Object.entries(inputData)) {
        if ((OPTION_KEYS as readonly string[]).includes(key)) options[key as keyof TaskOptions] = value as number;
        else input[key] = value;
      }
      return (await queue.add(jobName, queueName, input, tags, options)).id;
    },
  };
}
