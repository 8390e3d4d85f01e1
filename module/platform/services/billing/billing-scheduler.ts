// The billing schedule: every `run_every_minutes` of the platform clock one run is queued on the Task queue. The
// slot is claimed in the database (UNIQUE), so platform processes ticking at once queue it once; a run that never got
// its task (the process died between claim and queue), or whose task ended without finishing it (its tries spent on
// processes killed mid-run), is queued again by the next tick — a run is idempotent, so it just goes on.
import type { Logger } from 'pino';
import type { Clock } from '../../../../shared/clock.ts';
import type { BillingRunQueries } from '../../store/query/repositories/billing-runs.ts';
import type { BillingSettingsQueries } from '../../store/query/repositories/billing-settings.ts';
import { queueBillingRun } from './billing-jobs.ts';

/** How often (wall time) the schedule looks whether a slot began. */
const SCHEDULE_TICK_MS = 15_000;
const ORPHAN_MS = 60_000;
/** Unfinished runs older than this are left to later slots. */
const RESUME_WITHIN_MS = 86_400_000;

export class BillingScheduler {
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: {
    runs: BillingRunQueries;
    settings: BillingSettingsQueries;
    clock: Clock;
    logger: Logger;
    /** The status of a task (`pending`, `processing`, `completed`, `failed`, …), null when unknown. */
    taskStatus(taskId: string): Promise<string | null>;
  }) {}

  /** The slot `now` falls in: its start as an ISO time. */
  async slot(now = this.deps.clock.now()): Promise<string> {
    const every = (await this.deps.settings.global()).run_every_minutes * 60_000;
    return new Date(Math.floor(now.getTime() / every) * every).toISOString();
  }

  /** Claims the current slot and queues its run (null when another process has it); queues orphaned slots too. */
  async tick(): Promise<number | null> {
    const { runs, clock } = this.deps;
    const now = clock.now().getTime();
    for (const run of await runs.unfinished(new Date(now - RESUME_WITHIN_MS).toISOString(), new Date(now - ORPHAN_MS).toISOString())) {
      const status = run.task_id ? await this.deps.taskStatus(run.task_id) : null;
      if (status === 'pending' || status === 'processing') continue;
      this.deps.logger.warn({ run_id: run.id, task_id: run.task_id, task_status: status }, 'billing run left unfinished: queued again');
      await this.queue(run.id);
    }
    const id = await runs.claimSlot(await this.slot());
    if (id === null) return null;
    await this.queue(id);
    return id;
  }

  /** Queues run `id`, recording its task. */
  async queue(id: number): Promise<string> {
    const added = await queueBillingRun(id);
    await this.deps.runs.setTask(id, added.id);
    return added.id;
  }

  /** Ticks now and every `everyMs` until `stop`. */
  start(everyMs = SCHEDULE_TICK_MS): void {
    if (this.timer) return;
    const tick = () => {
      this.ticking = this.tick().catch((error: unknown) => this.deps.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'billing schedule tick failed'));
    };
    tick();
    this.timer = setInterval(tick, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
  }
}
