// VpnFleet's platform event listeners (the spec's hooks.php): every service event of a VpnProduct service is recorded
// in the fleet's event log with the panel the service lives on.
import { HOOK_EVENTS, type Hooks, type ServiceEvent } from '../../../../hooks.ts';
import type { FleetStore } from './fleet-store.ts';

/** The service events the fleet log keeps (the `service.*` ones of hooks.ts). */
const FLEET_SERVICE_EVENTS = HOOK_EVENTS.filter((event) => event.startsWith('service.'));

/** Registers the listeners; `panelOf` names the panel of a service (null when unknown). */
export function registerFleetHooks(hooks: Hooks, store: FleetStore, panelOf: (serviceUuid: string) => Promise<string | null>): void {
  for (const event of FLEET_SERVICE_EVENTS) {
    hooks.on(event, async (payload) => {
      const service = payload as ServiceEvent;
      if (service.module !== 'VpnProduct') return;
      await store.record(service.at, event, { panel: await panelOf(service.service_uuid), service_uuid: service.service_uuid, detail: service.reason ?? null });
    });
  }
}
