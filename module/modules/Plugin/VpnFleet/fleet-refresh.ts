// The fleet refresh: every panel VpnProduct provisions onto is read (GET /system/status, /wireguard, /wireguard/online)
// into VpnFleet's snapshot table; a panel that cannot be read is stored as down with the reason, and every change of
// up/down is recorded as a fleet event.
import type { Clock } from '../../../../shared/clock.ts';
import type { PanelListing, PanelReader } from '../../../contract/capabilities.ts';
import type { FleetStore, PanelSnapshot } from './fleet-store.ts';

/** A registered panel (capability `panel-directory`). */
export type FleetPanel = PanelListing;

/** Where the refresh finds the panels and their clients (the `panel-directory` capability, or a test's twin). */
export interface FleetSource {
  panels(): Promise<FleetPanel[]>;
  client(name: string): Promise<PanelReader>;
}

/** Panels read at the same time. */
const REFRESH_CONCURRENCY = 8;
const PANEL_TIMEOUT_MS = 10_000;

/** Outcome of one refresh. */
export interface RefreshSummary {
  panels: number;
  up: number;
  down: number;
  removed: string[];
}

/** Reads one panel into a snapshot (down with the first error when any read fails). */
async function probePanel(panel: FleetPanel, client: () => Promise<PanelReader>, at: string, signal?: AbortSignal): Promise<PanelSnapshot> {
  const base = { name: panel.name, location: panel.location, api_url: panel.api_url, refreshed_at: at };
  try {
    const c = await client();
    const timeout = AbortSignal.timeout(PANEL_TIMEOUT_MS);
    const sig = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const [status, servers, online] = await Promise.all([c.systemStatus(sig), c.listServers(sig), c.onlinePeerCount(sig)]);
    const up = !status.status.startsWith('Error');
    return {
      ...base, up, status: status.status, version: status.version, license: status.license, license_valid: status.license_valid,
      accounts: status.count_accounts, accounts_available: status.count_accounts_available, servers: Object.keys(servers).length,
      online_peers: online, error: up ? null : status.status,
    };
  } catch (error) {
    if (signal?.aborted) throw error;
    return {
      ...base, up: false, status: null, version: null, license: null, license_valid: null, accounts: null,
      accounts_available: null, servers: null, online_peers: null, error: error instanceof Error ? error.message : String(error),
    };
  }
}

/** Refreshes every panel's snapshot; records `panel.up` / `panel.down` on a change and `panel.removed` for dropped ones. */
export async function refreshFleet(source: FleetSource, store: FleetStore, clock: Clock, signal?: AbortSignal): Promise<RefreshSummary> {
  const panels = await source.panels();
  const at = clock.now().toISOString();
  const snapshots: PanelSnapshot[] = [];
  for (let i = 0; i < panels.length; i += REFRESH_CONCURRENCY) {
    const batch = panels.slice(i, i + REFRESH_CONCURRENCY);
    snapshots.push(...(await Promise.all(batch.map((p) => probePanel(p, () => source.client(p.name), at, signal)))));
  }
  for (const snapshot of snapshots) {
    const previous = await store.put(snapshot);
    if (previous === null || previous.up !== snapshot.up) {
      await store.record(at, snapshot.up ? 'panel.up' : 'panel.down', { panel: snapshot.name, detail: snapshot.up ? `version ${snapshot.version}` : snapshot.error });
    }
  }
  const removed = await store.retain(panels.map((p) => p.name));
  for (const name of removed) await store.record(at, 'panel.removed', { panel: name });
  const up = snapshots.filter((s) => s.up).length;
  return { panels: snapshots.length, up, down: snapshots.length - up, removed };
}
