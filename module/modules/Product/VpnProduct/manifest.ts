// What VpnProduct contributes to the host: its config section, its panels and link-issue tables, its panel registry (one
// pooled client per panel), the username directory, its admin and worker routes.
import { z } from 'zod';
import type { Clock } from '../../../../panel/shared/clock.ts';
import { defineManifest, type ExtensionEnv } from '../../../platform/extension.ts';
import { clientAssetRoutes } from './client-assets.ts';
import { PanelAdmin, panelAdminRoutes, panelWorkerRoutes } from './panel-admin.ts';
import { vpnProductAdminPanels } from './panel-health.ts';
import { PanelRegistry, type PanelDirectory } from './panel-registry.ts';
import { Placement } from './placement.ts';
import { LINK_ISSUES_MIGRATION, LinkIssueLog, linkBoundSchema } from './link-bound.ts';
import { PanelStore, VPN_PRODUCT_MIGRATIONS } from './panel-store.ts';
import { RemotePanelDirectory } from './remote-panels.ts';
import { SqliteUsernameDirectory, type UsernameDirectory } from './usernames.ts';

/** VpnProduct's config.ts section. */
export const vpnProductConfigSchema = z.object({
  enabled: z.boolean(),
  version: z.string().min(1),
  api_timeout_ms: z.number().int().min(100).max(600_000).default(30_000),
  panel_connections: z.number().int().min(1).max(1024).default(16),
  job: z.object({ tries: z.number().int().min(1), backoff: z.number().min(0), timeout: z.number().positive(), maxExceptions: z.number().int().min(1) }).partial().optional(),
  /** New one-time links a customer may make per service and window (client area). */
  otl_links: linkBoundSchema.optional(),
});

/** The module's services, merged into its context (`ctx.panels`, `ctx.usernames`). */
export interface VpnProductServices {
  panels: PanelRegistry;
  /** Chooses the panel of a new account among those serving a location. */
  placement: Placement;
  /** Platform process only (null in a remote worker, where service data is never validated). */
  usernames: UsernameDirectory | null;
  /** Platform process only. */
  panelStore: PanelStore | null;
  panelAdmin: PanelAdmin | null;
  /** Platform process only: when the client area made each service's one-time links (the bound on them). */
  linkIssues: LinkIssueLog | null;
}

/** A PanelRegistry over `directory` with `panel_connections` sockets per panel and `api_timeout_ms` per call. */
export function createPanelRegistry(directory: PanelDirectory, config: Readonly<Record<string, unknown>>, clock: Clock): PanelRegistry {
  const settings = vpnProductConfigSchema.partial().parse(config);
  const timeout = settings.api_timeout_ms ?? 30_000;
  return new PanelRegistry(directory, { connections: settings.panel_connections ?? 16, headersTimeoutMs: timeout, bodyTimeoutMs: timeout }, 5_000, clock);
}

/** Placement over the registry's panels (status read through each panel's pooled client). */
export function createPlacement(panels: PanelRegistry, clock: Clock): Placement {
  return new Placement({ panelsAt: (location) => panels.panelsAt(location), status: async (name, signal) => (await panels.client(name)).systemStatus(signal) }, clock);
}

function services(env: ExtensionEnv): VpnProductServices {
  if (env.db && env.sealer) {
    const panelStore = new PanelStore(env.db, env.sealer, env.clock);
    const panels = createPanelRegistry(panelStore, env.config, env.clock);
    return {
      panels, placement: createPlacement(panels, env.clock), usernames: new SqliteUsernameDirectory(env.db), panelStore, panelAdmin: new PanelAdmin(panelStore),
      linkIssues: new LinkIssueLog(env.db, env.clock),
    };
  }
  if (env.worker) {
    const panels = createPanelRegistry(new RemotePanelDirectory(env.worker), env.config, env.clock);
    return { panels, placement: createPlacement(panels, env.clock), usernames: null, panelStore: null, panelAdmin: null, linkIssues: null };
  }
  throw new Error('VpnProduct needs the platform database or the worker API');
}

export const vpnProductManifest = defineManifest<VpnProductServices>({
  config: vpnProductConfigSchema,
  migrations: [...VPN_PRODUCT_MIGRATIONS, LINK_ISSUES_MIGRATION],
  services,
  adminApi: (ext) => panelAdminRoutes(ext.panelAdmin!),
  workerApi: (ext) => panelWorkerRoutes(ext.panelStore!),
  adminPanels: (ext) => vpnProductAdminPanels(ext.panelStore!, ext.panelAdmin!),
  clientRoutes: () => clientAssetRoutes,
  close: (ext) => ext.panels.close(),
});
