// Entry of the VpnProduct module for the platform loader (the class carries its manifest), and a typed handle on the
// services the manifest built, for the demo, benchmarks and tests.
import type { ModuleType } from '../../../contract/platform-context.ts';
import type { VpnProductServices } from './manifest.ts';

export { VpnProduct } from './vpn-product.ts';
export type { VpnProductServices } from './manifest.ts';

/** VpnProduct's services (panel store and admin, registry, usernames) in a host that loaded it. */
export function vpnProductServices(modules: { extension<E extends object>(type: ModuleType, name: string): E }): VpnProductServices {
  return modules.extension<VpnProductServices>('Product', 'VpnProduct');
}
