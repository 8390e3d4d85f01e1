// PanelDirectory of a remote worker: a panel's URL and opened access hash from VpnProduct's worker route on the platform.
import { z } from 'zod';
import type { ModuleWorkerCall } from '../../../platform/extension.ts';
import type { PanelConnectionInfo, PanelDirectory } from './panel-registry.ts';

const panelConnectionSchema = z.object({ api_url: z.string().min(1), access_hash: z.string().min(1) });
const panelNamesSchema = z.object({ panels: z.array(z.string().min(1)) });

/**
 * Panel connections fetched through `GET /api/worker/modules/Product/VpnProduct/panels/:name` (the PanelRegistry
 * re-reads one at most every few seconds, so a re-registered panel is picked up). No `locations()`: product data is
 * validated on the platform only.
 */
export class RemotePanelDirectory implements PanelDirectory {
  constructor(private readonly worker: ModuleWorkerCall) {}

  async connection(name: string): Promise<PanelConnectionInfo | null> {
    const answer = await this.worker.get(`/panels/${encodeURIComponent(name)}`);
    return answer === null ? null : panelConnectionSchema.parse(answer);
  }

  /** `GET /api/worker/modules/Product/VpnProduct/locations/:location/panels`. */
  async panelsAt(location: string): Promise<string[]> {
    const answer = await this.worker.get(`/locations/${encodeURIComponent(location)}/panels`);
    return answer === null ? [] : panelNamesSchema.parse(answer).panels;
  }
}
