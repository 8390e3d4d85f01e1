// Restarts unbound and charon after a crash through their subsystem's reconcile, with the daemons' RestartBackoff.
import type { Logger } from 'pino';
import { RestartBackoff } from '../dataplane/linux/restart-backoff.ts';

/** One supervised daemon as the watchdog sees it. */
export interface WatchedDaemon {
  /** Short name for logs and stats (`dns`, `ikev2`). */
  name: string;
  /**
   * Why the daemon needs a restart (it should run and its process is gone), or null when all is well (running, or
   * not wanted). Called on every check; must be cheap (a pid probe).
   */
  crashed(): Promise<string | null>;
  /** Starts it again from the store (the subsystem's reconcile, in the data-plane lane). */
  restart(): Promise<void>;
}

/** What the watchdog did for one daemon, for logs and tests. */
export interface WatchdogStats {
  /** Restarts that brought the daemon back. */
  restarts: number;
  /** Restart attempts that failed. */
  failures: number;
  /** Unix ms before which no new attempt is made (backoff), 0 when none is pending. */
  nextAttemptAt: number;
}

/** Options of {@link DaemonWatchdog}. */
export interface DaemonWatchdogOptions {
  daemons: WatchedDaemon[];
  logger?: Logger;
  now?: () => number;
  /** Between two checks (default 5 s; `start` may override). */
  intervalMs?: number;
  /** First backoff after a failed restart (default 5 s), doubled per failure up to `maxBackoffMs` (default 5 min). */
  backoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * Polls each daemon every `intervalMs`; a crashed one is restarted at once, and when the restart fails (or the
 * daemon dies again right away) the next attempt waits `backoffMs`, doubling up to `maxBackoffMs`, so a daemon
 * that cannot start (a port taken, a broken binary) does not spin. A restart that keeps the daemon up for one full
 * check resets the backoff. While it is down, GET /system/status keeps naming the crash (the subsystems' own
 * health checks); the watchdog only brings it back.
 */
export class DaemonWatchdog {
  private readonly state = new Map<string, WatchdogStats & { backoff: RestartBackoff }>();
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private readonly now: () => number;

  constructor(private readonly opts: DaemonWatchdogOptions) {
    this.now = opts.now ?? Date.now;
    // the daemons' one restart policy (as the supervisor's): a daemon that stays up for one check is stable again
    const policy = { minMs: opts.backoffMs ?? 5_000, maxMs: opts.maxBackoffMs ?? 300_000, stableMs: Infinity };
    for (const d of opts.daemons) this.state.set(d.name, { restarts: 0, failures: 0, nextAttemptAt: 0, backoff: new RestartBackoff(policy) });
  }

  /** Starts the periodic checks, every `intervalMs` (default: the option's, else 5 s). */
  start(intervalMs = this.opts.intervalMs ?? 5_000): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), intervalMs);
    this.timer.unref();
  }

  /** Stops the checks and waits for a running one. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.checking;
  }

  /** The counters of one daemon. */
  stats(name: string): WatchdogStats {
    const s = this.state.get(name);
    if (!s) throw new Error(`unknown daemon ${name}`);
    return { restarts: s.restarts, failures: s.failures, nextAttemptAt: s.nextAttemptAt };
  }

  /** One round over every daemon (exposed for tests); overlapping calls share the running round. */
  check(): Promise<void> {
    this.checking ??= this.round().finally(() => (this.checking = null));
    return this.checking;
  }

  private async round(): Promise<void> {
    for (const daemon of this.opts.daemons) {
      const s = this.state.get(daemon.name)!;
      let why: string | null;
      try {
        why = await daemon.crashed();
      } catch (err) {
        this.opts.logger?.warn({ err, daemon: daemon.name }, 'watchdog: probe failed');
        continue;
      }
      if (why === null) {
        s.backoff.reset();
        s.nextAttemptAt = 0;
        continue;
      }
      if (this.now() < s.nextAttemptAt) continue;
      this.opts.logger?.warn({ daemon: daemon.name, why }, 'watchdog: daemon down, restarting');
      try {
        await daemon.restart();
        if ((await daemon.crashed()) !== null) throw new Error('still not running after the restart');
        s.restarts++;
        this.opts.logger?.info({ daemon: daemon.name }, 'watchdog: daemon restarted');
      } catch (err) {
        s.failures++;
        this.opts.logger?.error({ err, daemon: daemon.name }, 'watchdog: restart failed');
      }
      // The next attempt waits (also after a success: a daemon that dies again at once is not restarted in a loop).
      s.nextAttemptAt = this.now() + (s.backoff.died(0) ?? 0);
    }
  }
}
