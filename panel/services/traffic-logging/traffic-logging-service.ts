// GET/PUT /traffic_logging: the stored config (token sealed), the spec's checks in order, and the running pipeline.
import { type Clock } from '../../../shared/clock.ts';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { ApiError, E } from '../../http/errors.ts';
import {
  TRAFFIC_LOGGING_FLAGS, TSDB_TOKEN_MASK, type TrafficLoggingConfig, type TrafficLoggingUpdate,
} from '../../schemas/traffic-logging.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import type { StoredTrafficLogging, TrafficLoggingRepository } from '../../store/repositories/traffic-logging.ts';
import { FlowPipeline } from './flow-pipeline.ts';
import type { FlowSource, FlowSourceState } from '../../dataplane/traffic-log/flow-source.ts';
import type { ShipperOptions, ShipperStats } from './shipper.ts';

/** What the service is built from. */
export interface TrafficLoggingDeps {
  repo: TrafficLoggingRepository;
  box: SecretBox;
  source: FlowSource;
  clock: Clock;
  logger?: Logger;
  /** Backlog cap, batch size and retry delays of each sender (defaults in Shipper). */
  shipper?: ShipperOptions;
  /**
   * Writes the kernel rules the stored config asks for (the firewall's `VPNHOST-LOG` chains, see
   * LogChainFollower); called after every change, on start and when logging stops. Absent: no rules (unit tests).
   */
  applyRules?: () => Promise<void>;
}

/**
 * Owns the traffic logging config and its pipeline. `update` checks the merged config in the spec's order
 * (`Remote Syslog Server must be filled`, `TSDB agent not installed`, the four `TSDB ... must be filled`, `At least
 * one logging method ...`; only while `enabled`), stores it, restarts the pipeline (ulogd listening first) and
 * then writes the NFLOG rules; `start` runs the stored config (panel boot), `stop` ends the pipeline (shutdown;
 * the rules stay, like every other rule: without a reader the kernel drops what they log).
 */
export class TrafficLoggingService {
  private pipeline: FlowPipeline | null = null;
  /** Pipeline changes run one at a time. */
  private lane: Promise<void> = Promise.resolve();

  constructor(private readonly deps: TrafficLoggingDeps) {}

  /** The config as answered: flags as booleans, the token masked. */
  get(): TrafficLoggingConfig {
    return this.toWire(this.deps.repo.get());
  }

  private toWire(s: StoredTrafficLogging): TrafficLoggingConfig {
    return {
      enabled: s.enabled,
      enabled_tsdb: s.enabled_tsdb,
      enabled_remote_syslog: s.enabled_remote_syslog,
      ...s.flags,
      tsdb_bucket: s.tsdb_bucket,
      tsdb_organization: s.tsdb_organization,
      tsdb_token: s.tsdb_token_sealed ? TSDB_TOKEN_MASK : '',
      tsdb_url: s.tsdb_url,
      remote_syslog_server: s.remote_syslog_server,
      remote_syslog_server_port: s.remote_syslog_server_port,
    };
  }

