// Entry of the VpnFleet Plugin for the platform loader, and a typed handle on the services its manifest built.
import type { ModuleType } from '../../../contract/platform-context.ts';
import type { VpnFleetServices } from './manifest.ts';

export { VpnFleet } from './vpn-fleet.ts';
export type { VpnFleetServices } from './manifest.ts';

/** VpnFleet's services (fleet store, source, refresh queueing) in a host that loaded it. */
export function vpnFleetServices(modules: { extension<E extends object>(type: ModuleType, name: string): E }): VpnFleetServices {
  return modules.extension<VpnFleetServices>('Plugin', 'VpnFleet');
}
