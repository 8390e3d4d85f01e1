// What VpnFleet contributes to the host: its config section, its tables (fleet snapshot and event log), the fleet source
// (capability `panel-directory`, provided by VpnProduct), the scheduled refresh (queued with Task.add), the worker route a remote
// worker's refresh goes through, and its hook listeners.
import { z } from 'zod';
import type { Clock } from '../../../../shared/clock.ts';
import { MODULE_QUEUE } from '../../../contract/product-jobs.ts';
import type { Capabilities } from '../../../contract/capabilities.ts';
import type { PlatformReads } from '../../../contract/platform-reads.ts';
import { defineManifest, type ExtensionEnv } from '../../../platform/extension.ts';
import { MODULE_JOB } from '../../../task/module-job.ts';
import { Task } from '../../../task/task.ts';
import { refreshFleet, type FleetSource, type RefreshSummary } from './fleet-refresh.ts';
import { FleetStore, VPN_FLEET_MIGRATIONS } from './fleet-store.ts';
import { registerFleetHooks } from './hooks.ts';

/** VpnFleet's config.ts section. */
const vpnFleetConfigSchema = z.object({
  enabled: z.boolean(),
  version: z.string().min(1),
  /** How often the fleet is refreshed (a queued refreshJob). */
  refresh_every_ms: z.number().int().min(1_000).max(86_400_000).default(60_000),
});

/** Tags of the queued refresh. */
const REFRESH_TAGS = ['fleet_refresh'];
/** How often the scheduler looks whether a refresh is due. */
const SCHEDULER_TICK_MS = 1_000;

/** The module's services, merged into its context. Null members in a remote worker (no platform database). */
export interface VpnFleetServices {
  fleet: FleetStore | null;
  fleetSource: FleetSource | null;
  /**
   * Runs a refresh on the platform process: there directly, in a remote worker (no platform database) through
   * VpnFleet's worker route `GET /api/worker/modules/Plugin/VpnFleet/refresh`.
   */
  runRefresh(signal?: AbortSignal): Promise<RefreshSummary>;
  /** The panel a service's account lives on, from its provision data. */
  panelOfService(serviceUuid: string): Promise<string | null>;
  /** Queues a refresh when `refresh_every_ms` passed since the last one; answers the task id or null. */
  queueRefreshIfDue(): Promise<string | null>;
  /** Queues a refresh now (the admin's button). */
  queueRefresh(): Promise<string>;
  close(): Promise<void>;
}

const refreshSummarySchema = z.object({ panels: z.number().int(), up: z.number().int(), down: z.number().int(), removed: z.array(z.string()) });

/** Queues `refreshJob` of VpnFleet: `Task.add('ModuleJob', 'Module', {module, method, ...}, ['fleet_refresh'])`. */
function queueFleetRefresh(): Promise<string> {
  return Task.add(MODULE_JOB, MODULE_QUEUE, { module: { type: 'Plugin', name: 'VpnFleet' }, method: 'refreshJob', tries: 1, backoff: 10, timeout: 120, maxExceptions: 1 }, REFRESH_TAGS);
}

/** Fleet source over the `panel-directory` capability (resolved at each refresh: its provider may be switched). */
function fleetSource(capabilities: Capabilities): FleetSource {
  return {
    panels: () => capabilities.get('panel-directory').panels(),
    client: (name) => capabilities.get('panel-directory').reader(name),
  };
}

/** The panel a service's account lives on (VpnProduct's provision data: `panel`, else `panel_location`). */
async function panelOf(platform: PlatformReads, serviceUuid: string): Promise<string | null> {
  const data = (await platform.service(serviceUuid))?.provision_data ?? {};
  const panel = data.panel ?? data.panel_location;
  return typeof panel === 'string' ? panel : null;
}

function services(env: ExtensionEnv): VpnFleetServices {
  const settings = vpnFleetConfigSchema.partial().parse(env.config);
  const every = settings.refresh_every_ms ?? 60_000;
  const clock: Clock = env.clock;
  if (!env.store || !env.platform) {
    // A remote worker: the interval starts at the first tick and lives in this process.
    let last: number | null = null;
    const queueRefresh = async () => {
      last = clock.now().getTime();
      return queueFleetRefresh();
    };
    const common = {
      queueRefresh,
      async queueRefreshIfDue() {
        const now = clock.now().getTime();
        if (last === null) last = now;
        return now - last >= every ? queueRefresh() : null;
      },
    };
    const worker = env.worker;
    const runRefresh = async () => {
      if (!worker) throw new Error('VpnFleet needs the platform store or the worker API');
      return refreshSummarySchema.parse(await worker.get('/refresh'));
    };
    return { ...common, fleet: null, fleetSource: null, runRefresh, panelOfService: async () => null, close: async () => undefined };
  }
  const source = fleetSource(env.capabilities);
  const platform = env.platform;
  const fleet = new FleetStore(env.store);
  /**
   * With the platform store the interval is shared by every platform process (a conditional write on the fleet's
   * refresh row: one process queues each refresh) and starts from the newest stored snapshot: a fleet never refreshed,
   * or refreshed longer than `every` ago, is refreshed at the first tick, so the admin page is not empty after a start.
   */
  const since = async () => (await fleet.lastRefreshedAt()) ?? clock.now().getTime() - every;
  return {
    async queueRefresh() {
      await fleet.refreshQueued(clock.now().getTime());
      return queueFleetRefresh();
    },
    async queueRefreshIfDue() {
      return (await fleet.claimRefresh(clock.now().getTime(), every, since)) ? queueFleetRefresh() : null;
    },
    fleet,
    fleetSource: source,
    runRefresh: (signal) => refreshFleet(source, fleet, clock, signal),
    panelOfService: (uuid) => panelOf(platform, uuid).catch(() => null),
    close: async () => undefined,
  };
}

export const vpnFleetManifest = defineManifest<VpnFleetServices>({
  config: vpnFleetConfigSchema,
  migrations: VPN_FLEET_MIGRATIONS,
  services,
  requires: ['panel-directory'],
  /** `GET /refresh` (worker tokens only): a remote worker's refreshJob has the platform run the refresh. */
  workerApi: (ext) => async (app) => {
    app.get('/refresh', async () => ext.runRefresh());
  },
  scheduled: [{ name: 'refresh', everyMs: SCHEDULER_TICK_MS, run: async (ext) => void (await ext.queueRefreshIfDue()) }],
  hooks: (hooks, ext) => {
    if (ext.fleet) registerFleetHooks(hooks, ext.fleet, ext.panelOfService);
  },
  close: (ext) => ext.close(),
});
