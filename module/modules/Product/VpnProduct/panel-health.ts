// The admin pages' view of VpnProduct's panels: each registered panel's GET /system/status read live (version,
// license, accounts used and available), a panel that cannot be read shown as down with its error.
import type { AdminPanels, PanelHealth } from '../../../platform/extension.ts';
import { PanelClient, PanelError } from './panel-client.ts';
import type { PanelAdmin } from './panel-admin.ts';
import type { PanelStore } from './panel-store.ts';

const HEALTH_TIMEOUT_MS = 3_000;

async function readHealth(store: PanelStore, name: string): Promise<PanelHealth> {
  const panel = (await store.connection(name))!;
  const base = { name: panel.name, location: panel.location, api_url: panel.api_url };
  const client = new PanelClient({ apiUrl: panel.api_url, accessHash: panel.access_hash, connections: 1, connectTimeoutMs: HEALTH_TIMEOUT_MS, headersTimeoutMs: HEALTH_TIMEOUT_MS, bodyTimeoutMs: HEALTH_TIMEOUT_MS });
  try {
    const status = await client.systemStatus(AbortSignal.timeout(HEALTH_TIMEOUT_MS));
    return {
      ...base, reachable: true, version: status.version, error: null,
      accounts_used: status.count_accounts, accounts_available: status.count_accounts_available, license_valid: status.license_valid,
    };
  } catch (err) {
    const error = err instanceof PanelError ? err.message : `cannot reach panel: ${(err as Error).message}`;
    return { ...base, reachable: false, version: null, error, accounts_used: null, accounts_available: null, license_valid: null };
  } finally {
    void client.close();
  }
}

/** VpnProduct's AdminPanels over its panel store and registration service. */
export function vpnProductAdminPanels(store: PanelStore, admin: PanelAdmin): AdminPanels {
  return {
    health: async () => Promise.all((await store.list()).map((p) => readHealth(store, p.name))),
    add: async (input) => {
      await admin.registerPanel(input);
    },
  };
}
