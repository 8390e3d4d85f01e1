// Features that run the panel: traffic logging, the full reconcile, system status, the daemon watchdog, metrics, backups.
import { ExecaRunner } from '../../dataplane/linux/runner.ts';
import { TrafficLoggingRepository } from '../../store/repositories/traffic-logging.ts';
import { BackupConfigService } from '../backups/backup-config.ts';
import { BackupScheduler } from '../backups/backup-scheduler.ts';
import { BackupService } from '../backups/backup-service.ts';
import { renderServerSummary } from '../backups/dataplane-summary.ts';
import { BasicFtpUploader } from '../backups/ftp-upload.ts';
import { DaemonWatchdog } from '../daemon-watchdog.ts';
import { buildDesiredState } from '../desired-state.ts';
import { featureFor, type Feature } from '../../../shared/feature-graph.ts';
import type { ReconcileFn } from '../reconciler-status.ts';
import { SystemService } from '../system.ts';
import { UlogdSource } from '../../dataplane/traffic-log/linux/ulogd-source.ts';
import { SimulatedFlowSource } from '../../dataplane/traffic-log/simulated/simulated-flow-source.ts';
import { chainSpecFor, LogChainFollower } from '../traffic-logging/log-chain-follower.ts';
import { TrafficLoggingService } from '../traffic-logging/traffic-logging-service.ts';
import type { PanelRegistry } from './registry.ts';

const define = featureFor<PanelRegistry>();

/** Traffic logging: the kernel source (ulogd or its twin), the NFLOG chains (a sync follower) and the shipper. */
export const trafficLoggingFeature: Feature<PanelRegistry> = define({
  name: 'traffic-logging',
  needs: ['deps', 'dataplaneSync', 'clock'],
  provides: ['trafficLogging'],
  build(get) {
    const deps = get('deps');
    const sync = get('dataplaneSync');
    const repo = new TrafficLoggingRepository(deps.db);
    const source = deps.trafficLogging?.source
      ?? (deps.dataplane.kind === 'simulated' ? new SimulatedFlowSource() : new UlogdSource(new ExecaRunner(), { dir: `${deps.dataDir}/ulogd` }));
    const chain = new LogChainFollower(sync, () => chainSpecFor(repo.get(), source.nflog));
    sync.addFollower(chain);
    return {
      trafficLogging: new TrafficLoggingService({
        repo, box: deps.secretBox, clock: get('clock'), logger: deps.logger, source, shipper: deps.trafficLogging?.shipper, applyRules: () => chain.apply(),
      }),
    };
  },
});

/** The full reconcile: a traffic sample first (re-created interfaces reset counters), the data plane, the resolver. */
export const reconcileFeature: Feature<PanelRegistry> = define({
  name: 'reconcile',
  needs: ['deps', 'dataplaneSync', 'statistics', 'dns', 'metrics'],
  provides: ['reconcileAll'],
  build(get) {
    const { logger } = get('deps');
    const sync = get('dataplaneSync');
    const statistics = get('statistics');
    const dns = get('dns');
    const metrics = get('metrics');
    const reconcileAll: ReconcileFn = async (onProgress) => {
      const started = performance.now();
      let done = false;
      try {
        // The resolver is reconciled even when another subsystem failed; the first failure is reported.
        let failure: unknown = null;
        await sync.serial(() => statistics.sampleAndSettle()).catch((err: unknown) => logger?.error({ err }, 'traffic sample before reconcile failed'));
        await sync.reconcileAll(onProgress).catch((err: unknown) => void (failure = err));
        await dns.reconcile().catch((err: unknown) => void (failure ??= err));
        if (failure) throw failure;
        done = true;
      } finally {
        metrics.observeReconcile((performance.now() - started) / 1000, done);
      }
    };
    return { reconcileAll };
  },
});

/** GET /system/status and friends, with the daemons' health checks. */
export const systemFeature: Feature<PanelRegistry> = define({
  name: 'system',
  needs: ['deps', 'serverRepo', 'accountRepo', 'license', 'reconciler', 'reconcileAll', 'clock', 'dns', 'trafficLogging'],
  provides: ['system'],
  build(get) {
    const deps = get('deps');
    const accountRepo = get('accountRepo');
    const serverRepo = get('serverRepo');
    const dns = get('dns');
    const trafficLogging = get('trafficLogging');
    return {
      system: new SystemService({
        countAccounts: () => accountRepo.count(),
        countServers: () => serverRepo.count(),
        driver: deps.dataplane.wireguard, license: get('license'), reconciler: get('reconciler'), reconcileAll: get('reconcileAll'),
        version: deps.version, clock: get('clock'),
        onReconcileError: (err) => deps.logger?.error({ err }, 'reconcile failed'),
        healthChecks: [
          () => dns.problem(),
          () => trafficLogging.problem(),
          async () => ((await deps.dataplane.ipsec.status()).crashed ? 'ikev2 daemon (charon) is not running' : null),
        ],
      }),
    };
  },
});

