// The traffic sampler: one dump per interface and the live IKE SAs, handed to the sample engine (a worker thread).
import type { Logger } from 'pino';
import type { Driver } from '../../dataplane/wireguard/driver.ts';
import type { Ipsec } from '../../dataplane/ipsec/ipsec.ts';
import type { Clock } from '../../../shared/clock.ts';
import type { TrafficStatisticsRepository } from '../../store/repositories/traffic-statistics.ts';
import type { SampleInput, SampleOutcome, SaCounters } from './sample-engine.ts';
import {
  inThreadEngine, SampleWorkerError, workerEngine, type EngineHandle, type HeldReads, type WorkerEngineOptions,
} from './sample-worker-client.ts';
import type { UnresolvedRead } from './worker-counters.ts';

/** How long samples skip a worker that failed (see WorkerEngineOptions.restMs). */
const WORKER_REST_MS = 15 * 60_000;

/** Collaborators of the sampler. */
export interface TrafficSamplerDeps {
  repo: TrafficStatisticsRepository;
  /**
   * The WireGuard seam: `transfers` (one dump per interface) for what the worker does not read itself; `kind` says
   * whether the worker may read the real counters (linux) or not (the simulated twin, or a stub without it).
   */
  wireguard: Pick<Driver, 'transfers'> & Partial<Pick<Driver, 'kind'>>;
  /** The IKEv2 seam (optional); only `listSas` is used. */
  ipsec?: Pick<Ipsec, 'listSas'>;
  /** Subscribes to account writes (the accounts repository's `onRowsChanged`): the engine's key index follows them. */
  onAccountsChanged?(listener: () => void): void;
  clock: Clock;
  /** The panel's IANA time zone (the one GET /system/info reports); days are local days of it. */
  timeZone: string;
  /** Run the engine on this thread even for a file store (default: a worker thread for a file store). */
  inThread?: boolean;
  /**
   * Let the engine's worker read the WireGuard counters itself (UAPI socket, else `wg show <if> dump`), so the API's
   * thread neither forks nor parses; default: on for a worker engine over the linux driver. Off, or for an interface
   * the worker cannot read, `wireguard.transfers` reads on this thread.
   */
  readInWorker?: boolean;
  /** Directory of wireguard-go's UAPI sockets the worker reads (default `/var/run/wireguard`; the bench's differs). */
  uapiDir?: string;
  /** The worker's deadlines and entry (tests start one that stalls or dies); see WorkerEngineOptions. */
  worker?: Omit<WorkerEngineOptions, 'uapiDir'>;
  logger?: Logger;
}

/** What one sample did. */
export interface SampleResult {
  at: Date;
  /** Interfaces dumped. */
  interfaces: number;
  /** Peers found in the dumps and matched to accounts. */
  peers: number;
  /** IKE SAs matched to accounts (0 without the IKEv2 seam). */
  ikeSas: number;
  /** Peers or SAs whose counters went backwards (a new baseline). */
  resets: number;
  /** Bytes added: download (sent to peers) and upload (received from peers). */
  download: number;
  upload: number;
  /** Wall time of the sample in ms (dumps + deltas + write). */
  durationMs: number;
  /** The sample engine's part of it in ms (deltas, baselines, the write; in the worker thread). */
  engineMs: number;
  /** The parked peers it counted (see SampleOutcome.parked). */
  parked: SampleOutcome['parked'];
  /** True when the worker failed and this sample was taken on the caller's thread instead. */
  fallback: boolean;
}

/**
 * Reads the transfer counters of every server interface (or only `interfaces`) with one `wg show <if> dump` each,
 * and the live IKE SAs (download = `bytes-out` of the server, upload = `bytes-in`), and has the sample engine turn
 * them into deltas against the previous sample's baselines and add them to one row per account and local day —
 * only for accounts whose counters moved — in one IMMEDIATE transaction with the new baselines (one packed blob per
 * source), so a kill -9 at any point neither loses nor double-counts.
 *
 * Rules (the pure form is `peerDelta` in deltas.ts): growth is traffic; counters that went backwards (peer re-added,
 * daemon restarted, interface re-created) or a baseline of another account count the current values whole (a new
 * baseline); a key without a baseline counts whole (it started at zero). A missing interface drops its baselines; an
 * interface whose dump fails is left out (baselines kept). An IKE SA (keyed by charon's unique id) continues its
 * baseline only when it is older than the time since that baseline, so ids charon reuses after a restart start anew;
 * the bytes of an SA that ended between two samples after the last one are lost unless a sample ran before it ended
 * (the panel samples before it terminates SAs, disables or deletes accounts and reloads).
 *
 * The engine (deltas, baselines in memory, the SQLite write) runs in a worker thread with its own connection, so a
 * sample of 50,000 peers does not stall the API; on the linux driver the worker also reads the counters (a
 * wireguard-go interface over its UAPI socket, a kernel one with `wg` spawned from the worker) and the driver is
 * asked only for the interfaces it could not read. An in-memory store keeps the engine on this thread and reads
 * through the driver. Samples never overlap.
 *
 * When the worker fails (it does not start or answer in time, exits or throws: a SampleWorkerError, raised only once
 * its thread has ended), the same sample is taken on this thread instead — every interface read through the driver,
 * the deltas against the baselines as the store holds them — so the counters of a peer about to be removed are
 * never dropped for want of a worker. The samples of the next 15 minutes (`worker.restMs`) are taken here too; then a
 * fresh worker is tried again.
 */
