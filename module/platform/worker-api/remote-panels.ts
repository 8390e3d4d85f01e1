// PanelDirectory over the platform's worker API: a panel's URL and opened access hash for a remote worker.
import type { PanelConnectionInfo, PanelDirectory } from '../../modules/Product/VpnProduct/panel-registry.ts';
import type { WorkerApiClient } from './client.ts';
import { panelConnectionSchema } from './schemas.ts';

/**
 * Panel connections fetched from the platform (the PanelRegistry re-reads one at most every few seconds, so a
 * re-registered panel is picked up). No `locations()`: product data is validated on the platform only.
 */
export class RemotePanelDirectory implements PanelDirectory {
  constructor(private readonly api: WorkerApiClient) {}

  async connection(location: string): Promise<PanelConnectionInfo | null> {
    return this.api.find(`/panels/${encodeURIComponent(location)}`, panelConnectionSchema);
  }
}
