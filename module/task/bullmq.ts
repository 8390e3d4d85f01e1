// BullMQ backend (`--queue redis://HOST:PORT`): Redis schedules and distributes attempts; the task record stays in
// the platform database, reached directly (same data directory) or through the platform's worker API (remote worker).
import { randomUUID } from 'node:crypto';
import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { decide, LOST_WORKER_ERROR, runAttempt } from './attempt.ts';
import { resolveOptions } from './options.ts';
import type { TaskAdded, TaskOptions, TaskRecord } from './queue.ts';
import { StoreBackedQueue, type TaskLogger } from './store-backed-queue.ts';
import { BLOCKED, type TaskRecordStore } from './task-record-store.ts';
import { systemClock, type Clock } from '../../shared/clock.ts';

const ENQUEUE_ERROR = 'Task could not be queued';

export interface BullmqQueueOptions {
  /** `redis://[user:password@]HOST:PORT[/db]` (or `rediss://`). */
  url: string;
  /** Redis key prefix, default `vpnhost`. */
  prefix?: string;
  workerId?: string;
  /** Interval of waitFor's record polls, default 250 ms. */
  pollMs?: number;
  /** BullMQ job lock; a worker that dies loses it after this long. Default 30 s. */
  lockDurationMs?: number;
  /** How often workers look for jobs whose lock expired (stalled), default 30 s. */
  stalledIntervalMs?: number;
  /** A `pending` record untouched this long whose job is not in Redis counts as lost (see recoverLost), default 30 s. */
  lostAfterMs?: number;
  /** Time of settlements and of the lost-record check (the record store's clock); default the wall clock. */
  clock?: Clock;
  logger?: TaskLogger;
  /**
   * What finished attempts set off that may still add tasks (the platform's hook listeners, e.g. the mail a
   * provisioning queues): stop awaits it after the last attempt ended, before it closes the queue to adds.
   */
  drain?: () => Promise<void>;
}

interface JobData {
  taskId: string;
}

/** BullMQ job id of a record: the task id, suffixed per `retry` so a retried task never meets its old job. */
function bullJobId(taskId: string, retries = 0): string {
  return retries === 0 ? taskId : `${taskId}-retry-${retries}`;
}

/** The `retries` generation `jobId` stands for (see bullJobId), or null when it is no job id of `taskId`. */
function jobGeneration(taskId: string, jobId: string | undefined): number | null {
  if (jobId === taskId) return 0;
  const prefix = `${taskId}-retry-`;
  if (!jobId?.startsWith(prefix)) return null;
  const retries = Number(jobId.slice(prefix.length));
  return Number.isSafeInteger(retries) && retries > 0 && bullJobId(taskId, retries) === jobId ? retries : null;
}

/**
 * BullMQ `TaskQueue` (kind `bullmq`). Redis holds only the task id (job id = task id, data `{taskId}`); inputs and
 * their secrets stay in the record store (the platform database), never in Redis. BullMQ `attempts` = tries and a fixed backoff of `backoff` seconds;
 * the store counts attempts and exceptions and ends retries early with an UnrecoverableError (maxExceptions, or
 * an attempt lost to a dead worker when no tries are left). Stalled jobs are re-delivered by BullMQ's checker.
 */
export class BullmqQueue extends StoreBackedQueue<TaskRecordStore> {
  readonly kind = 'bullmq' as const;
  /** This process's id in task records (`worker_id`): logged at start, so an operator can tell whose attempts a record shows. */
  readonly workerId: string;
  private readonly prefix: string;
  private readonly lockDurationMs: number;
  private readonly stalledIntervalMs: number;
  private readonly lostAfterMs: number;
  private readonly clock: Clock;
  private connection: Redis | undefined;
  private readonly queues = new Map<string, Queue<JobData>>();
  private readonly workers = new Map<string, { worker: Worker<JobData>; connection: Redis }>();
  private readonly active = new Map<string, AbortController>();
  private running = false;
  /** Set by stop(): no Redis connection is opened again (a late add leaves its record to recoverLost). */
  private stopped = false;
  private startOpts: { queues?: string[]; concurrency?: number } = {};
  private rescanTimer: NodeJS.Timeout | undefined;

  constructor(store: TaskRecordStore, private readonly opts: BullmqQueueOptions) {
    super(store, opts.pollMs ?? 250, opts.logger);
    this.workerId = opts.workerId ?? randomUUID();
    this.prefix = opts.prefix ?? 'vpnhost';
    this.lockDurationMs = opts.lockDurationMs ?? 30_000;
    this.stalledIntervalMs = opts.stalledIntervalMs ?? 30_000;
    this.lostAfterMs = opts.lostAfterMs ?? 30_000;
    this.clock = opts.clock ?? systemClock;
  }

