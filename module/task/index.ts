// Entry of the task package: the queue factory and the public names other parts import.
import { z } from 'zod';
import type { SecretBox } from '../../shared/secret-box.ts';
import type { Clock } from '../../shared/clock.ts';
import { BullmqQueue } from './bullmq.ts';
import { EmbeddedQueue } from './embedded.ts';
import type { TaskQueue } from './queue.ts';
import type { TaskLogger } from './store-backed-queue.ts';
import { TaskStore } from './task-store.ts';
import type { TaskQueryStore } from './task-schema.ts';

export * from './queue.ts';
export { Task } from './task.ts';
export { createModuleJob, MODULE_JOB, toModuleRef, type ModuleRef, type ModuleResolver } from './module-job.ts';
export { migrateTaskStore, TaskStore } from './task-store.ts';
export { TASK_MIGRATIONS, type TaskQueryStore, type TaskTables } from './task-schema.ts';
export type { ClaimedTask, TaskBackend, TaskInsert, TaskRecordStore } from './task-record-store.ts';
export { EmbeddedQueue } from './embedded.ts';
export { BullmqQueue } from './bullmq.ts';
export type { TaskLogger } from './store-backed-queue.ts';
export { TaskEvents, changeEvent, NO_TRANSACTION, type TaskEvent, type TaskEventContext, type TaskEventListener, type TaskEventSource } from './events.ts';
export { parseTags, serviceTag, serviceTaskTags, SERVICE_TAG_PREFIX, type ParsedTags } from './tags.ts';

export interface CreateTaskQueueOptions {
  /** `embedded` (default) or `redis://HOST:PORT` for BullMQ. */
  url?: string;
  /**
   * Where the records live: a TaskStore (the platform shares one with its worker API), or the platform's query layer
   * (SQLite or PostgreSQL, its `tasks` scope migrated) to open one on.
   */
  store: TaskStore | TaskQueryStore;
  /** Seals inputs holding secrets; without one such input is refused. */
  secretBox?: SecretBox;
  workerId?: string;
  /** Record poll interval (embedded scheduling, waitFor), default 250 ms. */
  pollMs?: number;
  /** Embedded: lease of a claimed task (crash recovery delay), default 30 s. */
  leaseMs?: number;
  /** BullMQ: Redis key prefix, default `vpnhost`. */
  prefix?: string;
  /** BullMQ: job lock duration, default 30 s. */
  lockDurationMs?: number;
  /** BullMQ: stalled-job check interval, default 30 s. */
  stalledIntervalMs?: number;
  /** BullMQ: age of a `pending` record without its job before recoverLost adds the job, default 30 s. */
  lostAfterMs?: number;
  /** Time of task records (default the wall clock); a given TaskStore keeps its own. */
  clock?: Clock;
  logger?: TaskLogger;
  /**
   * What finished attempts set off that may still add tasks (the platform's hook listeners): `stop` awaits it after
   * the last attempt ended and before the queue closes to adds, so nothing they queue is left behind.
   */
  drain?: () => Promise<void>;
}

const urlSchema = z.union([z.literal('embedded'), z.string().regex(/^rediss?:\/\/[^\s]+$/, 'expected embedded or redis://HOST:PORT')]);

/** Builds the task queue the `--queue` option names (on a store whose `tasks` scope is migrated). Not started. */
export function createTaskQueue(opts: CreateTaskQueueOptions): TaskQueue {
  const url = urlSchema.parse(opts.url ?? 'embedded');
  const store = opts.store instanceof TaskStore ? opts.store : new TaskStore(opts.store, opts.secretBox, opts.clock);
  if (url === 'embedded') {
    return new EmbeddedQueue(store, { workerId: opts.workerId, pollMs: opts.pollMs, leaseMs: opts.leaseMs, logger: opts.logger, drain: opts.drain });
  }
  return new BullmqQueue(store, {
    url, prefix: opts.prefix, workerId: opts.workerId, pollMs: opts.pollMs,
    lockDurationMs: opts.lockDurationMs, stalledIntervalMs: opts.stalledIntervalMs, lostAfterMs: opts.lostAfterMs, clock: opts.clock ?? store.clock, logger: opts.logger, drain: opts.drain,
  });
}