export class TrafficSampler {
  private lane: Promise<unknown> = Promise.resolve();
  private last: SampleResult | null = null;
  private readonly engine: EngineHandle;
  private readonly readInWorker: boolean;
  /** After a worker failed, samples are taken on this thread until then (performance.now() ms), not waited for again. */
  private workerRestsUntil = 0;

  constructor(private readonly deps: TrafficSamplerDeps) {
    const file = deps.repo.file;
    this.engine = file && !deps.inThread
      ? workerEngine(file, deps.timeZone, { ...deps.worker, uapiDir: deps.uapiDir })
      : inThreadEngine(deps.repo, deps.timeZone);
    this.readInWorker = this.engine.read !== undefined && (deps.readInWorker ?? deps.wireguard.kind === 'linux');
    deps.onAccountsChanged?.(() => this.engine.accountsChanged());
  }

  /** The last finished sample, or null. */
  lastSample(): SampleResult | null {
    return this.last;
  }

  /** Takes one sample (of `opts.interfaces` only, when given; the IKE SAs always). */
  sample(opts: { interfaces?: string[] } = {}): Promise<SampleResult> {
    return this.queue(() => this.run(opts.interfaces));
  }

  /**
   * Forgets these accounts' WireGuard baselines: their peers left the interface, so when they come back (even before
   * the next sample, with counters above the old ones) they start at zero. Persisted at once (on this thread when the
   * worker fails); a failure is logged.
   */
  peerLeft(accountIds: number[]): Promise<void> {
    if (accountIds.length === 0) return Promise.resolve();
    return this.queue(() => this.withEngine((engine) => engine.peerLeft(accountIds)))
      .catch((err: unknown) => this.deps.logger?.error({ err }, 'traffic baselines of leaving peers not dropped'));
  }

  /** Stops the engine's worker (after the samples queued so far). */
  close(): Promise<void> {
    return this.queue(() => this.engine.close());
  }

  private queue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.lane.then(task);
    this.lane = run.catch(() => undefined);
    return run;
  }

  private async run(only?: string[]): Promise<SampleResult> {
    const started = performance.now();
    const targets = this.deps.repo.servers().filter(([, iface]) => !only || only.includes(iface));
    const result = await this.withEngine(async (engine, fallback) => ({
      ...(await this.take(engine, !fallback && this.readInWorker, targets, started)), fallback,
    }));
    this.last = result;
    return result;
  }

  /**
   * Runs `task` on the engine (the worker's, unless it rests after a failure); when the worker fails, or while it
   * rests, on a fresh engine on this thread (`fallback`), whose baselines are the store's whatever a dead worker held.
   */
  private async withEngine<T>(task: (engine: EngineHandle, fallback: boolean) => Promise<T>): Promise<T> {
    if (performance.now() >= this.workerRestsUntil) {
      try {
        return await task(this.engine, false);
      } catch (err) {
        if (!(err instanceof SampleWorkerError)) throw err;
        const rest = this.deps.worker?.restMs ?? WORKER_REST_MS;
        this.deps.logger?.error({ err, restMs: rest }, 'traffic sample worker failed: the engine runs on the panel thread meanwhile');
        this.workerRestsUntil = performance.now() + rest;
      }
    }
    return task(inThreadEngine(this.deps.repo, this.deps.timeZone), true);
  }

  /** One sample through `engine`; the worker reads what it can first when `workerReads`. */
  private async take(engine: EngineHandle, workerReads: boolean, targets: Array<[number, string]>, started: number): Promise<Omit<SampleResult, 'fallback'>> {
    const { wireguard, ipsec, clock, logger } = this.deps;
    const input: SampleInput = { at: 0, dumps: [], sas: null };
    const { held, rest } = workerReads ? await this.readByWorker(engine, targets) : { held: [], rest: targets };
    for (const [serverId, iface] of rest) {
      try {
        input.dumps.push([serverId, iface, await wireguard.transfers(iface)]);
      } catch (err) {
        logger?.warn({ err, iface }, 'traffic sample: dump failed, interface left out');
      }
    }
    if (ipsec) {
      try {
        input.sas = (await ipsec.listSas()).map((sa): SaCounters => ({
          uniqueId: sa.uniqueId, username: sa.username, establishedSeconds: sa.establishedSeconds, bytesIn: sa.bytesIn, bytesOut: sa.bytesOut,
        }));
      } catch (err) {
        logger?.warn({ err }, 'traffic sample: IKE SAs not read, left out');
      }
    }
    input.at = clock.now().getTime();
    const outcome = await engine.sample(input, held);
    const interfaces = input.dumps.length + held.length;
    return { at: new Date(input.at), interfaces, ...outcome, durationMs: performance.now() - started };
  }

  /** Has the worker read what it can of `targets`; the rest is the driver's. A failed worker fails the sample. */
  private async readByWorker(engine: EngineHandle, targets: Array<[number, string]>): Promise<{ held: HeldReads; rest: Array<[number, string]> }> {
    if (targets.length === 0) return { held: [], rest: targets };
    let unresolved: UnresolvedRead[];
    try {
      unresolved = await engine.read!(targets.map(([, iface]) => iface));
    } catch (err) {
      if (err instanceof SampleWorkerError) throw err;
      this.deps.logger?.warn({ err }, 'traffic sample: the worker read no counters, the driver reads them');
      return { held: [], rest: targets };
    }
    for (const { iface, error } of unresolved) {
      if (error) this.deps.logger?.warn({ iface, error }, 'traffic sample: worker read failed, the driver reads the interface');
    }
    const left = new Set(unresolved.map((u) => u.iface));
    return { held: targets.filter(([, iface]) => !left.has(iface)), rest: targets.filter(([, iface]) => left.has(iface)) };
  }
}
