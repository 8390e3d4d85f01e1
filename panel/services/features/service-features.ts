// Features of the panel's resources: DNS, traffic statistics, servers, accounts, their configs, online, IKEv2, OTL.
import { ApiError, E } from '../../http/errors.ts';
import { DnsRepository } from '../../store/repositories/dns.ts';
import { OtlLinksRepository } from '../../store/repositories/otl-links.ts';
import { TrafficStatisticsRepository } from '../../store/repositories/traffic-statistics.ts';
import { AccountConfigService } from '../account-config.ts';
import { AccountService } from '../accounts.ts';
import { DnsService } from '../dns.ts';
import { featureFor, type Feature } from '../../../shared/feature-graph.ts';
import { buildIkev2 } from '../ikev2/ikev2-bundle.ts';
import { OnlineService } from '../online.ts';
import { ikev2OtlDownloads } from '../otl/ikev2-otl-downloads.ts';
import { OtlLinkService } from '../otl/otl-links.ts';
import { OtlService } from '../otl/otl-service.ts';
import { OtlSettingsService } from '../otl/otl-settings.ts';
import { ServerService } from '../servers.ts';
import { TrafficStatisticsService } from '../statistics/traffic-statistics.ts';
import type { AccountsRepository } from '../../store/repositories/accounts.ts';
import type { PanelRegistry } from './registry.ts';

const define = featureFor<PanelRegistry>();

/** The account id of `name`, or `Account not found`. */
function accountIdOf(accounts: AccountsRepository): (name: string) => number {
  return (name) => {
    const row = accounts.get(name);
    if (!row) throw new ApiError(E.ACCOUNT_NOT_FOUND);
    return row.id;
  };
}

/** The DNS resolver (license-gated), writing unbound through the sync's lane. */
export const dnsFeature: Feature<PanelRegistry> = define({
  name: 'dns',
  needs: ['deps', 'serverRepo', 'license', 'dataplaneSync', 'clock'],
  provides: ['dns'],
  build(get) {
    const deps = get('deps');
    const sync = get('dataplaneSync');
    const license = get('license');
    return {
      dns: new DnsService({
        repo: new DnsRepository(deps.db), servers: get('serverRepo'), dns: deps.dataplane.dns, writer: sync.writers.dns,
        licensed: () => license.state().valid, serial: (task) => sync.serial(task), clock: get('clock'), logger: deps.logger,
      }),
    };
  },
});

