// The panel's Prometheus registry (prom-client): typed hooks other services fill, data-plane gauges read at scrape time.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Driver } from '../dataplane/wireguard/driver.ts';

/** Upper bounds (seconds) of the handshake-age buckets; peers that never shook hands are `never`. */
const HANDSHAKE_AGE_BUCKETS = [120, 300, 900, 3600, 86_400] as const;

/** What the scrape reads: servers and their account counts per state. */
export interface MetricsSource {
  /** Every server: its name and interface. */
  servers(): Array<{ name: string; interface_name: string }>;
  /** Account count per server name and status (`enable`/`disable`). */
  accountsByState(): Array<{ wg_name: string; status: string; count: number }>;
  /** Public key → account name (only read with `perPeer`). */
  accountNames?(): Map<string, string>;
  /** The live interface (one `wg show dump`). */
  driver: Pick<Driver, 'inspect'>;
  /** `wireguard_handshake_uptime` in seconds (what counts as online). */
  handshakeUptime(): number;
  /** Unix seconds now. */
  now(): number;
  /** Traffic-logging sinks: current backlog and records dropped since start (read when scraped). */
  loggingStats?(): Array<{ sink: string; backlog: number; dropped: number }>;
  /**
   * The daemons the panel runs that are wanted now (unbound while DNS is on, charon while IKEv2 is on, ulogd while
   * traffic logging is on): whether each runs, and how often it was restarted after dying since the panel started.
   */
  daemons?(): Promise<Array<{ daemon: string; up: boolean; restarts: number }>>;
}

/** Options of the registry. */
export interface PanelMetricsOptions {
  /** Adds per-peer byte series labelled with the account name (50,000 peers = 100,000 series; an operator's choice). */
  perPeer?: boolean;
}

/**
 * The panel's metrics. Services record through the typed methods (never prom-client directly), so the names and
 * labels live here once: `observeApiRequest` (access hook), `observeReconcile` (reconciler), `observeSample`
 * (statistics sampler), `setLoggingBacklog` / `addLoggingDropped` (traffic-logging sinks). Peer counts, bytes and
 * handshake ages are computed when scraped, one `inspect` (dump) per interface. `registry.metrics()` is the text.
 */
export class PanelMetrics {
  readonly registry = new Registry();
  private readonly apiDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly reconcileDuration: Histogram<'result'>;
  private readonly sampleDuration: Histogram;
  private readonly loggingBacklog: Gauge<'sink'>;
  private readonly loggingDropped: Counter<'sink'>;
  private source: MetricsSource | null = null;
  /** Dropped records per sink already counted (the sinks report totals; the counter takes the growth). */
  private readonly droppedSeen = new Map<string, number>();

