// Builds every panel service from the injected side effects (database, data plane, clock, keys) in one place.
import type { KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import type { Dataplane } from '../dataplane/dataplane.ts';
import type { SecretBox } from '../shared/secret-box.ts';
import type { Db } from '../store/db.ts';
import { fixedRouteProbe, LinuxDefaultRouteProbe, type DefaultRouteProbe } from '../dataplane/default-route.ts';
import { ExecaRunner } from '../dataplane/linux/runner.ts';
import { ApiError, E } from '../http/errors.ts';
import { AccountsRepository } from '../store/repositories/accounts.ts';
import { ServersRepository } from '../store/repositories/servers.ts';
import { AccountConfigService } from './account-config.ts';
import { DnsRepository } from '../store/repositories/dns.ts';
import { DnsService } from './dns.ts';
import { DaemonWatchdog } from './daemon-watchdog.ts';
import { AccountService } from './accounts.ts';
import { DataplaneSync } from './dataplane-sync.ts';
import { HostNetworkReader } from './host-networks.ts';
import { OnlineService } from './online.ts';
import { ServerService } from './servers.ts';
import { AccessHashRepository } from '../store/repositories/access-hashes.ts';
import { LicenseRepository } from '../store/repositories/license.ts';
import { SettingsRepository } from '../store/repositories/settings.ts';
import { AccessHashService } from './access-hashes.ts';
import { LicenseService } from './license.ts';
import { toLicensePublicKey } from './license-key.ts';
import { ReconcilerStatus, type ReconcileFn } from './reconciler-status.ts';
import { SystemConfigService } from './system-config.ts';
import { SystemService } from './system.ts';
import { FilterRulesRepository } from '../store/repositories/filter-rules.ts';
import { FirewallConfRepository } from '../store/repositories/firewall-conf.ts';
import { PortForwardsRepository } from '../store/repositories/port-forwards.ts';
import { FirewallService } from './firewall.ts';
import { NetworkViewService } from './network-views.ts';
import { PortForwardService } from './port-forwards.ts';
import { ServerBandwidthService } from './server-bandwidth.ts';
import { PanelMetrics } from './metrics.ts';
import { TrafficLoggingRepository } from '../store/repositories/traffic-logging.ts';
import { SimulatedFlowSource, UlogdSource, type FlowSource } from './traffic-logging/flow-source.ts';
import { chainSpecFor, LogChainFollower } from './traffic-logging/log-chain-follower.ts';
import { TrafficLoggingService } from './traffic-logging/traffic-logging-service.ts';
import type { ShipperOptions } from './traffic-logging/shipper.ts';
import { TrafficStatisticsRepository } from '../store/repositories/traffic-statistics.ts';
import type { WorkerEngineOptions } from './statistics/sample-worker-client.ts';
import { TrafficStatisticsService } from './statistics/traffic-statistics.ts';
import { OtlLinksRepository } from '../store/repositories/otl-links.ts';
import { ikev2OtlDownloads } from './otl/ikev2-otl-downloads.ts';
import { OtlLinkService } from './otl/otl-links.ts';
import { OtlService } from './otl/otl-service.ts';
import { OtlSettingsService } from './otl/otl-settings.ts';
import { buildIkev2, type Ikev2Services } from './ikev2/ikev2-bundle.ts';
import { BackupConfigService } from './backups/backup-config.ts';
import { BackupScheduler } from './backups/backup-scheduler.ts';
import { BackupService } from './backups/backup-service.ts';
import { renderServerSummary } from './backups/dataplane-summary.ts';
import { BasicFtpUploader, type FtpUploader } from './backups/ftp-upload.ts';
import type { ReaderLimits } from './backups/archive-format.ts';
import { buildDesiredState } from './desired-state.ts';

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
  /** Clock; defaults to `() => new Date()`. */
  clock?: () => Date;
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
  clock: () => Date;
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

/** Builds the services from `deps`. */
export function buildServices(deps: PanelDeps): PanelServices {
  const clock = deps.clock ?? (() => new Date());
  const settings = new SettingsRepository(deps.db);
  const accessHashes = new AccessHashService(new AccessHashRepository(deps.db), clock, deps.logger);
  const licenseKey = toLicensePublicKey(deps.licensePublicKey);
  const license = new LicenseService(new LicenseRepository(deps.db), deps.secretBox, licenseKey, clock, deps.logger);
  const systemConfig = new SystemConfigService(settings, clock);
  const reconciler = new ReconcilerStatus();

  const serverRepo = new ServersRepository(deps.db);
  const accountRepo = new AccountsRepository(deps.db);
  const driver = deps.dataplane.wireguard;
  const dataplaneSync = new DataplaneSync({
    dataplane: deps.dataplane, servers: serverRepo, accounts: accountRepo, box: deps.secretBox,
    externalInterface: deps.externalInterface, logger: deps.logger,
  });
  const forwardRepo = new PortForwardsRepository(deps.db);
  const filterRuleRepo = new FilterRulesRepository(deps.db);
  const firewallConfRepo = new FirewallConfRepository(deps.db);
  dataplaneSync.setPolicySource({
    firewallGlobal: () => ({ conf: firewallConfRepo.getFirewallConf(), rules: filterRuleRepo.listFilterRules() }),
    forwards: (server) => forwardRepo.listForwards(server.id),
  });
  const policy = { servers: serverRepo, accounts: accountRepo, sync: dataplaneSync };
  const firewall = new FirewallService({ conf: firewallConfRepo, rules: filterRuleRepo, servers: serverRepo, sync: dataplaneSync, apiPort: deps.apiPort ?? null });
  const portForwards = new PortForwardService({ ...policy, forwards: forwardRepo, apiPort: deps.apiPort ?? null });
  const networkViews = new NetworkViewService(policy);
  const serverBandwidth = new ServerBandwidthService(policy);
  const routeProbe =
    deps.routeProbe ?? (deps.dataplane.kind === 'simulated' ? fixedRouteProbe() : new LinuxDefaultRouteProbe(new ExecaRunner()));
  const hosts = new HostNetworkReader(driver, { listenAddress: deps.listenAddress ?? null });
  const stores = { servers: serverRepo, accounts: accountRepo, box: deps.secretBox, sync: dataplaneSync, hosts };
  const dns = new DnsService({
    repo: new DnsRepository(deps.db), servers: serverRepo, dns: deps.dataplane.dns, writer: dataplaneSync.writers.dns, licensed: () => license.state().valid,
    serial: (task) => dataplaneSync.serial(task), clock, logger: deps.logger,
  });
  const statistics = new TrafficStatisticsService({
    repo: new TrafficStatisticsRepository(deps.db), wireguard: driver, ipsec: deps.dataplane.ipsec, clock: { now: clock },
    onAccountsChanged: (listener) => accountRepo.onRowsChanged(listener),
    parkedPeers: {
      account: (key) => accountRepo.getByPublicKey(key),
      rememberEndpoint: (id, endpoint) => accountRepo.setLastEndpoint(id, endpoint),
    },
    worker: deps.statisticsWorker,
    timeZone: deps.timeZone ?? (Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'),
    config: () => systemConfig.get(), serial: (task) => dataplaneSync.serial(task), logger: deps.logger,
    onSample: (seconds) => metrics.observeSample(seconds),
    accountId: (name) => {
      const row = accountRepo.get(name);
      if (!row) throw new ApiError(E.ACCOUNT_NOT_FOUND);
      return row.id;
    },
  });
  const otlSettings = new OtlSettingsService(settings, clock);
  const otlLinks = new OtlLinkService({
    links: new OtlLinksRepository(deps.db), clock, baseUrl: () => deps.baseUrl, lifetimeDays: () => otlSettings.lifetimeDays(),
    accountId: (name) => {
      const row = accountRepo.get(name);
      if (!row) throw new ApiError(E.ACCOUNT_NOT_FOUND);
      return row.id;
    },
  });
  const servers = new ServerService({
    ...stores, routeProbe, externalInterface: deps.externalInterface, logger: deps.logger, afterChange: () => dns.serversChanged(),
  });
  const accounts = new AccountService({ ...stores, accountLimit: () => license.accountLimit(), statistics, otlLinks });
  const accountConfig = new AccountConfigService(serverRepo, deps.secretBox, driver, (server) => dns.serverDns(server));
  const otl = new OtlService(otlLinks, otlSettings, {
    name: (id) => otlLinks.accountName(id),
    configText: (id) => {
      const name = otlLinks.accountName(id);
      const row = name === null ? undefined : accountRepo.get(name);
      return row ? accountConfig.configText(row) : null;
    },
  }, ikev2OtlDownloads({
    // Read lazily: the IKEv2 services are built below.
    ikev2Row: () => ikev2.repo.get(),
    account: (name) => accountRepo.get(name),
    serverOffersIkev2: (id) => serverRepo.getById(id)?.ikev2 === 1,
    sswan: (name) => ikev2.profiles.sswan(name),
  }));
  const online = new OnlineService(serverRepo, accountRepo, driver, () => systemConfig.get().wireguard_handshake_uptime, clock);
  const ikev2 = buildIkev2({
    db: deps.db, ipsec: deps.dataplane.ipsec, ipsecWriter: dataplaneSync.writers.ipsec, servers: serverRepo, accounts: accountRepo, box: deps.secretBox, clock,
    serial: (task) => dataplaneSync.serial(task), serverDns: (server) => dns.serverDns(server), logger: deps.logger,
    beforeSasEnd: () => statistics.beforeSasEnd(),
  });
  dataplaneSync.addFollower(ikev2.sync);
  dns.onEnabledChange(() => ikev2.sync.dnsChanged());
  const metrics = new PanelMetrics({ perPeer: deps.metricsPerPeer ?? false });
  metrics.attach({
    servers: () => serverRepo.list(),
    accountsByState: () => accountRepo.countsByState(),
    accountNames: () => accountRepo.namesByPublicKey(),
    driver,
    handshakeUptime: () => systemConfig.get().wireguard_handshake_uptime,
    now: () => Math.floor(clock().getTime() / 1000),
    loggingStats: () => trafficLogging.stats(),
    daemons: async () => {
      const out: Array<{ daemon: string; up: boolean; restarts: number }> = [];
      if (dns.wanted()) out.push({ daemon: 'unbound', up: (await deps.dataplane.dns.state()).running, restarts: watchdog.stats('dns').restarts });
      if (ikev2.sync.wanted()) out.push({ daemon: 'charon', up: (await deps.dataplane.ipsec.status()).running, restarts: watchdog.stats('ikev2').restarts });
      const ulogd = trafficLogging.sourceState();
      if (ulogd) out.push({ daemon: 'ulogd', up: ulogd.pid !== null, restarts: ulogd.restarts });
      return out;
    },
  });
  const reconcileAll: ReconcileFn = async (onProgress) => {
    const started = performance.now();
    let done = false;
    try {
      // The resolver is reconciled even when another subsystem failed; the first failure is reported.
      let failure: unknown = null;
      // A sample first: a reload that re-creates interfaces (or restarts charon) would reset the counters.
      await dataplaneSync.serial(() => statistics.sampleAndSettle())
        .catch((err: unknown) => deps.logger?.error({ err }, 'traffic sample before reconcile failed'));
      await dataplaneSync.reconcileAll(onProgress).catch((err: unknown) => void (failure = err));
      await dns.reconcile().catch((err: unknown) => void (failure ??= err));
      if (failure) throw failure;
      done = true;
    } finally {
      metrics.observeReconcile((performance.now() - started) / 1000, done);
    }
  };

  const system = new SystemService({
    countAccounts: () => accountRepo.count(),
    countServers: () => serverRepo.count(),
    driver,
    license,
    reconciler,
    reconcileAll,
    version: deps.version,
    clock,
    onReconcileError: (err) => deps.logger?.error({ err }, 'reconcile failed'),
    healthChecks: [
      () => dns.problem(),
      () => trafficLogging.problem(),
      async () => ((await deps.dataplane.ipsec.status()).crashed ? 'ikev2 daemon (charon) is not running' : null)],
  });
  const watchdog = new DaemonWatchdog({
    logger: deps.logger,
    daemons: [
      { name: 'dns', crashed: () => dns.problem(), restart: () => dns.reconcile() },
      {
        // charon's libipsec TUN device comes back with it: a full reconcile re-applies everything bound to it
        name: 'ikev2',
        crashed: async () => ((await deps.dataplane.ipsec.status()).crashed ? 'charon is not running' : null),
        restart: () => reconciler.run(reconcileAll),
      },
    ],
  });
  const backupConfig = new BackupConfigService(settings, deps.secretBox, clock);
  const backups = new BackupService({
    db: deps.db, dataDir: deps.dataDir, box: deps.secretBox, clock, logger: deps.logger, config: backupConfig,
    ftp: deps.backups?.ftp ?? new BasicFtpUploader(), panelVersion: deps.version, limits: deps.backups?.limits,
    dataplaneFiles: () => new Map(buildDesiredState(serverRepo, accountRepo).map((s) => [`${s.row.interface_name}.conf`, renderServerSummary(s)])),
    restorable: async () => {
      const text = await system.statusText();
      return text === 'OK' || (!reconciler.running && text === reconciler.text());
    },
    exclusive: (fn) => dataplaneSync.serial(fn),
    reconcile: async () => {
      await reconciler.whenIdle();
      await reconciler.run(reconcileAll);
    },
    sample: async () => void (await dataplaneSync.serial(() => statistics.sampler.sample())),
    checkContext: async () => ({
      box: deps.secretBox, host: await hosts.fresh(serverRepo.list().map((s) => s.interface_name)), apiPort: deps.apiPort ?? null,
      externalInterface: deps.externalInterface,
      // the license the restored store brings, or the live one when that allows more
      accountLimit: (snapshot) => Math.max(license.accountLimit(), new LicenseService(new LicenseRepository(snapshot), deps.secretBox, licenseKey, clock).accountLimit()),
    }),
    afterRestore: () => {
      accountRepo.forgetCached();
      // the restored traffic logging settings take effect (off stops the pipeline)
      trafficLogging.start().catch((err: unknown) => deps.logger?.error({ err }, 'traffic logging after restore failed'));
    },
  });
  const backupScheduler = new BackupScheduler({
    config: () => backupConfig.get(), run: (stats, kind) => backups.create(stats, kind), busy: () => backups.busy,
    logger: deps.logger, timeZone: deps.timeZone,
  });
  backupConfig.listen(() => backupScheduler.reschedule());
  const logRepo = new TrafficLoggingRepository(deps.db);
  const logSource = deps.trafficLogging?.source
    ?? (deps.dataplane.kind === 'simulated' ? new SimulatedFlowSource() : new UlogdSource(new ExecaRunner(), { dir: `${deps.dataDir}/ulogd` }));
  const logChain = new LogChainFollower(dataplaneSync, () => chainSpecFor(logRepo.get(), logSource.nflog));
  dataplaneSync.addFollower(logChain);
  const trafficLogging = new TrafficLoggingService({
    repo: logRepo, box: deps.secretBox, clock, logger: deps.logger, source: logSource,
    shipper: deps.trafficLogging?.shipper, applyRules: () => logChain.apply(),
  });
  return {
    trafficLogging, dns, watchdog,
    clock, settings, accessHashes, license, systemConfig, reconciler, system, servers, accounts, accountConfig, online, dataplaneSync,
    ikev2, firewall, portForwards, networkViews, serverBandwidth, statistics, metrics, backups, backupConfig, backupScheduler, otl,
  };
}
