// The fleet refresh over a fake source and an in-memory fleet store: snapshots, up/down/removed events only on change,
// an Error status counts as down, totals.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { refreshFleet, type FleetSource } from '../../../module/modules/Plugin/VpnFleet/fleet-refresh.ts';
import { FleetStore, VPN_FLEET_MIGRATIONS, type FleetTables } from '../../../module/modules/Plugin/VpnFleet/fleet-store.ts';
import { openModuleStore } from '../../helpers/module-store.ts';
import { fleetTotals } from '../../../module/modules/Plugin/VpnFleet/vpn-fleet.ts';
import type { PanelClient } from '../../../module/modules/Product/VpnProduct/panel-client.ts';

function fakeClient(state: { status: string; accounts: number; down?: boolean }): PanelClient {
  const fail = async () => { throw new Error('cannot reach panel: ECONNREFUSED'); };
  return {
    systemStatus: state.down ? fail : async () => ({
      count_accounts: state.accounts, count_accounts_available: 50 - state.accounts, count_wireguard: 2, license: '2099-12-31T00:00:00+00:00',
      license_valid: true, status: state.status, version: '2.1.0',
    }),
    listServers: state.down ? fail : async () => ({ a: {}, b: {} }),
    onlinePeerCount: state.down ? fail : async () => 3,
  } as unknown as PanelClient;
}

test('refresh stores snapshots and records up/down/removed only when they change', async () => {
  const store = new FleetStore((await openModuleStore<FleetTables>('Plugin', 'VpnFleet', VPN_FLEET_MIGRATIONS)).store);
  const states: Record<string, { status: string; accounts: number; down?: boolean }> = { p1: { status: 'OK', accounts: 10 }, p2: { status: 'OK', accounts: 40 } };
  let names = ['p1', 'p2'];
  const source: FleetSource = {
    panels: async () => names.map((name) => ({ name, location: 'ams', api_url: `http://${name}` })),
    client: async (name) => fakeClient(states[name]),
  };
  let t = 0;
  const clock = { now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, t++)) };

  assert.deepEqual(await refreshFleet(source, store, clock), { panels: 2, up: 2, down: 0, removed: [] });
  const p1 = (await store.get('p1'))!;
  assert.equal(p1.up, true);
  assert.deepEqual([p1.version, p1.accounts, p1.accounts_available, p1.servers, p1.online_peers, p1.license_valid], ['2.1.0', 10, 40, 2, 3, true]);
  assert.deepEqual(fleetTotals(await store.list()), { panels: 2, up: 2, down: 0, accounts: 50, accounts_available: 50, online_peers: 6 });

  states.p1.down = true;
  states.p2.status = 'Error: wireguard-go exited';
  await refreshFleet(source, store, clock);
  assert.equal((await store.get('p1'))!.error, 'cannot reach panel: ECONNREFUSED');
  assert.equal((await store.get('p1'))!.accounts, null);
  assert.equal((await store.get('p2'))!.up, false);
  assert.equal((await store.get('p2'))!.error, 'Error: wireguard-go exited');

  await refreshFleet(source, store, clock);
  names = ['p2'];
  await refreshFleet(source, store, clock);
  assert.deepEqual((await store.list()).map((p) => p.name), ['p2']);
  assert.deepEqual((await store.events({ limit: 20 })).map((e) => `${e.event}:${e.panel}`), ['panel.removed:p1', 'panel.down:p2', 'panel.down:p1', 'panel.up:p2', 'panel.up:p1']);
  assert.deepEqual((await store.events({ panel: 'p2' })).map((e) => e.event), ['panel.down', 'panel.up']);
});
