// The traffic sampler: one `wg show dump` per interface, per-peer deltas, one SQLite transaction per sample.
import type { Logger } from 'pino';
import type { Driver } from '../../dataplane/driver.ts';
import type { Clock } from '../../shared/clock.ts';
import type { SampleRow, SampleWrite, TrafficStatisticsRepository } from '../../store/repositories/traffic-statistics.ts';
import { peerDelta, type Baseline } from './deltas.ts';
import { dayStart, formatDay, wallClock } from './zoned-days.ts';

/** Collaborators of the sampler. */
export interface TrafficSamplerDeps {
  repo: TrafficStatisticsRepository;
  /** The WireGuard seam; only `inspect` (one dump per interface) is used. */
  wireguard: Pick<Driver, 'inspect'>;
  clock: Clock;
  /** The panel's IANA time zone (the one GET /system/info reports); days are local days of it. */
  timeZone: string;
  logger?: Logger;
}

/** What one sample did. */
export interface SampleResult {
  at: Date;
  /** Interfaces dumped. */
  interfaces: number;
  /** Peers found in the dumps and matched to accounts. */
  peers: number;
  /** Peers whose counters went backwards (a new baseline). */
  resets: number;
  /** Bytes added: download (sent to peers) and upload (received from peers). */
  download: number;
  upload: number;
  /** Wall time of the sample in ms (dumps + deltas + write). */
  durationMs: number;
}

/**
 * Reads the transfer counters of every server interface (or only `interfaces`), turns them into per-peer deltas
 * (see `peerDelta`) and adds them to one row per account and local day, all in one transaction. Samples never
 * overlap (a second call waits for the first). An interface whose dump fails is left out of that sample (its
 * baselines kept); a missing interface drops its peers' baselines (a re-created one starts at zero).
 */
export class TrafficSampler {
  private lane: Promise<unknown> = Promise.resolve();
  private last: SampleResult | null = null;

  constructor(private readonly deps: TrafficSamplerDeps) {}

  /** The last finished sample, or null. */
  lastSample(): SampleResult | null {
    return this.last;
  }

  /** Takes one sample (of `opts.interfaces` only, when given). */
  sample(opts: { interfaces?: string[] } = {}): Promise<SampleResult> {
    const run = this.lane.then(() => this.run(opts.interfaces));
    this.lane = run.catch(() => undefined);
    return run;
  }

  /** Forgets one account's baseline: its peer left the interface, so when it comes back it starts at zero. */
  peerLeft(accountId: number): void {
    this.deps.repo.dropBaseline(accountId);
  }

  private async run(only?: string[]): Promise<SampleResult> {
    const { repo, wireguard, clock, timeZone, logger } = this.deps;
    const started = performance.now();
    const byInterface = new Map<string, SampleRow[]>();
    for (const row of repo.sampleRows()) {
      if (only && !only.includes(row[2])) continue;
      let list = byInterface.get(row[2]);
      if (!list) byInterface.set(row[2], (list = []));
      list.push(row);
    }
    const dumps = new Map<string, Map<string, { rx: number; tx: number }> | null>();
    for (const iface of byInterface.keys()) {
      try {
        const state = await wireguard.inspect(iface);
        dumps.set(iface, state ? new Map(state.peers.map((p) => [p.publicKey, { rx: p.transferRx, tx: p.transferTx }])) : null);
      } catch (err) {
        logger?.warn({ err, iface }, 'traffic sample: dump failed, interface left out');
      }
    }
    const at = clock.now().getTime();
    const w = wallClock(at, timeZone);
    const today = { key: formatDay(w.year, w.month, w.day), start: dayStart(w.year, w.month, w.day, timeZone) };
    const write: SampleWrite = { traffic: [], baselines: [], absent: [] };
    const result: SampleResult = { at: new Date(at), interfaces: dumps.size, peers: 0, resets: 0, download: 0, upload: 0, durationMs: 0 };
    for (const [iface, peers] of dumps) {
      for (const [id, publicKey, , baseKey, rx, tx, sampledAt] of byInterface.get(iface)!) {
        const before: Baseline | null = baseKey === null ? null : { publicKey: baseKey, rx, tx, sampledAt };
        const live = peers?.get(publicKey);
        if (!live) {
          if (before) write.absent.push(id);
          continue;
        }
        result.peers++;
        const delta = peerDelta(before, { publicKey, rx: live.rx, tx: live.tx }, at, timeZone, today);
        if (delta.reset) result.resets++;
        if (delta.days.length) {
          write.traffic.push({ accountId: id, days: delta.days });
          for (const d of delta.days) {
            result.download += d.download;
            result.upload += d.upload;
          }
        }
        // Always stored, also unchanged: `sampledAt` bounds the next delta's time span (its split over days).
        write.baselines.push({ accountId: id, baseline: delta.baseline });
      }
    }
    repo.write(write);
    result.durationMs = performance.now() - started;
    this.last = result;
    return result;
  }
}
