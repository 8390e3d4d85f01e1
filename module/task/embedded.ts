// The default backend: tasks scheduled from the platform store (SQLite or PostgreSQL) by in-process workers. Several
// processes may share one store: claims are conditional UPDATE … RETURNING statements (SKIP LOCKED on PostgreSQL),
// leases expire when a worker dies.
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { decide, runAttempt } from './attempt.ts';
import { resolveOptions } from './options.ts';
import type { TaskAdded, TaskOptions, TaskRecord } from './queue.ts';
import { StoreBackedQueue, type TaskLogger } from './store-backed-queue.ts';
import type { ClaimedTask, TaskStore } from './task-store.ts';

export interface EmbeddedQueueOptions {
  /** Identifies this process's leases; default a random UUID. */
  workerId?: string;
  /** Poll interval for due tasks (backoffs, other processes' adds), default 250 ms. */
  pollMs?: number;
  /** Lease of a claimed task, renewed by heartbeats every third of it; a dead worker's task is retaken after it. Default 30 s. */
  leaseMs?: number;
  logger?: TaskLogger;
  /** What finished attempts set off that may still add tasks (the platform's hook listeners): stop awaits it last. */
  drain?: () => Promise<void>;
}

/** Embedded `TaskQueue` (kind `embedded`). */
export class EmbeddedQueue extends StoreBackedQueue<TaskStore> {
  readonly kind = 'embedded' as const;
  private readonly workerId: string;
  private readonly leaseMs: number;
  private running = false;
  private queues: string[] | undefined;
  private concurrency = 1;
  private readonly inFlight = new Map<string, Promise<void>>();
  private timers: NodeJS.Timeout[] = [];
  private stopController = stopController();
  private wakeQueued = false;
  /** The claiming loop running now (one at a time), and whether a wake came while it ran. */
  private filling: Promise<void> | null = null;
  private fillAgain = false;

  private readonly drain: (() => Promise<void>) | undefined;

  constructor(store: TaskStore, opts: EmbeddedQueueOptions = {}) {
    super(store, opts.pollMs ?? 250, opts.logger);
    this.drain = opts.drain;
    this.workerId = opts.workerId ?? randomUUID();
    this.leaseMs = opts.leaseMs ?? 30_000;
  }

  async add(job: string, queue: string, input: Record<string, unknown>, tags: string[], options?: Partial<TaskOptions>): Promise<TaskAdded> {
    const added = await this.store.insert({ backend: 'embedded', job, queue, input, tags, options: resolveOptions(options) });
    if (added.status === 'duplicate') this.notify(added.id);
    else this.wake();
    return added;
  }

  async start(opts: { queues?: string[]; concurrency?: number } = {}): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.started = true;
    this.queues = opts.queues;
    this.concurrency = Math.max(1, opts.concurrency ?? 1);
    await this.recover();
    this.timers = [
      setInterval(() => this.pump(), this.pollMs),
      setInterval(() => void this.safely(() => this.store.heartbeat(this.workerId, this.leaseMs)), Math.max(50, Math.floor(this.leaseMs / 3))),
      setInterval(() => void this.recover(), Math.max(100, Math.floor(this.leaseMs / 2))),
    ];
    this.wake();
  }

  /** Stops claiming; waits up to `graceMs` for running attempts, then aborts them (each counts as a lost attempt). */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.running = false;
    const [poll, heartbeat, recovery] = this.timers;
    clearInterval(poll);
    clearInterval(recovery);
    await this.filling;
    const all = Promise.allSettled([...this.inFlight.values()]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    if (this.inFlight.size > 0) {
      this.stopController.abort();
      await all;
    }
    clearInterval(heartbeat);
    this.timers = [];
    this.stopController = stopController();
    this.started = false;
    await this.awaitDrain(this.drain);
  }

  async retry(id: string): Promise<TaskRecord> {
    const record = await this.store.resetForRetry(id, 'embedded');
    this.notify(id);
    this.wake();
    return record;
  }

  /** Releases records whose worker's lease expired (also done on the queue's own timer while started). */
  async recoverLost(): Promise<string[]> {
    const ids = await this.store.release('embedded', { expired: true });
    for (const id of ids) this.notify(id);
    if (ids.length > 0) this.wake();
    return ids;
  }

  private wake(): void {
    if (!this.running || this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      this.pump();
    });
  }

  /** Starts the claiming loop, or asks the running one to look again when it ends. */
  private pump(): void {
    if (this.filling) {
      this.fillAgain = true;
      return;
    }
    this.filling = this.fill().finally(() => {
      this.filling = null;
      if (this.fillAgain) {
        this.fillAgain = false;
        this.pump();
      }
    });
  }

  /** Claims due tasks until `concurrency` attempts run. */
  private async fill(): Promise<void> {
    while (this.running && this.inFlight.size < this.concurrency) {
      const claimed = await this.safely(() => this.store.claimNext('embedded', this.workerId, this.leaseMs, this.queues));
      if (!claimed) return;
      const id = claimed.record.id;
      const run = this.execute(claimed)
        .catch((error: unknown) => this.logger.error({ err: String(error), taskId: id }, 'task attempt bookkeeping failed'))
        .finally(() => {
          this.inFlight.delete(id);
          this.notify(id);
          this.wake();
        });
      this.inFlight.set(id, run);
    }
  }

  private async execute({ record, rawInput }: ClaimedTask): Promise<void> {
    const outcome = await runAttempt(this.handlerFor(record.job), rawInput, {
      taskId: record.id,
      attempt: record.attempts,
      timeout: record.options.timeout,
      options: record.options,
      exceptions: record.exceptions,
      stopSignal: this.stopController.signal,
    });
    if (outcome.kind === 'stopped') await this.store.release('embedded', { workerId: this.workerId, ids: [record.id] });
    else await this.store.settle(record.id, this.workerId, decide(record, outcome, this.store.now()));
  }

  /** Retakes tasks whose worker's lease expired (crashed process). */
  private async recover(): Promise<void> {
    // Renew our own leases first, so a late heartbeat never makes this process release its own running tasks.
    if (this.inFlight.size > 0) await this.safely(() => this.store.heartbeat(this.workerId, this.leaseMs));
    const ids = (await this.safely(() => this.store.release('embedded', { expired: true }))) ?? [];
    for (const id of ids) this.notify(id);
    if (ids.length > 0) this.wake();
  }

  private async safely<T>(fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch (error) {
      this.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'task store access failed');
      return undefined;
    }
  }
}

/** The workers' shared stop signal: every in-flight attempt listens to it (and lets go when done), so no cap. */
function stopController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
