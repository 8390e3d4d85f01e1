// Traffic statistics: the month query behind GET /account/<name>/traffic_statistics, retention, sampler and scheduler.
import type { Logger } from 'pino';
import type { Driver } from '../../dataplane/wireguard/driver.ts';
import type { Ipsec } from '../../dataplane/ipsec/ipsec.ts';
import { ApiError, E, OWN } from '../../http/errors.ts';
import type { TrafficStatisticsEntry } from '../../../shared/wire/statistics.ts';
import type { Clock } from '../../../shared/clock.ts';
import type { TrafficStatisticsRepository } from '../../store/repositories/traffic-statistics.ts';
import type { WorkerEngineOptions } from './sample-worker-client.ts';
import { TrafficSampler, type SampleResult } from './sampler.ts';
import { StatisticsScheduler } from './scheduler.ts';
import { daysInMonth, formatDay, wallClock } from './zoned-days.ts';

/** Years the month query accepts; others answer `Wrong year setting`. */
const YEAR_RANGE = { min: 1970, max: 2100 } as const;

/** Days GET /traffic_statistics answers at most in one range. */
const RANGE_MAX_DAYS = 62;

/** Collaborators of the statistics service. */
export interface TrafficStatisticsDeps {
  repo: TrafficStatisticsRepository;
  /**
   * The WireGuard seam (see TrafficSamplerDeps.wireguard: on `kind` linux the sample worker reads the counters);
   * `applyPeers` removes the parked peers a sample counted.
   */
  wireguard: Pick<Driver, 'transfers' | 'applyPeers'> & Partial<Pick<Driver, 'kind'>>;
  /** What the settling of parked peers needs of the accounts (see {@link TrafficStatisticsService.sampleAndSettle}). */
  parkedPeers?: {
    /** The account holding a public key: its id, status and server. */
    account(publicKey: string): { id: number; status: string; server_id: number } | undefined;
    /** Keeps a suspended account's last endpoint, so its peer resumes at once when it comes back. */
    rememberEndpoint(accountId: number, endpoint: string): void;
  };
  /** The sample worker's deadlines and entry (tests); see WorkerEngineOptions. */
  worker?: Omit<WorkerEngineOptions, 'uapiDir'>;
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
      timeZone: deps.timeZone, worker: deps.worker, logger: deps.logger,
    });
    this.scheduler = new StatisticsScheduler({
      clock: deps.clock,
      timeZone: deps.timeZone,
      frequencyMinutes: () => deps.config().traffic_statistics_frequency,
      sample: () => deps.serial(async () => {
        const started = performance.now();
        try {
          return await this.sampleAndSettle();
        } finally {
          deps.onSample?.((performance.now() - started) / 1000);
        }
      }),
      prune: () => this.prune(),
      logger: deps.logger,
    });
  }

  /**
   * Call inside the data-plane lane: one sample (every interface, or `opts.interfaces`), then the parked peers it
   * counted are settled — a suspended account's peer is parked (no allowed IPs: it passes no traffic, its counters
   * stay) instead of removed, so a suspend reads nothing; the next sample counts its last bytes like every other
   * peer's, and then it is removed here (one `wg set` per interface), its endpoint kept for its return and its
   * baseline dropped. A parked peer of a deleted account or of another server goes too; one whose account is enabled
   * again is left alone (its enable gave it its addresses back). A peer whose removal fails stays parked for the next
   * sample. This is the scheduler's sample, the one before every reconcile, and the last one at shutdown.
   */
  async sampleAndSettle(opts: { interfaces?: string[] } = {}): Promise<SampleResult> {
    const result = await this.sampler.sample(opts);
    await this.settle(result);
    return result;
  }

  /**
   * Call inside the data-plane lane before an enabled account's peer leaves (disable, delete). WireGuard needs no
   * read: a suspended peer is parked until the next sample (see {@link sampleAndSettle}), a deleted account's
   * statistics go with it. On a server with IKEv2 the live IKE SAs are sampled, since the change ends the account's SA.
   */
  async beforePeerLeaves(server: { ikev2: number }): Promise<void> {
    if (server.ikev2 === 1) await this.beforeSasEnd();
  }

  /** Call inside the data-plane lane before IKE SAs end (DELETE /ikev2/online, credentials reloaded, daemon stopped). */
  async beforeSasEnd(): Promise<void> {
    await this.sampler.sample({ interfaces: [] }).catch((err: unknown) => this.logSampleFailure(err, 'before IKE SAs end'));
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

  /**
   * GET /traffic_statistics?from=&to=: every account's stored days from `from` to `to` (default today), days without
   * traffic left out, ordered by account and day: one request reads a whole panel's usage (a platform's cap pass).
   * The range is at most {@link RANGE_MAX_DAYS} days; anything else answers `Wrong date range ...`.
   */
  range(fromText: string | undefined, toText: string | undefined): TrafficStatisticsEntry[] {
    const now = wallClock(this.deps.clock.now().getTime(), this.deps.timeZone);
    const to = toText ?? formatDay(now.year, now.month, now.day);
    const valid = (text: string | undefined): text is string => typeof text === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`));
    if (!valid(fromText) || !valid(to) || fromText > to) throw new ApiError(OWN.WRONG_DATE_RANGE);
    if ((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${fromText}T00:00:00Z`)) / 86_400_000 >= RANGE_MAX_DAYS) throw new ApiError(OWN.WRONG_DATE_RANGE);
    return this.deps.repo.allDays(fromText, to).map((r) => ({ account: r.account, date: r.day, traffic_download: r.traffic_download, traffic_upload: r.traffic_upload }));
  }

  /** Removes the parked peers `result` counted (see {@link sampleAndSettle}). */
  private async settle(result: SampleResult): Promise<void> {
    if (result.parked.length === 0) return;
    const { wireguard, parkedPeers, repo, logger } = this.deps;
    const serverOf = new Map(repo.servers().map(([id, iface]) => [iface, id]));
    const byIface = new Map<string, { keys: string[]; ids: number[] }>();
    for (const [iface, key, endpoint] of result.parked) {
      const account = parkedPeers?.account(key);
      const own = account !== undefined && account.server_id === serverOf.get(iface);
      if (own && account.status === 'enable') continue;
      let entry = byIface.get(iface);
      if (!entry) byIface.set(iface, (entry = { keys: [], ids: [] }));
      entry.keys.push(key);
      if (!own) continue;
      entry.ids.push(account.id);
      if (endpoint) parkedPeers!.rememberEndpoint(account.id, endpoint);
    }
    const left: number[] = [];
    for (const [iface, { keys, ids }] of byIface) {
      try {
        await wireguard.applyPeers(iface, { upsert: [], remove: keys });
        left.push(...ids);
      } catch (err) {
        logger?.warn({ err, iface }, 'parked peers not removed; the next sample tries again');
      }
    }
    await this.sampler.peerLeft(left);
  }

  private logSampleFailure(err: unknown, when: string): void {
    this.deps.logger?.error({ err }, `traffic sample ${when} failed; the change goes on`);
  }
}
