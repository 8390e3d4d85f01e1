// Builds every panel service from the injected side effects: a graph of feature plugins, ordered by what each needs.
import { composeFeatures, type Feature } from '../../shared/feature-graph.ts';
import { dataplaneFeature, metricsFeature, policyFeature, settingsFeature } from './features/core-features.ts';
import type { PanelRegistry } from './features/registry.ts';
import {
  backupsFeature, metricsSourcesFeature, reconcileFeature, systemFeature, trafficLoggingFeature, watchdogFeature,
} from './features/runtime-features.ts';
import {
  dnsFeature, ikev2Feature, onlineFeature, otlFeature, otlLinksFeature, serversAccountsFeature, statisticsFeature,
} from './features/service-features.ts';
import type { PanelDeps, PanelServices } from './panel-deps.ts';

export type { PanelDeps, PanelServices } from './panel-deps.ts';

/**
 * The panel's features. Each declares what it needs and provides; {@link composeFeatures} derives the build order
 * (so nothing is used before it is made) and fails at start naming a need no feature provides. The listed order
 * only breaks ties: the sync's followers (IKEv2, then the traffic-log chains) are added in it.
 */
export const PANEL_FEATURES: readonly Feature<PanelRegistry>[] = [
  settingsFeature, metricsFeature, dataplaneFeature, policyFeature, dnsFeature, statisticsFeature, otlLinksFeature,
  serversAccountsFeature, onlineFeature, ikev2Feature, otlFeature, trafficLoggingFeature, reconcileFeature, systemFeature,
  watchdogFeature, metricsSourcesFeature, backupsFeature,
];

/** Builds the services from `deps` (see {@link PANEL_FEATURES}). */
export function buildServices(deps: PanelDeps): PanelServices {
  const r = composeFeatures(PANEL_FEATURES, { deps });
  return {
    trafficLogging: r.trafficLogging, dns: r.dns, watchdog: r.watchdog, clock: r.clock, settings: r.settings, accessHashes: r.accessHashes,
    license: r.license, systemConfig: r.systemConfig, reconciler: r.reconciler, system: r.system, servers: r.servers, accounts: r.accounts,
    accountConfig: r.accountConfig, online: r.online, dataplaneSync: r.dataplaneSync, ikev2: r.ikev2, firewall: r.firewall,
    portForwards: r.portForwards, networkViews: r.networkViews, serverBandwidth: r.serverBandwidth, statistics: r.statistics,
    metrics: r.metrics, backups: r.backups, backupConfig: r.backupConfig, backupScheduler: r.backupScheduler, otl: r.otl,
  };
}
