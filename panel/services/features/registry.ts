// What the panel's features provide to each other: every service the routes use plus the shared internals.
import type { KeyObject } from 'node:crypto';
import type { DefaultRouteProbe } from '../../dataplane/default-route.ts';
import type { AccountsRepository } from '../../store/repositories/accounts.ts';
import type { ServersRepository } from '../../store/repositories/servers.ts';
import type { HostNetworkReader } from '../host-networks.ts';
import type { PanelDeps, PanelServices } from '../panel-deps.ts';
import type { ReconcileFn } from '../reconciler-status.ts';
import type { OtlLinkService } from '../otl/otl-links.ts';
import type { OtlSettingsService } from '../otl/otl-settings.ts';
import type { LicenseService } from '../license.ts';

/** The registry the feature graph fills: the seed (`deps`), the services, and what features share besides. */
export interface PanelRegistry extends PanelServices {
  /** The side effects and settings the panel is built from (the seed). */
  deps: PanelDeps;
  serverRepo: ServersRepository;
  accountRepo: AccountsRepository;
  /** The host's networks (addresses new servers and peers may not cover). */
  hosts: HostNetworkReader;
  /** New servers' default route (external_ip). */
  routeProbe: DefaultRouteProbe;
  /** The vendor key that signs licenses (null: only the free tier). */
  licenseKey: KeyObject | null;
  /** A license service over another database (a backup's), checked with the same key. */
  licenseOf: (db: PanelDeps['db']) => LicenseService;
  /** The full reconcile (boot, `PUT /system/reload`, restore, charon's restart): sample, data plane, resolver. */
  reconcileAll: ReconcileFn;
  otlLinks: OtlLinkService;
  otlSettings: OtlSettingsService;
}

/** The registry's keys. */
export type PanelKey = keyof PanelRegistry & string;