/** Restarts a crashed unbound or charon with backoff (server.ts starts and stops it). */
export const watchdogFeature: Feature<PanelRegistry> = define({
  name: 'watchdog',
  needs: ['deps', 'dns', 'reconciler', 'reconcileAll'],
  provides: ['watchdog'],
  build(get) {
    const deps = get('deps');
    const dns = get('dns');
    const reconciler = get('reconciler');
    const reconcileAll = get('reconcileAll');
    return {
      watchdog: new DaemonWatchdog({
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
      }),
    };
  },
});

/** GET /metrics' sources: servers, accounts, handshakes, traffic logging's counters and the daemons. */
export const metricsSourcesFeature: Feature<PanelRegistry> = define({
  name: 'metrics-sources',
  needs: ['deps', 'metrics', 'serverRepo', 'accountRepo', 'systemConfig', 'clock', 'trafficLogging', 'dns', 'ikev2', 'watchdog'],
  provides: [],
  build(get) {
    const deps = get('deps');
    const serverRepo = get('serverRepo');
    const accountRepo = get('accountRepo');
    const systemConfig = get('systemConfig');
    const clock = get('clock');
    const trafficLogging = get('trafficLogging');
    const dns = get('dns');
    const ikev2 = get('ikev2');
    const watchdog = get('watchdog');
    get('metrics').attach({
      servers: () => serverRepo.list(),
      accountsByState: () => accountRepo.countsByState(),
      accountNames: () => accountRepo.namesByPublicKey(),
      driver: deps.dataplane.wireguard,
      handshakeUptime: () => systemConfig.get().wireguard_handshake_uptime,
      now: () => Math.floor(clock.now().getTime() / 1000),
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
    return {};
  },
});

/** Backups: create, list, restore (exclusive in the lane, then a full reconcile), their config and schedule. */
export const backupsFeature: Feature<PanelRegistry> = define({
  name: 'backups',
  needs: [
    'deps', 'clock', 'settings', 'serverRepo', 'accountRepo', 'system', 'reconciler', 'reconcileAll', 'dataplaneSync', 'statistics', 'hosts',
    'license', 'licenseOf', 'trafficLogging',
  ],
  provides: ['backupConfig', 'backups', 'backupScheduler'],
  build(get) {
    const deps = get('deps');
    const clock = get('clock');
    const [serverRepo, accountRepo, system, reconciler, reconcileAll] = [get('serverRepo'), get('accountRepo'), get('system'), get('reconciler'), get('reconcileAll')];
    const [sync, statistics, hosts, license, licenseOf, trafficLogging] = [get('dataplaneSync'), get('statistics'), get('hosts'), get('license'), get('licenseOf'), get('trafficLogging')];
    const backupConfig = new BackupConfigService(get('settings'), deps.secretBox, clock);
    const backups = new BackupService({
      db: deps.db, dataDir: deps.dataDir, box: deps.secretBox, clock, logger: deps.logger, config: backupConfig,
      ftp: deps.backups?.ftp ?? new BasicFtpUploader(), panelVersion: deps.version, limits: deps.backups?.limits,
      dataplaneFiles: () => new Map(buildDesiredState(serverRepo, accountRepo).map((s) => [`${s.row.interface_name}.conf`, renderServerSummary(s)])),
      restorable: async () => {
        const text = await system.statusText();
        return text === 'OK' || (!reconciler.running && text === reconciler.text());
      },
      exclusive: (fn) => sync.serial(fn),
      reconcile: async () => {
        await reconciler.whenIdle();
        await reconciler.run(reconcileAll);
      },
      sample: async () => void (await sync.serial(() => statistics.sampler.sample())),
      checkContext: async () => ({
        box: deps.secretBox, host: await hosts.fresh(serverRepo.list().map((s) => s.interface_name)), apiPort: deps.apiPort ?? null,
        externalInterface: deps.externalInterface,
        // the license the restored store brings, or the live one when that allows more
        accountLimit: (snapshot) => Math.max(license.accountLimit(), licenseOf(snapshot).accountLimit()),
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
    return { backupConfig, backups, backupScheduler };
  },
});
