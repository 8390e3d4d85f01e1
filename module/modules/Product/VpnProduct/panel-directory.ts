// VpnProduct's capability `panel-directory` (module/contract/capabilities.ts): its registered panels, read access to
// each through the pooled registry clients, and one-time links of accounts — what VpnFleet and Smtp use of it.
import { z } from 'zod';
import type { OneTimeLinkAnswer, PanelDirectoryCapability, PanelListing } from '../../../contract/capabilities.ts';
import { NO_PANEL_LOCATIONS, type PanelRegistry } from './panel-registry.ts';

const linkSchema = z.url({ protocol: /^https?$/ }).refine((url) => /\/otl\/[A-Za-z0-9_-]+$/.test(url), 'not a one-time link');

/** The registered panels (the platform's panel table), absent in a remote worker. */
export interface PanelList {
  list(): Promise<PanelListing[]>;
}

/** The capability over `registry` (clients) and `store` (the list; null in a remote worker). */
export function panelDirectoryCapability(registry: PanelRegistry, store: PanelList | null): PanelDirectoryCapability {
  return {
    async panels() {
      if (!store) throw new Error(NO_PANEL_LOCATIONS);
      return (await store.list()).map((p) => ({ name: p.name, location: p.location, api_url: p.api_url }));
    },
    reader: (name) => registry.client(name),
    async oneTimeLink(panel, accountName, signal): Promise<OneTimeLinkAnswer> {
      try {
        const client = await registry.client(panel);
        return { url: await client.call('GET', `/account/${encodeURIComponent(accountName)}/otl`, linkSchema, undefined, signal) };
      } catch (error) {
        return { url: null, reason: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}
