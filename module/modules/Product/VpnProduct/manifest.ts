// What VpnProduct contributes to the host: its config section, its panels and link-issue tables, its panel registry (one
// pooled client per panel), the username directory, its admin and worker routes.
import { z } from 'zod';
import type { Clock } from '../../../../shared/clock.ts';
import { defineManifest, type ExtensionEnv } from '../../../platform/extension.ts';
import { clientAssetRoutes } from './client-assets.ts';
import { PanelAdmin, panelAdminRoutes, panelWorkerRoutes } from './panel-admin.ts';
import { vpnProductAdminPanels } from './panel-health.ts';
import { PanelRegistry, type PanelDirectory } from './panel-registry.ts';
import { Placement } from './placement.ts';
import { LINK_CLAIMS_MIGRATION, LINK_ISSUES_MIGRATION, LinkIssueLog, linkBoundSchema } from './link-bound.ts';
import { panelDirectoryCapability } from './panel-directory.ts';
import { PanelStore, VPN_PRODUCT_MIGRATIONS } from './panel-store.ts';
import { RemotePanelDirectory } from './remote-panels.ts';
import { HostUsernameDirectory, type UsernameDirectory } from './usernames.ts';
import { Task } from '../../../task/task.ts';
import type { TaskOptions } from '../../../task/queue.ts';
import { CapDirectory } from './caps/cap-directory.ts';
import { CapPass } from './caps/cap-pass.ts';
import { CAP_PASSES_MIGRATION, CAPS_MIGRATION, CapStore } from './caps/cap-store.ts';

/** Job options unless config.ts says otherwise. */
export const VPN_JOB_DEFAULTS: TaskOptions = { tries: 5, backoff: 2, timeout: 60, maxExceptions: 5 };
/** How often the data-cap pass reads the panels' traffic unless config.ts says otherwise (at least every 15 min). */
const CAP_PASS_EVERY_MS = 300_000;
/** How often the scheduler looks whether a pass is due. */
const CAP_TICK_MS = 10_000;

/** VpnProduct's config.ts section. */
const vpnProductConfigSchema = z.object({
  enabled: z.boolean(),
  version: z.string().min(1),
  api_timeout_ms: z.number().int().min(100).max(600_000).default(30_000),
  panel_connections: z.number().int().min(1).max(1024).default(16),
  job: z.object({ tries: z.number().int().min(1), backoff: z.number().min(0), timeout: z.number().positive(), maxExceptions: z.number().int().min(1) }).partial().optional(),
  /** New one-time links a customer may make per service and window (client area). */
  otl_links: linkBoundSchema.optional(),
  /** Data caps: how often the pass reads every panel's traffic (one request per panel). */
  caps: z.object({ every_ms: z.number().int().min(10_000).max(900_000) }).partial().optional(),
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
  /** Platform process only: the data-cap pass and its store. */
  caps: CapPass | null;
  capStore: CapStore | null;
}

/** A PanelRegistry over `directory` with `panel_connections` sockets per panel and `api_timeout_ms` per call. */
function createPanelRegistry(directory: PanelDirectory, config: Readonly<Record<string, unknown>>, clock: Clock): PanelRegistry {
  const settings = vpnProductConfigSchema.partial().parse(config);
  const timeout = settings.api_timeout_ms ?? 30_000;
  return new PanelRegistry(directory, { connections: settings.panel_connections ?? 16, headersTimeoutMs: timeout, bodyTimeoutMs: timeout }, 5_000, clock);
}

/** Placement over the registry's panels (status read through each panel's pooled client). */
function createPlacement(panels: PanelRegistry, clock: Clock): Placement {
  return new Placement({ panelsAt: (location) => panels.panelsAt(location), status: async (name, signal) => (await panels.client(name)).systemStatus(signal) }, clock);
}

function services(env: ExtensionEnv): VpnProductServices {
  if (env.store && env.sealer && env.platform) {
    const panelStore = new PanelStore(env.store, env.sealer, env.clock);
    const panels = createPanelRegistry(panelStore, env.config, env.clock);
    const capStore = new CapStore(env.store, env.clock);
    const settings = vpnProductConfigSchema.partial().parse(env.config);
    const caps = new CapPass({
      directory: new CapDirectory(env.platform, () => capStore.withAction()), store: capStore, client: (panel) => panels.client(panel),
      addTask: (job, queue, input, tags) => Task.add(job, queue, input, tags), calendar: env.platform.calendar,
      jobOptions: { ...VPN_JOB_DEFAULTS, ...(settings.job ?? {}) }, clock: env.clock, logger: env.logger,
      everyMs: settings.caps?.every_ms ?? CAP_PASS_EVERY_MS,
    });
    return {
      panels, placement: createPlacement(panels, env.clock), usernames: env.platform ? new HostUsernameDirectory(env.platform) : null, panelStore, panelAdmin: new PanelAdmin(panelStore),
      linkIssues: new LinkIssueLog(env.store, env.clock), caps, capStore,
    };
  }
  if (env.worker) {
    const panels = createPanelRegistry(new RemotePanelDirectory(env.worker), env.config, env.clock);
    return { panels, placement: createPlacement(panels, env.clock), usernames: null, panelStore: null, panelAdmin: null, linkIssues: null, caps: null, capStore: null };
  }
  throw new Error('VpnProduct needs the platform store or the worker API');
}

export const vpnProductManifest = defineManifest<VpnProductServices>({
  config: vpnProductConfigSchema,
  migrations: [...VPN_PRODUCT_MIGRATIONS, LINK_ISSUES_MIGRATION, CAPS_MIGRATION, LINK_CLAIMS_MIGRATION, CAP_PASSES_MIGRATION],
  services,
  provides: { 'panel-directory': (ext) => panelDirectoryCapability(ext.panels, ext.panelStore) },
  adminApi: (ext) => panelAdminRoutes(ext.panelAdmin!),
  workerApi: (ext) => panelWorkerRoutes(ext.panelStore!),
  adminPanels: (ext) => vpnProductAdminPanels(ext.panelStore!, ext.panelAdmin!),
  clientRoutes: () => clientAssetRoutes,
  scheduled: [{ name: 'data-caps', everyMs: CAP_TICK_MS, run: async (ext) => void (await ext.caps?.runIfDue()) }],
  hooks: (hooks, ext) => {
    if (!ext.caps) return;
    ext.caps.attachHooks(hooks);
    // A paid renewal whose period has begun (paid on or after its due date) lifts the cap at once; one paid early is
    // lifted by the pass on the day the new period begins.
    hooks.on('service.renewed', async (event) => {
      if (event.service_uuid) await ext.caps!.stepService(event.service_uuid);
    });
    hooks.on('service.package_changed', async (event) => {
      if (event.module === 'VpnProduct') await ext.caps!.packageChanged(event.service_uuid);
    });
  },
  close: (ext) => ext.panels.close(),
});