/** Traffic statistics: the sampler (in the lane), its schedule and the monthly/daily views. */
export const statisticsFeature: Feature<PanelRegistry> = define({
  name: 'statistics',
  needs: ['deps', 'accountRepo', 'systemConfig', 'dataplaneSync', 'clock', 'metrics'],
  provides: ['statistics'],
  build(get) {
    const deps = get('deps');
    const accountRepo = get('accountRepo');
    const sync = get('dataplaneSync');
    const systemConfig = get('systemConfig');
    const metrics = get('metrics');
    const clock = get('clock');
    return {
      statistics: new TrafficStatisticsService({
        repo: new TrafficStatisticsRepository(deps.db), wireguard: deps.dataplane.wireguard, ipsec: deps.dataplane.ipsec, clock,
        onAccountsChanged: (listener) => accountRepo.onRowsChanged(listener),
        parkedPeers: {
          account: (key) => accountRepo.getByPublicKey(key),
          rememberEndpoint: (id, endpoint) => accountRepo.setLastEndpoint(id, endpoint),
        },
        worker: deps.statisticsWorker,
        timeZone: deps.timeZone ?? (Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'),
        config: () => systemConfig.get(), serial: (task) => sync.serial(task), logger: deps.logger,
        onSample: (seconds) => metrics.observeSample(seconds),
        accountId: accountIdOf(accountRepo),
      }),
    };
  },
});

/** One-time links and their page settings. */
export const otlLinksFeature: Feature<PanelRegistry> = define({
  name: 'otl-links',
  needs: ['deps', 'settings', 'accountRepo', 'clock'],
  provides: ['otlLinks', 'otlSettings'],
  build(get) {
    const deps = get('deps');
    const clock = get('clock');
    const otlSettings = new OtlSettingsService(get('settings'), clock);
    const otlLinks = new OtlLinkService({
      links: new OtlLinksRepository(deps.db), clock, baseUrl: () => deps.baseUrl, lifetimeDays: () => otlSettings.lifetimeDays(),
      accountId: accountIdOf(get('accountRepo')),
    });
    return { otlLinks, otlSettings };
  },
});

/** WireGuard servers (the resolver follows their addresses) and accounts. */
export const serversAccountsFeature: Feature<PanelRegistry> = define({
  name: 'servers-accounts',
  needs: ['deps', 'serverRepo', 'accountRepo', 'dataplaneSync', 'hosts', 'routeProbe', 'dns', 'license', 'statistics', 'otlLinks'],
  provides: ['servers', 'accounts', 'accountConfig'],
  build(get) {
    const deps = get('deps');
    const dns = get('dns');
    const license = get('license');
    const stores = { servers: get('serverRepo'), accounts: get('accountRepo'), box: deps.secretBox, sync: get('dataplaneSync'), hosts: get('hosts') };
    return {
      servers: new ServerService({
        ...stores, routeProbe: get('routeProbe'), externalInterface: deps.externalInterface, logger: deps.logger, afterChange: () => dns.serversChanged(),
      }),
      accounts: new AccountService({ ...stores, accountLimit: () => license.accountLimit(), statistics: get('statistics'), otlLinks: get('otlLinks') }),
      accountConfig: new AccountConfigService(stores.servers, deps.secretBox, deps.dataplane.wireguard, (server) => dns.serverDns(server)),
    };
  },
});

/** GET /wireguard/online and friends: who is connected, from the driver's sessions. */
export const onlineFeature: Feature<PanelRegistry> = define({
  name: 'online',
  needs: ['deps', 'serverRepo', 'accountRepo', 'systemConfig', 'clock'],
  provides: ['online'],
  build(get) {
    const systemConfig = get('systemConfig');
    return {
      online: new OnlineService({
        servers: get('serverRepo'), accounts: get('accountRepo'), driver: get('deps').dataplane.wireguard,
        handshakeUptime: () => systemConfig.get().wireguard_handshake_uptime, clock: get('clock'),
      }),
    };
  },
});

/** IKEv2: PKI, settings, sessions, profiles, and the sync that follows store changes into charon. */
export const ikev2Feature: Feature<PanelRegistry> = define({
  name: 'ikev2',
  needs: ['deps', 'serverRepo', 'accountRepo', 'clock', 'dataplaneSync', 'dns', 'statistics'],
  provides: ['ikev2'],
  build(get) {
    const deps = get('deps');
    const sync = get('dataplaneSync');
    const dns = get('dns');
    const statistics = get('statistics');
    const ikev2 = buildIkev2({
      db: deps.db, ipsec: deps.dataplane.ipsec, ipsecWriter: sync.writers.ipsec, servers: get('serverRepo'), accounts: get('accountRepo'),
      box: deps.secretBox, clock: get('clock'), serial: (task) => sync.serial(task), serverDns: (server) => dns.serverDns(server), logger: deps.logger,
      beforeSasEnd: () => statistics.beforeSasEnd(),
    });
    sync.addFollower(ikev2.sync);
    dns.onEnabledChange(() => ikev2.sync.dnsChanged());
    return { ikev2 };
  },
});

/** The one-time-link page's logic: the account's WireGuard config and its IKEv2 downloads. */
export const otlFeature: Feature<PanelRegistry> = define({
  name: 'otl',
  needs: ['otlLinks', 'otlSettings', 'accountRepo', 'serverRepo', 'accountConfig', 'ikev2'],
  provides: ['otl'],
  build(get) {
    const otlLinks = get('otlLinks');
    const accountRepo = get('accountRepo');
    const serverRepo = get('serverRepo');
    const accountConfig = get('accountConfig');
    const ikev2 = get('ikev2');
    const pages = {
      name: (id: number) => otlLinks.accountName(id),
      configText: (id: number) => {
        const name = otlLinks.accountName(id);
        const row = name === null ? undefined : accountRepo.get(name);
        return row ? accountConfig.configText(row) : null;
      },
    };
    const downloads = ikev2OtlDownloads({
      ikev2Row: () => ikev2.repo.get(),
      account: (name) => accountRepo.get(name),
      serverOffersIkev2: (id) => serverRepo.getById(id)?.ikev2 === 1,
      sswan: (name) => ikev2.profiles.sswan(name),
    });
    return { otl: new OtlService(otlLinks, get('otlSettings'), pages, downloads) };
  },
});
