// Entry of the task package: the queue factory and the public names other parts import.
import type { Database } from 'better-sqlite3';
import { z } from 'zod';
import type { SecretBox } from '../../panel/shared/secret-box.ts';
import type { Clock } from '../../panel/shared/clock.ts';
import { BullmqQueue } from './bullmq.ts';
import { EmbeddedQueue } from './embedded.ts';
import type { TaskQueue } from './queue.ts';
import type { TaskLogger } from './store-backed-queue.ts';
import { migrateTaskStore, TaskStore } from './task-store.ts';

export * from './queue.ts';
export { Task } from './task.ts';
export { createModuleJob, MODULE_JOB, toModuleRef, type ModuleRef, type ModuleResolver } from './module-job.ts';
export { migrateTaskStore, TaskStore } from './task-store.ts';
export type { ClaimedTask, TaskBackend, TaskInsert, TaskRecordStore } from './task-record-store.ts';
export { EmbeddedQueue } from './embedded.ts';
export { BullmqQueue } from './bullmq.ts';
export type { TaskLogger } from './store-backed-queue.ts';
export { TaskEvents, changeEvent, type TaskEvent, type TaskEventListener, type TaskEventSource } from './events.ts';
export { parseTags, serviceTag, serviceTaskTags, SERVICE_TAG_PREFIX, type ParsedTags } from './tags.ts';

export interface CreateTaskQueueOptions {
  /** `embedded` (default) or `redis://HOST:PORT` for BullMQ. */
  url?: string;
  /** The platform's better-sqlite3 database (WAL and a busy timeout recommended when processes share it). */
  db: Database;
  /** A TaskStore already opened on `db` (the platform shares one with its worker API); made from `db` when absent. */
  store?: TaskStore;
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
  /** Time of task records (default the wall clock); a given `store` keeps its own. */
  clock?: Clock;
  logger?: TaskLogger;
}

const urlSchema = z.union([z.literal('embedded'), z.string().regex(/^rediss?:\/\/[^\s]+$/, 'expected embedded or redis://HOST:PORT')]);

/** Builds the task queue the `--queue` option names; creates the task tables when missing. Not started. */
export function createTaskQueue(opts: CreateTaskQueueOptions): TaskQueue {
  const url = urlSchema.parse(opts.url ?? 'embedded');
  migrateTaskStore(opts.db);
  const store = opts.store ?? new TaskStore(opts.db, opts.secretBox, opts.clock);
  if (url === 'embedded') {
    return new EmbeddedQueue(store, { workerId: opts.workerId, pollMs: opts.pollMs, leaseMs: opts.leaseMs, logger: opts.logger });
  }
  return new BullmqQueue(store, {
    url, prefix: opts.prefix, workerId: opts.workerId, pollMs: opts.pollMs,
    lockDurationMs: opts.lockDurationMs, stalledIntervalMs: opts.stalledIntervalMs, lostAfterMs: opts.lostAfterMs, clock: opts.clock ?? store.clock, logger: opts.logger,
  });
}
