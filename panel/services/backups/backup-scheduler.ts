// Scheduled backups with croner: hourly at a minute and/or daily at hour:minute, each with its statistics flag.
import { Cron } from 'croner';
import type { Logger } from 'pino';
import type { BackupConfig } from '../../schemas/backups.ts';

/** Which schedule fired. */
export type ScheduleKind = 'hourly' | 'daily';

/** What the scheduler needs. */
export interface BackupSchedulerDeps {
  config: () => BackupConfig;
  /** Makes one archive (the backup service's create). */
  run: (statistics: boolean, kind: ScheduleKind) => Promise<unknown>;
  /** Whether an archive is being made or restored right now (the run is then skipped). */
  busy: () => boolean;
  logger?: Logger;
  /** IANA zone of the schedule's hours (default: the host's). */
  timeZone?: string;
}

/** The croner patterns of a config (`minute hour * * *`). */
export function schedulePatterns(config: BackupConfig): Array<{ kind: ScheduleKind; pattern: string; statistics: boolean }> {
  const out: Array<{ kind: ScheduleKind; pattern: string; statistics: boolean }> = [];
  if (config.every_hour) out.push({ kind: 'hourly', pattern: `${config.every_hour_minute} * * * *`, statistics: config.every_hour_statistics });
  if (config.every_day) out.push({ kind: 'daily', pattern: `${config.every_day_minute} ${config.every_day_hour} * * *`, statistics: config.every_day_statistics });
  return out;
}

/** Runs the configured schedules; a run that would overlap a running one is skipped and logged. */
export class BackupScheduler {
  private jobs: Cron[] = [];
  private running: Promise<void> | null = null;
  private started = false;

  constructor(private readonly deps: BackupSchedulerDeps) {}

  /** Starts (or restarts after a config change) the croner jobs. */
  start(): void {
    this.started = true;
    this.reschedule();
  }

  /** Re-reads the config and replaces the jobs (no-op before `start`). */
  reschedule(): void {
    for (const job of this.jobs) job.stop();
    this.jobs = [];
    if (!this.started) return;
    for (const s of schedulePatterns(this.deps.config())) {
      this.jobs.push(new Cron(s.pattern, { timezone: this.deps.timeZone }, () => void this.trigger(s.kind)));
    }
  }

  /** The next run of each job (for logs and tests). */
  nextRuns(): Array<Date | null> {
    return this.jobs.map((j) => j.nextRun());
  }

  /**
   * One scheduled run now (croner calls it; tests call it). `skipped` when a run or a restore is under way,
   * `failed` when the archive or its upload failed (logged by the service), else `done`.
   */
  async trigger(kind: ScheduleKind): Promise<'done' | 'skipped' | 'failed'> {
    if (this.running || this.deps.busy()) {
      this.deps.logger?.warn({ kind }, 'scheduled backup skipped: the previous run is still running');
      return 'skipped';
    }
    const config = this.deps.config();
    const statistics = kind === 'hourly' ? config.every_hour_statistics : config.every_day_statistics;
    let outcome: 'done' | 'failed' = 'done';
    this.running = this.deps.run(statistics, kind).then(
      () => undefined,
      (err: unknown) => {
        outcome = 'failed';
        this.deps.logger?.error({ kind, error: (err as Error).message }, 'scheduled backup failed');
      },
    );
    try {
      await this.running;
    } finally {
      this.running = null;
    }
    return outcome;
  }

  /** Stops the jobs and waits for a running archive. */
  async stop(): Promise<void> {
    this.started = false;
    for (const job of this.jobs) job.stop();
    this.jobs = [];
    await this.running;
  }
}