  async add(job: string, queue: string, input: Record<string, unknown>, tags: string[], options?: Partial<TaskOptions>): Promise<TaskAdded> {
    const resolved = resolveOptions(options);
    const added = await this.store.insert({ backend: 'bullmq', job, queue, input, tags, options: resolved });
    if (added.status === 'duplicate') {
      this.notify(added.id);
      return added;
    }
    await this.enqueue(queue, job, added.id, bullJobId(added.id), resolved);
    if (this.running && !this.startOpts.queues) this.ensureWorker(queue);
    return added;
  }

  private async addJob(queue: string, job: string, id: string, jobId: string, options: TaskOptions): Promise<void> {
    await this.queueFor(queue).add(job, { taskId: id }, {
      jobId,
      attempts: options.tries,
      backoff: { type: 'fixed', delay: Math.round(options.backoff * 1000) },
      removeOnComplete: true,
      removeOnFail: true,
    });
  }

  private async enqueue(queue: string, job: string, id: string, jobId: string, options: TaskOptions): Promise<void> {
    if (this.stopped) {
      // Added while the process shuts down (a hook listener after the last job): the record stays `pending`, and the
      // next process's recoverLost adds its job; a connection opened now would outlive the queue.
      this.logger.error({ taskId: id, queue }, 'task added after the queue stopped: its job is added by the next process');
      return;
    }
    try {
      await this.addJob(queue, job, id, jobId, options);
    } catch (error) {
      await this.store.fail(id, `${ENQUEUE_ERROR}: ${error instanceof Error ? error.message : String(error)}`);
      this.notify(id);
      throw error;
    }
  }

