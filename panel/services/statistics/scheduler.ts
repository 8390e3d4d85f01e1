// Runs the sampler every `traffic_statistics_frequency` minutes and at each local midnight, prunes once a day, samples on stop.
import type { Logger } from 'pino';
import type { Clock } from '../../../shared/clock.ts';
import { nextDayStart, dayKey } from './zoned-days.ts';

/** Longest sleep between two looks at the configuration, so a frequency change takes effect within a minute. */
export const MAX_SLEEP_MS = 60_000;

/** Collaborators of the scheduler. */
export interface StatisticsSchedulerDeps {
  clock: Clock;
  timeZone: string;
  /** Minutes between samples, read on every wake-up (SystemConfig `traffic_statistics_frequency`). */
  frequencyMinutes(): number;
  /** Takes one sample (through the data-plane lane). */
  sample(): Promise<unknown>;
  /** Prunes rows older than the retention; called once per local day. */
  prune(): unknown;
  logger?: Logger;
  /** Timer functions (tests may drive them); default the global ones. */
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

/**
 * Wakes at the earliest of: the next sample due (`last + frequency`), the next local midnight (so each day's row
 * ends on the day boundary), and one minute from now (to pick up a changed frequency without a restart).
 */
export class StatisticsScheduler {
  private timer: unknown = null;
  private running: Promise<void> | null = null;
  private lastSampleAt: number;
  private lastPruneDay: string | null = null;
  private stopped = true;

  constructor(private readonly deps: StatisticsSchedulerDeps) {
    this.lastSampleAt = deps.clock.now().getTime();
  }

  /** Starts: prunes now, then keeps the schedule. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.lastSampleAt = this.deps.clock.now().getTime();
    this.pruneIfDue();
    this.arm();
  }

  /** When the next wake-up is due (Unix ms), from the current frequency and the clock. */
  nextWake(): number {
    const now = this.deps.clock.now().getTime();
    const due = this.lastSampleAt + Math.max(1, this.deps.frequencyMinutes()) * 60_000;
    return Math.max(now, Math.min(due, nextDayStart(this.lastSampleAt, this.deps.timeZone), now + MAX_SLEEP_MS));
  }

  /** One wake-up: samples when due (frequency or a day boundary crossed), prunes once per day. Exposed for tests. */
  async tick(): Promise<void> {
    const now = this.deps.clock.now().getTime();
    const due = this.lastSampleAt + Math.max(1, this.deps.frequencyMinutes()) * 60_000;
    const crossedDay = dayKey(now, this.deps.timeZone) !== dayKey(this.lastSampleAt, this.deps.timeZone);
    if (now >= due || crossedDay) {
      this.lastSampleAt = now;
      await this.deps.sample().catch((err: unknown) => this.deps.logger?.error({ err }, 'traffic sample failed'));
    }
    this.pruneIfDue();
  }

  /** Stops the schedule, waits for a running sample, then takes a last one (nothing since the previous is lost). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer !== null) (this.deps.clearTimer ?? ((h) => clearTimeout(h as NodeJS.Timeout)))(this.timer);
    this.timer = null;
    await this.running;
    await this.deps.sample().catch((err: unknown) => this.deps.logger?.error({ err }, 'final traffic sample failed'));
  }

  private pruneIfDue(): void {
    const today = dayKey(this.deps.clock.now().getTime(), this.deps.timeZone);
    if (this.lastPruneDay === today) return;
    this.lastPruneDay = today;
    try {
      this.deps.prune();
    } catch (err) {
      this.deps.logger?.error({ err }, 'traffic statistics pruning failed');
    }
  }

  private arm(): void {
    if (this.stopped) return;
    const wait = this.nextWake() - this.deps.clock.now().getTime();
    const set = this.deps.setTimer ?? ((fn, ms) => {
      const t = setTimeout(fn, ms);
      t.unref();
      return t;
    });
    this.timer = set(() => {
      this.timer = null;
      this.running = this.tick().finally(() => {
        this.running = null;
        this.arm();
      });
    }, Math.max(0, wait));
  }
}
