// Builds every panel service from the injected side effects (database, driver, clock, keys) in one place.
import type { KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import type { Driver } from '../dataplane/driver.ts';
import type { SecretBox } from '../security/secret-box.ts';
import type { Db } from '../store/db.ts';
import { fixedRouteProbe, LinuxDefaultRouteProbe, type DefaultRouteProbe } from '../dataplane/default-route.ts';
import { ExecaRunner } from '../dataplane/linux/runner.ts';
import { AccountsRepository } from '../store/repositories/accounts.ts';
import { ServersRepository } from '../store/repositories/servers.ts';
import { AccountConfigService } from './account-config.ts';
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

/** Side effects and settings the panel is built from; `buildApp` never opens files or ports itself. */
export interface PanelDeps {
  /** Open database (panel/store/db.ts `openDatabase`), migrations applied. */
  db: Db;
  /** The data plane (linux or simulated). */
  driver: Driver;
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
}

/** Builds the services from `deps`. */
export function buildServices(deps: PanelDeps): PanelServices {
  const clock = deps.clock ?? (() => new Date());
  const settings = new SettingsRepository(deps.db);
  const accessHashes = new AccessHashService(new AccessHashRepository(deps.db), clock, deps.logger);
  const license = new LicenseService(new LicenseRepository(deps.db), deps.secretBox, toLicensePublicKey(deps.licensePublicKey), clock, deps.logger);
  const systemConfig = new SystemConfigService(settings, clock);
  const reconciler = new ReconcilerStatus();

  const serverRepo = new ServersRepository(deps.db);
  const accountRepo = new AccountsRepository(deps.db);
  const dataplaneSync = new DataplaneSync(deps.driver, serverRepo, accountRepo, deps.secretBox);
  const routeProbe =
    deps.routeProbe ?? (deps.driver.kind === 'simulated' ? fixedRouteProbe() : new LinuxDefaultRouteProbe(new ExecaRunner()));
  const hosts = new HostNetworkReader(deps.driver, { listenAddress: deps.listenAddress ?? null });
  const stores = { servers: serverRepo, accounts: accountRepo, box: deps.secretBox, sync: dataplaneSync, hosts };
  const servers = new ServerService({ ...stores, routeProbe, externalInterface: deps.externalInterface, logger: deps.logger });
  const accounts = new AccountService({ ...stores, accountLimit: () => license.accountLimit() });
  const accountConfig = new AccountConfigService(serverRepo, deps.secretBox, deps.driver);
  const online = new OnlineService(serverRepo, accountRepo, deps.driver, () => systemConfig.get().wireguard_handshake_uptime, clock);
  const reconcileAll: ReconcileFn = async (onProgress) => {
    await dataplaneSync.reconcileAll(onProgress);
  };

  const system = new SystemService({
    countAccounts: () => accountRepo.count(),
    countServers: () => serverRepo.count(),
    driver: deps.driver,
    license,
    reconciler,
    reconcileAll,
    version: deps.version,
    onReconcileError: (err) => deps.logger?.error({ err }, 'reconcile failed'),
  });
  return { clock, settings, accessHashes, license, systemConfig, reconciler, system, servers, accounts, accountConfig, online, dataplaneSync };
}
