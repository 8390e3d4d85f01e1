// Features of the panel's core: settings, access hashes, license, repositories, the data-plane sync and network policy.
import { type Clock, systemClock } from '../../../shared/clock.ts';
import { fixedRouteProbe, LinuxDefaultRouteProbe } from '../../dataplane/default-route.ts';
import { ExecaRunner } from '../../dataplane/linux/runner.ts';
import { AccessHashRepository } from '../../store/repositories/access-hashes.ts';
import { AccountsRepository } from '../../store/repositories/accounts.ts';
import { FilterRulesRepository } from '../../store/repositories/filter-rules.ts';
import { FirewallConfRepository } from '../../store/repositories/firewall-conf.ts';
import { LicenseRepository } from '../../store/repositories/license.ts';
import { PortForwardsRepository } from '../../store/repositories/port-forwards.ts';
import { ServersRepository } from '../../store/repositories/servers.ts';
import { SettingsRepository } from '../../store/repositories/settings.ts';
import { AccessHashService } from '../access-hashes.ts';
import { DataplaneSync } from '../dataplane-sync.ts';
import { FirewallService } from '../firewall.ts';
import { HostNetworkReader } from '../host-networks.ts';
import { toLicensePublicKey } from '../license-key.ts';
import { LicenseService } from '../license.ts';
import { PanelMetrics } from '../metrics.ts';
import { NetworkViewService } from '../network-views.ts';
import { PortForwardService } from '../port-forwards.ts';
import { ReconcilerStatus } from '../reconciler-status.ts';
import { ServerBandwidthService } from '../server-bandwidth.ts';
import { SystemConfigService } from '../system-config.ts';
import { featureFor, type Feature } from '../../../shared/feature-graph.ts';
import type { PanelRegistry } from './registry.ts';

const define = featureFor<PanelRegistry>();

/** Clock, settings, access hashes, license, system config and the reconciler's status. */
export const settingsFeature: Feature<PanelRegistry> = define({
  name: 'settings',
  needs: ['deps'],
  provides: ['clock', 'settings', 'accessHashes', 'licenseKey', 'licenseOf', 'license', 'systemConfig', 'reconciler'],
  build(get) {
    const deps = get('deps');
    const clock = deps.clock ?? systemClock;
    const settings = new SettingsRepository(deps.db);
    const licenseKey = toLicensePublicKey(deps.licensePublicKey);
    // another database's license (a backup's), checked quietly with the same key
    const licenseOf = (db: typeof deps.db) => new LicenseService({ repo: new LicenseRepository(db), secretBox: deps.secretBox, publicKey: licenseKey, clock });
    return {
      clock, settings, licenseKey, licenseOf,
      accessHashes: new AccessHashService(new AccessHashRepository(deps.db), clock, deps.logger),
      license: new LicenseService({ repo: new LicenseRepository(deps.db), secretBox: deps.secretBox, publicKey: licenseKey, clock, log: deps.logger }),
      systemConfig: new SystemConfigService(settings, clock),
      reconciler: new ReconcilerStatus(),
    };
  },
});

/** The Prometheus registry: made first, its sources attached once they exist (see the metrics-sources feature). */
export const metricsFeature: Feature<PanelRegistry> = define({
  name: 'metrics',
  needs: ['deps'],
  provides: ['metrics'],
  build: (get) => ({ metrics: new PanelMetrics({ perPeer: get('deps').metricsPerPeer ?? false }) }),
});

/** The servers' and accounts' repositories, the host's networks, the default-route probe and the data-plane sync. */
export const dataplaneFeature: Feature<PanelRegistry> = define({
  name: 'dataplane',
  needs: ['deps', 'clock'],
  provides: ['serverRepo', 'accountRepo', 'dataplaneSync', 'hosts', 'routeProbe'],
  build(get) {
    const deps = get('deps');
    const serverRepo = new ServersRepository(deps.db);
    const accountRepo = new AccountsRepository(deps.db);
    const dataplaneSync = new DataplaneSync({
      dataplane: deps.dataplane, servers: serverRepo, accounts: accountRepo, box: deps.secretBox,
      externalInterface: deps.externalInterface, logger: deps.logger,
    });
    const routeProbe = deps.routeProbe ?? (deps.dataplane.kind === 'simulated' ? fixedRouteProbe() : new LinuxDefaultRouteProbe(new ExecaRunner()));
    const clock = get('clock');
    const hosts = new HostNetworkReader(deps.dataplane.wireguard, { listenAddress: deps.listenAddress ?? null, now: () => clock.now().getTime() });
    return { serverRepo, accountRepo, dataplaneSync, hosts, routeProbe };
  },
});

/** Firewall, port forwards, network views and server bandwidth; plugs the firewall store into the sync. */
export const policyFeature: Feature<PanelRegistry> = define({
  name: 'network-policy',
  needs: ['deps', 'serverRepo', 'accountRepo', 'dataplaneSync'],
  provides: ['firewall', 'portForwards', 'networkViews', 'serverBandwidth'],
  build(get) {
    const deps = get('deps');
    const sync = get('dataplaneSync');
    const forwards = new PortForwardsRepository(deps.db);
    const rules = new FilterRulesRepository(deps.db);
    const conf = new FirewallConfRepository(deps.db);
    sync.setPolicySource({
      firewallGlobal: () => ({ conf: conf.getFirewallConf(), rules: rules.listFilterRules() }),
      forwards: (server) => forwards.listForwards(server.id),
    });
    const policy = { servers: get('serverRepo'), accounts: get('accountRepo'), sync };
    const apiPort = deps.apiPort ?? null;
    return {
      firewall: new FirewallService({ conf, rules, servers: policy.servers, sync, apiPort }),
      portForwards: new PortForwardService({ ...policy, forwards, apiPort }),
      networkViews: new NetworkViewService(policy),
      serverBandwidth: new ServerBandwidthService(policy),
    };
  },
});