  async start(opts: { queues?: string[]; concurrency?: number } = {}): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.stopped = false;
    this.started = true;
    this.startOpts = opts;
    const names = opts.queues ?? (await this.store.activeQueues('bullmq'));
    for (const name of names) this.ensureWorker(name);
    if (!opts.queues) {
      this.rescanTimer = setInterval(() => {
        void this.rescan();
      }, Math.min(5_000, Math.max(1000, this.stalledIntervalMs)));
    }
    await Promise.all([...this.workers.values()].map(({ worker }) => worker.waitUntilReady()));
  }

  /**
   * Closes the workers (waiting up to `graceMs` for running attempts, then aborting them), awaits `drain` (what those
   * attempts set off, which may add tasks: their jobs still reach Redis), then closes queues and connections; an add
   * after that leaves its record to the next process's recoverLost.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.running = false;
    this.started = false;
    clearInterval(this.rescanTimer);
    const closing = Promise.allSettled([...this.workers.values()].map(({ worker }) => worker.close()));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = await Promise.race([closing.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)))]);
    clearTimeout(timer);
    if (graceOver) {
      for (const controller of this.active.values()) controller.abort();
      await closing;
    }
    await this.awaitDrain(this.opts.drain);
    this.stopped = true;
    await Promise.allSettled([...this.queues.values()].map((queue) => queue.close()));
    const connections = [...this.workers.values()].map((entry) => entry.connection);
    if (this.connection) connections.push(this.connection);
    await Promise.allSettled(connections.map((connection) => connection.quit()));
    this.workers.clear();
    this.queues.clear();
    this.connection = undefined;
  }

  async retry(id: string): Promise<TaskRecord> {
    const record = await this.store.resetForRetry(id, 'bullmq');
    await this.enqueue(record.queue, record.job, id, bullJobId(id, record.retries), record.options);
    if (this.running && !this.startOpts.queues) this.ensureWorker(record.queue);
    this.notify(id);
    return record;
  }

  /**
   * Adds the job of every `pending` record untouched for `lostAfterMs` whose job Redis does not hold: its process
   * died between writing the record and adding the job, and without this the record would wait forever and hold up
   * the later tasks of its service. (Adding is idempotent per job id, so a late original add changes nothing.)
   */
  async recoverLost(): Promise<string[]> {
    if (!this.store.stalePending) return [];
    const recovered: string[] = [];
    for (const record of await this.store.stalePending('bullmq', this.clock.now().getTime() - this.lostAfterMs, 100)) {
      const jobId = bullJobId(record.id, record.retries ?? 0);
      if (await this.queueFor(record.queue).getJob(jobId)) continue;
      const again = await this.store.get(record.id);
      if (!again || again.status !== 'pending' || (again.retries ?? 0) !== (record.retries ?? 0)) continue;
      await this.addJob(record.queue, record.job, record.id, jobId, record.options);
      if (this.running && !this.startOpts.queues) this.ensureWorker(record.queue);
      this.logger.error({ taskId: record.id, queue: record.queue }, 'task record had no queued job (lost enqueue): job added');
      recovered.push(record.id);
    }
    return recovered;
  }

  /** Starts workers for queues that got runnable records since (e.g. added by another process). */
  private async rescan(): Promise<void> {
    try {
      for (const name of await this.store.activeQueues('bullmq')) this.ensureWorker(name);
    } catch (error) {
      this.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'task store access failed');
    }
  }

  private redis(): Redis {
    const connection = new Redis(this.opts.url, { maxRetriesPerRequest: null });
    connection.on('error', (error: Error) => this.logger.error({ err: error.message }, 'redis connection error'));
    return connection;
  }

  private queueFor(name: string): Queue<JobData> {
    let queue = this.queues.get(name);
    if (!queue) {
      if (!this.connection) {
        this.connection = new Redis(this.opts.url, { maxRetriesPerRequest: 2 });
        this.connection.on('error', (error: Error) => this.logger.error({ err: error.message }, 'redis connection error'));
      }
      queue = new Queue<JobData>(name, { connection: this.connection, prefix: this.prefix });
      queue.on('error', (error: Error) => this.logger.error({ err: error.message, queue: name }, 'bullmq queue error'));
      this.queues.set(name, queue);
    }
    return queue;
  }

  private ensureWorker(name: string): void {
    if (!this.running || this.workers.has(name)) return;
    const connection = this.redis();
    const worker = new Worker<JobData>(name, (job, token) => this.process(job, token), {
      connection,
      prefix: this.prefix,
      concurrency: Math.max(1, this.startOpts.concurrency ?? 1),
      lockDuration: this.lockDurationMs,
      stalledInterval: this.stalledIntervalMs,
      // Stalls are bounded by the record's tries (see process); BullMQ's own stall limit would fail the job
      // without telling the record.
      maxStalledCount: 1_000_000,
    });
    worker.on('error', (error: Error) => this.logger.error({ err: error.message, queue: name }, 'bullmq worker error'));
    worker.on('failed', (job, error) => {
      if (job && job.finishedOn && job.id) {
        this.reconcileFailed(job.data.taskId, job.id, error.message).catch((err: unknown) =>
          this.logger.error({ err: err instanceof Error ? err.message : String(err), taskId: job.data.taskId }, 'task store access failed'),
        );
      }
    });
    this.workers.set(name, { worker, connection });
  }

  /** A job BullMQ failed for good while the record is still open: close the record too. */
  private async reconcileFailed(taskId: string, jobId: string, message: string): Promise<void> {
    const record = await this.store.get(taskId);
    if (record && bullJobId(taskId, record.retries) === jobId && (record.status === 'pending' || record.status === 'processing')) {
      await this.store.fail(taskId, message);
      this.notify(taskId);
    }
  }

  /**
   * The BullMQ processor: one attempt of the record, the outcome mapped onto BullMQ's retry machinery. A record that
   * must wait for an earlier task of its service goes back to BullMQ's delayed set (no attempt used) for `pollMs`.
   */
  private async process(job: Job<JobData>, token?: string): Promise<null> {
    const taskId = job.data.taskId;
    const generation = jobGeneration(taskId, job.id);
    // A job that is none of this task's generations: nothing to do.
    if (generation === null) return null;
    // Only the record of this job's generation is begun (a job of an earlier `retry` of the task is not).
    const claimed = await this.store.beginAttempt(taskId, this.workerId, this.lockDurationMs, generation);
    if (claimed === BLOCKED) {
      // BullMQ compares delays with the wall clock itself (Redis and its workers), not with an injected Clock.
      await job.moveToDelayed(Date.now() + this.pollMs, token);
      throw new DelayedError();
    }
    if (!claimed) {
      const record = await this.store.get(taskId);
      // A job of an earlier generation (the task was retried since) or of a vanished record: nothing to do.
      if (!record || bullJobId(taskId, record.retries) !== job.id) return null;
      this.notify(taskId);
      if (record.status === 'failed') throw new UnrecoverableError(record.lastError ?? LOST_WORKER_ERROR);
      return null;
    }
    const { record, rawInput } = claimed;
    this.notify(taskId);
    const controller = new AbortController();
    this.active.set(taskId, controller);
    try {
      const outcome = await runAttempt(this.handlerFor(record.job), rawInput, {
        taskId, attempt: record.attempts, timeout: record.options.timeout, options: record.options,
        exceptions: record.exceptions, stopSignal: controller.signal,
      });
      let updated: TaskRecord | null;
      if (outcome.kind === 'stopped') {
        await this.store.release('bullmq', { workerId: this.workerId, ids: [taskId] });
        updated = await this.store.get(taskId);
      } else {
        updated = await this.store.settle(taskId, this.workerId, decide(record, outcome, this.clock.now().getTime()));
      }
      if (!updated || updated.status === 'completed') return null;
      const message = updated.lastError ?? LOST_WORKER_ERROR;
      throw updated.status === 'failed' ? new UnrecoverableError(message) : new Error(message);
    } finally {
      this.active.delete(taskId);
      this.notify(taskId);
    }
  }
}