  /** Applies `change` (formats already validated) after the spec's checks; answers the whole config. */
  async update(change: TrafficLoggingUpdate): Promise<TrafficLoggingConfig> {
    const current = this.deps.repo.get();
    const next: StoredTrafficLogging = { ...current, flags: { ...current.flags } };
    if (change.enabled !== undefined) next.enabled = change.enabled;
    if (change.enabled_tsdb !== undefined) next.enabled_tsdb = change.enabled_tsdb;
    if (change.enabled_remote_syslog !== undefined) next.enabled_remote_syslog = change.enabled_remote_syslog;
    for (const f of TRAFFIC_LOGGING_FLAGS) if (change[f] !== undefined) next.flags[f] = change[f];
    if (change.tsdb_url !== undefined) next.tsdb_url = change.tsdb_url;
    if (change.tsdb_organization !== undefined) next.tsdb_organization = change.tsdb_organization;
    if (change.tsdb_bucket !== undefined) next.tsdb_bucket = change.tsdb_bucket;
    if (change.remote_syslog_server !== undefined) next.remote_syslog_server = change.remote_syslog_server;
    if (change.remote_syslog_server_port !== undefined) next.remote_syslog_server_port = change.remote_syslog_server_port;
    let token = current.tsdb_token_sealed ? this.deps.box.open(current.tsdb_token_sealed) : '';
    if (change.tsdb_token !== undefined && change.tsdb_token !== TSDB_TOKEN_MASK) token = change.tsdb_token;
    next.tsdb_token_sealed = token ? this.deps.box.seal(token) : '';

    if (next.enabled) {
      if (next.enabled_remote_syslog && !next.remote_syslog_server) throw new ApiError(E.TL_SYSLOG_SERVER_MUST_BE_FILLED);
      if (!(await this.deps.source.available())) throw new ApiError(E.TL_TSDB_NOT_INSTALLED);
      if (next.enabled_tsdb) {
        if (!next.tsdb_url) throw new ApiError(E.TL_TSDB_URL_MUST_BE_FILLED);
        if (!token) throw new ApiError(E.TL_TSDB_TOKEN_MUST_BE_FILLED);
        if (!next.tsdb_bucket) throw new ApiError(E.TL_TSDB_BUCKET_MUST_BE_FILLED);
        if (!next.tsdb_organization) throw new ApiError(E.TL_TSDB_ORGANIZATION_MUST_BE_FILLED);
      }
      if (!next.enabled_tsdb && !next.enabled_remote_syslog) throw new ApiError(E.TL_ONE_METHOD);
    }
    this.deps.repo.set(next, this.deps.clock.now());
    await this.apply(next);
    return this.toWire(next);
  }

  /** Runs the stored config (called once the panel listens). */
  start(): Promise<void> {
    return this.apply(this.deps.repo.get());
  }

  /** Stops logging (shutdown); what is waiting gets one last short try. */
  stop(): Promise<void> {
    return this.enqueue(async () => {
      await this.pipeline?.stop();
      this.pipeline = null;
    });
  }

  /** Per-sender backlog, drops and sends of the running pipeline (empty when off). */
  stats(): ShipperStats[] {
    return this.pipeline?.stats() ?? [];
  }

  /** The kernel source's daemon (ulogd): pid, restarts, last failure; null when logging is off. */
  sourceState(): FlowSourceState | null {
    return this.pipeline ? this.deps.source.state() : null;
  }

  /** For GET /system/status: `traffic logging: <why ulogd died>` while logging runs and ulogd is down, else null. */
  async problem(): Promise<string | null> {
    const state = this.sourceState();
    return state && state.pid === null && state.lastError ? `traffic logging: ${state.lastError}` : null;
  }

  /** The running pipeline (tests), or null. */
  get running(): FlowPipeline | null {
    return this.pipeline;
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.lane.then(task);
    this.lane = run.catch(() => undefined);
    return run;
  }

  private apply(config: StoredTrafficLogging): Promise<void> {
    return this.enqueue(async () => {
      await this.pipeline?.stop();
      this.pipeline = null;
      if (!config.enabled || (!config.enabled_remote_syslog && !config.enabled_tsdb)) {
        await this.applyRules();
        return;
      }
      const token = config.tsdb_token_sealed ? this.deps.box.open(config.tsdb_token_sealed) : '';
      const logger = this.deps.logger;
      const pipeline = new FlowPipeline({
        source: this.deps.source,
        owners: () => this.deps.repo.flowOwners(),
        flags: config.flags,
        syslog: config.enabled_remote_syslog && config.remote_syslog_server
          ? { host: config.remote_syslog_server, port: config.remote_syslog_server_port } : null,
        tsdb: config.enabled_tsdb && config.tsdb_url && token
          ? { url: config.tsdb_url, org: config.tsdb_organization, bucket: config.tsdb_bucket, token } : null,
        hostname: hostname(),
        shipper: this.deps.shipper,
        // Errors name the sender and the failure only (never a record or the token).
        onError: (what, err) => logger?.warn({ sink: what, reason: err instanceof Error ? err.message : String(err) }, what === 'source' ? 'traffic logging: source failed' : 'traffic logging: send failed'),
      });
      pipeline.start();
      this.pipeline = pipeline;
      await this.applyRules();
    });
  }

  /** Kernel rules after the pipeline changed; a failure is logged (the next reconcile writes them again). */
  private async applyRules(): Promise<void> {
    await this.deps.applyRules?.().catch((err: unknown) => {
      this.deps.logger?.error({ reason: err instanceof Error ? err.message : String(err) }, 'traffic logging: writing the NFLOG rules failed');
    });
  }
}
