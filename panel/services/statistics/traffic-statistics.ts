// Traffic statistics: the month query behind GET /account/<name>/traffic_statistics, retention, sampler and scheduler.
import type { Logger } from 'pino';
import type { Driver } from '../../dataplane/driver.ts';
import type { Ipsec } from '../../dataplane/ipsec/ipsec.ts';
import { ApiError, E } from '../../http/errors.ts';
import type { TrafficStatisticsEntry } from '../../schemas/statistics.ts';
import type { Clock } from '../../shared/clock.ts';
import type { TrafficStatisticsRepository } from '../../store/repositories/traffic-statistics.ts';
import { TrafficSampler } from './sampler.ts';
import { StatisticsScheduler } from './scheduler.ts';
import { daysInMonth, formatDay, wallClock } from './zoned-days.ts';

/** Years the month query accepts; others answer `Wrong year setting`. */
export const YEAR_RANGE = { min: 1970, max: 2100 } as const;

/** Collaborators of the statistics service. */
export interface TrafficStatisticsDeps {
  repo: TrafficStatisticsRepository;
  /** The WireGuard seam (see TrafficSamplerDeps.wireguard: on `kind` linux the sample worker reads the counters). */
  wireguard: Pick<Driver, 'transfers'> & Partial<Pick<Driver, 'kind'>>;
  /** The IKEv2 seam: live SAs are sampled too (optional). */
  ipsec?: Pick<Ipsec, 'listSas'>;
  /** Subscribes to account writes (the accounts repository's `onRowsChanged`). */
  onAccountsChanged?(listener: () => void): void;
  clock: Clock;
  timeZone: string;
  /** SystemConfig `traffic_statistics_frequency` (minutes) and `traffic_statistics_history` (months), read live. */
  config(): { traffic_statistics_frequency: number; traffic_statistics_history: number };
  /** The account's id, or `Account not found`. */
  accountId(name: string): number;
  /** Runs `task` in the data-plane lane (DataplaneSync.serial), so a scheduled sample never splits an account change. */
  serial<T>(task: () => Promise<T>): Promise<T>;
  /** Told the duration of every scheduled sample in seconds (the metrics' sample histogram). */
  onSample?(seconds: number): void;
  logger?: Logger;
}

/**
 * Owns the sampler (items 1), retention (2) and the month query (3). Retention: `traffic_statistics_history` = H
 * months kept before the current one; rows of days before the first day of the month H months back are pruned
 * once a day (H = 0 keeps the current month only).
 */
export class TrafficStatisticsService {
  readonly sampler: TrafficSampler;
  readonly scheduler: StatisticsScheduler;

  constructor(private readonly deps: TrafficStatisticsDeps) {
    this.sampler = new TrafficSampler({
      repo: deps.repo, wireguard: deps.wireguard, ipsec: deps.ipsec, onAccountsChanged: deps.onAccountsChanged, clock: deps.clock,
      timeZone: deps.timeZone, logger: deps.logger,
    });
    this.scheduler = new StatisticsScheduler({
      clock: deps.clock,
      timeZone: deps.timeZone,
      frequencyMinutes: () => deps.config().traffic_statistics_frequency,
      sample: () => deps.serial(async () => {
        const started = performance.now();
        try {
          return await this.sampler.sample();
        } finally {
          deps.onSample?.((performance.now() - started) / 1000);
        }
      }),
      prune: () => this.prune(),
      logger: deps.logger,
    });
  }

  /**
   * Call inside the data-plane lane before a peer leaves its interface (disable, delete): samples that interface
   * (and the IKE SAs, which a disable or delete terminates) so the bytes since the last sample are kept.
   */
  async beforePeerLeaves(iface: string): Promise<void> {
    // a failed sample must not block the change: the peer's bytes since the last sample are then lost (logged)
    await this.sampler.sample({ interfaces: [iface] }).catch((err: unknown) => this.logSampleFailure(err, 'before a peer leaves'));
  }

  /** Call inside the data-plane lane before IKE SAs end (DELETE /ikev2/online, credentials reloaded, daemon stopped). */
  async beforeSasEnd(): Promise<void> {
    await this.sampler.sample({ interfaces: [] }).catch((err: unknown) => this.logSampleFailure(err, 'before IKE SAs end'));
  }

  /** Call after the peer left: its next appearance starts again at zero. */
  peerLeft(accountId: number): void {
    void this.sampler.peerLeft(accountId);
  }

  /** The first day kept by retention (`YYYY-MM-DD`). */
  firstKeptDay(): string {
    const now = wallClock(this.deps.clock.now().getTime(), this.deps.timeZone);
    const history = Math.max(0, this.deps.config().traffic_statistics_history);
    const index = Math.max(0, now.year * 12 + (now.month - 1) - history);
    return formatDay(Math.floor(index / 12), (index % 12) + 1, 1);
  }

  /** Deletes rows older than the retention; returns how many. */
  prune(): number {
    const removed = this.deps.repo.pruneBefore(this.firstKeptDay());
    if (removed) this.deps.logger?.info({ removed }, 'traffic statistics pruned');
    return removed;
  }

  /**
   * GET /account/<name>/traffic_statistics/<YEAR>/<MONTH>: one entry per day of the month, zero where nothing was
   * counted; the current month up to today, a future month none. Checks: account, month (1-12, digits), year
   * (four digits, {@link YEAR_RANGE}).
   */
  month(name: string, yearText: string, monthText: string): TrafficStatisticsEntry[] {
    const accountId = this.deps.accountId(name);
    if (!/^\d{1,2}$/.test(monthText) || Number(monthText) < 1 || Number(monthText) > 12) throw new ApiError(E.WRONG_MONTH);
    const year = Number(yearText);
    if (!/^\d{4}$/.test(yearText) || year < YEAR_RANGE.min || year > YEAR_RANGE.max) throw new ApiError(E.WRONG_YEAR);
    const month = Number(monthText);
    const today = wallClock(this.deps.clock.now().getTime(), this.deps.timeZone);
    const last =
      year * 12 + month > today.year * 12 + today.month ? 0
      : year === today.year && month === today.month ? today.day
      : daysInMonth(year, month);
    if (last === 0) return [];
    const stored = new Map(this.deps.repo.days(accountId, formatDay(year, month, 1), formatDay(year, month, last)).map((r) => [r.day, r]));
    const out: TrafficStatisticsEntry[] = [];
    for (let day = 1; day <= last; day++) {
      const date = formatDay(year, month, day);
      const row = stored.get(date);
      out.push({ account: name, date, traffic_download: row?.traffic_download ?? 0, traffic_upload: row?.traffic_upload ?? 0 });
    }
    return out;
  }

  private logSampleFailure(err: unknown, when: string): void {
    this.deps.logger?.error({ err }, `traffic sample ${when} failed; the change goes on`);
  }
}
