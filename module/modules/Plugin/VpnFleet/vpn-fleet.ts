// The VpnFleet Plugin: admin pages and API of the panel fleet (status, version, license, accounts, servers, online
// peers, events), its permissions and sidebar entries, and refreshJob, queued by the scheduled refresh or the admin.
import { requirePermission, type ModuleRequest, type ModuleResponse } from '../../../contract/http.ts';
import type { PlatformContext } from '../../../contract/platform-context.ts';
import { Plugin, type PermissionEntry, type RouteEntry, type SidebarEntry } from '../../../contract/plugin.ts';
import { jobSuccess, type JobResult } from '../../../contract/result.ts';
import type { FleetStore, PanelSnapshot } from './fleet-store.ts';
import { vpnFleetManifest, type VpnFleetServices } from './manifest.ts';

export const VIEW = 'Plugin-VpnFleet-view';
export const REFRESH = 'Plugin-VpnFleet-refresh';
const NO_FLEET_STORE = 'The fleet pages are served by the platform process (no platform database here)';
const PAGE = 50;

/** Fleet totals shown above the table. */
export interface FleetTotals {
  panels: number;
  up: number;
  down: number;
  accounts: number;
  accounts_available: number;
  online_peers: number;
}

export function fleetTotals(panels: readonly PanelSnapshot[]): FleetTotals {
  const sum = (key: 'accounts' | 'accounts_available' | 'online_peers') => panels.reduce((n, p) => n + (p[key] ?? 0), 0);
  const up = panels.filter((p) => p.up).length;
  return { panels: panels.length, up, down: panels.length - up, accounts: sum('accounts'), accounts_available: sum('accounts_available'), online_peers: sum('online_peers') };
}

/** Plugin module `VpnFleet`. */
export class VpnFleet extends Plugin {
  static override version = '1.0.0';
  static manifest = vpnFleetManifest;
  private readonly ext: VpnFleetServices;

  constructor(ctx: PlatformContext) {
    super(ctx);
    const own = ctx as Partial<PlatformContext & VpnFleetServices>;
    if (!own.queueRefresh) throw new Error('VpnFleet needs the services of its manifest in its context');
    this.ext = own as VpnFleetServices;
  }

  override adminPermissions(): PermissionEntry[] {
    return [
      { name: 'View the VPN fleet', key: VIEW, description: 'See every panel\'s status, version, license, accounts, servers, online peers and the fleet events.' },
      { name: 'Refresh the VPN fleet', key: REFRESH, description: 'Queue a refresh of every panel\'s status now.' },
    ];
  }

  override adminWebRoutes(): RouteEntry[] {
    return [
      { method: 'get', uri: 'fleet', permission: VIEW, name: 'vpnfleet.fleet', controller: 'Fleet@index' },
      { method: 'get', uri: 'events', permission: VIEW, name: 'vpnfleet.events', controller: 'Fleet@events' },
      { method: 'post', uri: 'fleet/refresh', permission: REFRESH, name: 'vpnfleet.refresh', controller: 'Fleet@refresh' },
    ];
  }

  override adminApiRoutes(): RouteEntry[] {
    return [
      { method: 'get', uri: 'api/panels', permission: VIEW, name: 'vpnfleet.api.panels', controller: 'Fleet@apiPanels' },
      { method: 'get', uri: 'api/events', permission: VIEW, name: 'vpnfleet.api.events', controller: 'Fleet@apiEvents' },
      { method: 'post', uri: 'api/refresh', permission: REFRESH, name: 'vpnfleet.api.refresh', controller: 'Fleet@apiRefresh' },
    ];
  }

  override adminSidebar(): SidebarEntry[] {
    return [
      { title: 'Fleet', link: 'vpnfleet.fleet', active_links: ['vpnfleet.fleet', 'vpnfleet.refresh'], permission: VIEW },
      { title: 'Fleet events', link: 'vpnfleet.events', active_links: ['vpnfleet.events'], permission: VIEW },
    ];
  }

  /** Reads every panel into the fleet snapshot (queued by the scheduler or the admin; in a remote worker the platform does it). */
  async refreshJob(): Promise<JobResult> {
    const summary = await this.ext.runRefresh(this.abortSignal);
    this.logDebug('refresh', {}, summary);
    return jobSuccess(`${summary.up} of ${summary.panels} panels up`);
  }

  /** The fleet page. */
  async index(request: ModuleRequest): Promise<string> {
    check(request, VIEW);
    const panels = await this.store().list();
    return this.view('admin.fleet', {
      panels, totals: fleetTotals(panels), csrf: request.csrf ?? '', can_refresh: !request.admin || request.admin.hasPermission(REFRESH),
      queued: request.query.queued === '1',
    });
  }

  /** The fleet event log, newest first, paged (`?page=`, `?panel=`). */
  async events(request: ModuleRequest): Promise<string> {
    check(request, VIEW);
    const page = Math.max(1, Math.min(10_000, Number.parseInt(String(request.query.page ?? '1'), 10) || 1));
    const panel = typeof request.query.panel === 'string' && request.query.panel ? request.query.panel : null;
    const rows = await this.store().events({ panel, limit: PAGE + 1, offset: (page - 1) * PAGE });
    return this.view('admin.events', {
      events: rows.slice(0, PAGE), panel, page, prev: page > 1 ? page - 1 : null, next: rows.length > PAGE ? page + 1 : null,
    });
  }

  /** Queues a refresh, then back to the fleet page. */
  async refresh(request: ModuleRequest): Promise<ModuleResponse> {
    check(request, REFRESH);
    await this.ext.queueRefresh();
    return { status: 303, body: '', headers: { location: '/admin/modules/Plugin/VpnFleet/fleet?queued=1', 'content-type': 'text/plain; charset=utf-8' } };
  }

  async apiPanels(request: ModuleRequest): Promise<{ panels: PanelSnapshot[]; totals: FleetTotals }> {
    check(request, VIEW);
    const panels = await this.store().list();
    return { panels, totals: fleetTotals(panels) };
  }

  async apiEvents(request: ModuleRequest): Promise<unknown> {
    check(request, VIEW);
    const limit = Math.max(1, Math.min(500, Number.parseInt(String(request.query.limit ?? '50'), 10) || 50));
    return { events: await this.store().events({ panel: typeof request.query.panel === 'string' ? request.query.panel : null, limit }) };
  }

  async apiRefresh(request: ModuleRequest): Promise<ModuleResponse> {
    check(request, REFRESH);
    return { status: 202, body: { queued: true, task_id: await this.ext.queueRefresh() } };
  }

  private store(): FleetStore {
    if (!this.ext.fleet) throw new Error(NO_FLEET_STORE);
    return this.ext.fleet;
  }
}

/** hasPermission inside the controller (admins of the session-less token API hold every key). */
function check(request: ModuleRequest, key: string): void {
  if (request.admin) requirePermission(request, key);
}
