// The VPN product's panel registry built from its config.ts section (pool size and per-call timeout).
import type { ModulesConfig } from '../../config.ts';
import { PanelRegistry, type PanelDirectory } from '../modules/Product/VpnProduct/panel-registry.ts';

/** A PanelRegistry over `directory` with `panel_connections` sockets per panel and `api_timeout_ms` per call. */
export function createPanelRegistry(directory: PanelDirectory, modulesConfig: ModulesConfig): PanelRegistry {
  const settings = modulesConfig.modules.Product.VpnProduct as Record<string, unknown> | undefined;
  const connections = typeof settings?.panel_connections === 'number' ? settings.panel_connections : 16;
  const timeout = typeof settings?.api_timeout_ms === 'number' ? settings.api_timeout_ms : 30_000;
  return new PanelRegistry(directory, { connections, headersTimeoutMs: timeout, bodyTimeoutMs: timeout });
}
