// The one restart policy of the panel's daemons: exponential backoff between restarts, reset by a stable run, with a limit.

/** How a daemon that died is started again. */
export interface RestartPolicy {
  /** Delay before the first restart after a stable run (ms). */
  minMs: number;
  /** Longest delay: the delay doubles per quick death up to this (ms). */
  maxMs: number;
  /** A run at least this long was stable: the next death restarts after `minMs` again and the streak resets (ms). */
  stableMs: number;
  /** Quick deaths in a row after which no restart is attempted any more (default: unlimited). */
  maxQuickDeaths?: number;
}

/** ulogd's and the watchdog's defaults: 500 ms doubling to 30 s, a 30 s run is stable, no limit. */
export const DEFAULT_RESTART_POLICY: RestartPolicy = { minMs: 500, maxMs: 30_000, stableMs: 30_000 };

/**
 * Counts a daemon's deaths and answers how long to wait before the next start. A death after a run of at least
 * `stableMs` resets the streak; each quick death doubles the delay (from `minMs`, bounded by `maxMs`); after
 * `maxQuickDeaths` quick deaths in a row {@link RestartBackoff.died} answers null (give up) until {@link reset}.
 */
export class RestartBackoff {
  private streak = 0;

  constructor(readonly policy: RestartPolicy) {}

  /** Quick deaths in a row so far. */
  get quickDeaths(): number {
    return this.streak;
  }

  /** Records a death after a run of `ranMs`; the delay before the next start, or null when the limit is reached. */
  died(ranMs: number): number | null {
    this.streak = ranMs >= this.policy.stableMs ? 1 : this.streak + 1;
    if (this.policy.maxQuickDeaths !== undefined && this.streak > this.policy.maxQuickDeaths) return null;
    return Math.min(this.policy.maxMs, this.policy.minMs * 2 ** (this.streak - 1));
  }

  /** Forgets the streak (an operator's start, a run that proved healthy). */
  reset(): void {
    this.streak = 0;
  }
}