  constructor(private readonly options: PanelMetricsOptions = {}) {
    const registers = [this.registry];
    this.apiDuration = new Histogram({
      name: 'vpnhost_api_request_duration_seconds', help: 'API request durations by method, route pattern and HTTP status.',
      labelNames: ['method', 'route', 'status'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'vpnhost_reconcile_duration_seconds', help: 'Full reconciles of the data plane with the store.',
      labelNames: ['result'], buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers,
    });
    this.sampleDuration = new Histogram({
      name: 'vpnhost_statistics_sample_duration_seconds', help: 'Traffic statistics samples (dump, deltas, SQLite write).',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers,
    });
    this.loggingBacklog = new Gauge({
      name: 'vpnhost_traffic_logging_backlog', help: 'Traffic-log records waiting to be sent, per sink.', labelNames: ['sink'], registers,
    });
    this.loggingDropped = new Counter({
      name: 'vpnhost_traffic_logging_dropped_total', help: 'Traffic-log records dropped because a backlog was full, per sink.',
      labelNames: ['sink'], registers,
    });
    this.live = {
      peers: new Gauge({
        name: 'vpnhost_peers', help: 'Accounts per server and state (enable, disable) and peers online (handshake within wireguard_handshake_uptime).',
        labelNames: ['server', 'state'], registers,
      }),
      bytes: new Gauge({ name: 'vpnhost_server_bytes', help: 'Bytes through each server interface (live peers): rx = received from peers, tx = sent to peers.', labelNames: ['server', 'direction'], registers }),
      ages: new Gauge({ name: 'vpnhost_peers_handshake_age', help: `Peers per server by age of the latest handshake: le_<seconds> (${HANDSHAKE_AGE_BUCKETS.join(', ')}), older, never.`, labelNames: ['server', 'age'], registers }),
      peerBytes: options.perPeer
        ? new Gauge({ name: 'vpnhost_peer_bytes', help: 'Bytes per peer (account name): rx = received from the peer, tx = sent to it.', labelNames: ['peer', 'server', 'direction'], registers })
        : undefined,
      daemonUp: new Gauge({ name: 'vpnhost_daemon_up', help: 'Wanted daemons of the panel (unbound, charon, ulogd): 1 running, 0 down.', labelNames: ['daemon'], registers }),
      daemonRestarts: new Gauge({
        name: 'vpnhost_daemon_restarts', help: 'Restarts of a daemon after it died, since the panel started (watchdog, ulogd supervision).',
        labelNames: ['daemon'], registers,
      }),
    };
  }

  /** Connects the scrape-time gauges to the store and the data plane (buildServices does it once). */
  attach(source: MetricsSource): void {
    this.source = source;
  }

  /** One API request: method, route pattern (`/api/v1/account/:name`, never the raw URL), status, seconds. */
  observeApiRequest(method: string, route: string, status: number, seconds: number): void {
    this.apiDuration.observe({ method, route, status: String(status) }, seconds);
  }

  /** One full reconcile and whether it succeeded. */
  observeReconcile(seconds: number, ok: boolean): void {
    this.reconcileDuration.observe({ result: ok ? 'ok' : 'error' }, seconds);
  }

  /** One statistics sample (for the sampler). */
  observeSample(seconds: number): void {
    this.sampleDuration.observe(seconds);
  }

  /** Current backlog of a traffic-logging sink (`syslog`, `tsdb`). */
  setLoggingBacklog(sink: string, records: number): void {
    this.loggingBacklog.set({ sink }, records);
  }

  /** Records dropped by a traffic-logging sink whose backlog was full. */
  addLoggingDropped(sink: string, records: number): void {
    this.loggingDropped.inc({ sink }, records);
  }

  /** The exposition text (Prometheus text format 0.0.4); the live gauges are read first. */
  async text(): Promise<string> {
    await this.collectLive();
    return this.registry.metrics();
  }

  /** Content type of {@link text}. */
  get contentType(): string {
    return this.registry.contentType;
  }

  private readonly live: {
    peers: Gauge<'server' | 'state'>;
    bytes: Gauge<'server' | 'direction'>;
    ages: Gauge<'server' | 'age'>;
    peerBytes?: Gauge<'peer' | 'server' | 'direction'>;
    daemonUp: Gauge<'daemon'>;
    daemonRestarts: Gauge<'daemon'>;
  };

  /** Fills peers, bytes and handshake ages from the store and one dump per interface. */
  private async collectLive(): Promise<void> {
    for (const { sink, backlog, dropped } of this.source?.loggingStats?.() ?? []) {
      this.setLoggingBacklog(sink, backlog);
      const seen = this.droppedSeen.get(sink) ?? 0;
      // A restarted pipeline reports from zero again: all of it is new.
      const grown = dropped >= seen ? dropped - seen : dropped;
      if (grown > 0) this.addLoggingDropped(sink, grown);
      this.droppedSeen.set(sink, dropped);
    }
    const { peers, bytes, ages, peerBytes, daemonUp, daemonRestarts } = this.live;
    peers.reset(); bytes.reset(); ages.reset(); peerBytes?.reset(); daemonUp.reset(); daemonRestarts.reset();
    const source = this.source;
    if (!source) return;
    for (const { daemon, up, restarts } of (await source.daemons?.()) ?? []) {
      daemonUp.set({ daemon }, up ? 1 : 0);
      daemonRestarts.set({ daemon }, restarts);
    }
    for (const row of source.accountsByState()) peers.set({ server: row.wg_name, state: row.status }, row.count);
    const now = source.now();
    const uptime = source.handshakeUptime();
    const names = peerBytes ? source.accountNames?.() : undefined;
    for (const server of source.servers()) {
      const live = await source.driver.inspect(server.interface_name);
      let rx = 0, tx = 0, online = 0;
      const counts = new Map<string, number>([...HANDSHAKE_AGE_BUCKETS.map((b) => `le_${b}`), 'older', 'never'].map((k) => [k, 0]));
      for (const peer of live?.peers ?? []) {
        rx += peer.transferRx; tx += peer.transferTx;
        if (peer.allowedIps.length === 0) continue; // parked (a suspended account's, until the next sample): not a session
        const age = now - peer.latestHandshake;
        let key = 'never';
        if (peer.latestHandshake !== 0) {
          const bound = HANDSHAKE_AGE_BUCKETS.find((b) => age <= b);
          key = bound === undefined ? 'older' : `le_${bound}`;
        }
        if (peer.latestHandshake !== 0 && age <= uptime) online++;
        counts.set(key, counts.get(key)! + 1);
        const name = names?.get(peer.publicKey);
        if (peerBytes && name) {
          peerBytes.set({ peer: name, server: server.name, direction: 'rx' }, peer.transferRx);
          peerBytes.set({ peer: name, server: server.name, direction: 'tx' }, peer.transferTx);
        }
      }
      peers.set({ server: server.name, state: 'online' }, online);
      bytes.set({ server: server.name, direction: 'rx' }, rx);
      bytes.set({ server: server.name, direction: 'tx' }, tx);
      for (const [age, n] of counts) ages.set({ server: server.name, age }, n);
    }
  }
}
