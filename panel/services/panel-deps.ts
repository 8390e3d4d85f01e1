// The panel's side effects and settings (PanelDeps) and the services the routes use (PanelServices).
import { type Clock } from '../../shared/clock.ts';
import type { KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import type { Dataplane } from '../dataplane/dataplane.ts';
import type { DefaultRouteProbe } from '../dataplane/default-route.ts';
import type { SecretBox } from '../../shared/secret-box.ts';
import type { Db } from '../store/db.ts';
import type { SettingsRepository } from '../store/repositories/settings.ts';
import type { AccessHashService } from './access-hashes.ts';
import type { AccountConfigService } from './account-config.ts';
import type { AccountService } from './accounts.ts';
import type { BackupConfigService } from './backups/backup-config.ts';
import type { BackupScheduler } from './backups/backup-scheduler.ts';
import type { BackupService } from './backups/backup-service.ts';
import type { ReaderLimits } from './backups/archive-format.ts';
import type { FtpUploader } from './backups/ftp-upload.ts';
import type { DaemonWatchdog } from './daemon-watchdog.ts';
import type { DataplaneSync } from './dataplane-sync.ts';
import type { DnsService } from './dns.ts';
import type { FirewallService } from './firewall.ts';
import type { Ikev2Services } from './ikev2/ikev2-bundle.ts';
import type { LicenseService } from './license.ts';
import type { PanelMetrics } from './metrics.ts';
import type { NetworkViewService } from './network-views.ts';
import type { OnlineService } from './online.ts';
import type { OtlService } from './otl/otl-service.ts';
import type { PortForwardService } from './port-forwards.ts';
import type { ReconcilerStatus } from './reconciler-status.ts';
import type { ServerBandwidthService } from './server-bandwidth.ts';
import type { ServerService } from './servers.ts';
import type { WorkerEngineOptions } from './statistics/sample-worker-client.ts';
import type { TrafficStatisticsService } from './statistics/traffic-statistics.ts';
import type { SystemConfigService } from './system-config.ts';
import type { SystemService } from './system.ts';
import type { FlowSource } from '../dataplane/traffic-log/flow-source.ts';
import type { ShipperOptions } from './traffic-logging/shipper.ts';
import type { TrafficLoggingService } from './traffic-logging/traffic-logging-service.ts';

/** Side effects and settings the panel is built from; `buildApp` never opens files or ports itself. */
export interface PanelDeps {
  /** Open database (panel/store/db.ts `openDatabase`), migrations applied. */
  db: Db;
  /** The data-plane bundle (`createDataplane`: linux or simulated); written only through `DataplaneSync`. */
  dataplane: Dataplane;
  /** Data directory (secret key file, later backups and one-time-link data). */
  dataDir: string;
  /** Seals secrets at rest. */
  secretBox: SecretBox;
  /** Clock (shared/clock.ts); defaults to the wall clock, `systemClock`. */
  clock?: Clock;
  /** pino logger; defaults to none. */
  logger?: Logger;
  /**
   * Public base URL of the panel (one-time links are `{baseUrl}/otl/<key>`). Read `deps.baseUrl` when a link is
   * made, not at build time: when listening on port 0 the server fills it in after `listen`.
   */
  baseUrl: string;
  /** Proxy addresses whose X-Forwarded-For is honoured; none by default. */
  trustProxy?: string[];
  /** Vendor Ed25519 public key (PEM text, KeyObject or WebCrypto key); null → only the free tier. */
  licensePublicKey?: KeyObject | CryptoKey | string | null;
  /** Panel version (package.json), shown in GET /system/status. */
  version: string;
  /** Outgoing interface for NAT of peer traffic (`--external-interface`), null = any. */
  externalInterface?: string | null;
  /** Default-route probe for new servers' external_ip (default: fixed when simulated, `ip route` when linux). */
  routeProbe?: DefaultRouteProbe;
  /**
   * The address the panel listens on (`--listen` host); server and peer subnets may not cover it. The host's
   * other networks come from `driver.hostNetworks()`.
   */
  listenAddress?: string | null;
  /**
   * GET /metrics: a bearer token (`Authorization: Bearer <token>`) that also grants it, besides an access hash;
   * null/absent = access hash only (`--metrics-token`).
   */
  metricsToken?: string | null;
  /** GET /metrics adds per-peer byte series (`--metrics-per-peer`); off by default. */
  metricsPerPeer?: boolean;
  /** The panel's API TCP port (kept reachable by the firewall's `system_CONTROLPANEL`); null/absent when unknown. */
  apiPort?: number | null;
  /** Traffic logging's kernel source (default: ulogd2 reading NFLOG on linux, an in-memory twin when simulated) and sender tuning. */
  trafficLogging?: { source?: FlowSource; shipper?: ShipperOptions };
  /** IANA time zone of the traffic statistics' days; default the process's (what GET /system/info reports). */
  timeZone?: string;
  /** The traffic sample worker's deadlines and entry (tests start one that stalls or dies); defaults otherwise. */
  statisticsWorker?: Omit<WorkerEngineOptions, 'uapiDir'>;
  /** Backups: the FTP uploader (default basic-ftp) and reader bounds (tests lower them). */
  backups?: { ftp?: FtpUploader; limits?: ReaderLimits };
}

/** Every service the routes use. */
export interface PanelServices {
  clock: Clock;
  settings: SettingsRepository;
  accessHashes: AccessHashService;
  license: LicenseService;
  systemConfig: SystemConfigService;
  reconciler: ReconcilerStatus;
  system: SystemService;
  servers: ServerService;
  accounts: AccountService;
  accountConfig: AccountConfigService;
  online: OnlineService;
  dataplaneSync: DataplaneSync;
  firewall: FirewallService;
  portForwards: PortForwardService;
  networkViews: NetworkViewService;
  serverBandwidth: ServerBandwidthService;
  trafficLogging: TrafficLoggingService;
  statistics: TrafficStatisticsService;
  /** The Prometheus registry (GET /metrics) with typed hooks for other services. */
  metrics: PanelMetrics;
  /** One-time links: the links, the page settings and the public page's logic. */
  otl: OtlService;
  /** The DNS resolver (GET/PUT /dns); `dnsAddressesFor(server)` names the DNS handed to that server's peers. */
  dns: DnsService;
  /** Restarts a crashed unbound or charon (backoff); started and stopped with the server. */
  watchdog: DaemonWatchdog;
  /** IKEv2: PKI, settings, sessions, profiles and the sync that drives the IPsec seam. */
  ikev2: Ikev2Services;
  /** Backups (create, list, restore), their schedule config and the croner scheduler (server.ts starts it). */
  backups: BackupService;
  backupConfig: BackupConfigService;
  backupScheduler: BackupScheduler;
}
