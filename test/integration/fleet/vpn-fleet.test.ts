// The VpnFleet Plugin in a running platform with two real panel processes: the refresh job (queued through its admin
// API route, as the scheduler queues it with Task.add) fills the fleet snapshot; a stopped panel turns down with an
// event; service events are logged with their panel; pages, permissions and sidebar come through the Plugin contract.
import { CapabilityHost } from '../../../module/platform/capability-host.ts';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ModuleRequest } from '../../../module/contract/http.ts';
import { resolveSidebarLink } from '../../../module/contract/plugin.ts';
import { pino } from 'pino';
import { vpnFleetServices } from '../../../module/modules/Plugin/VpnFleet/index.ts';
import { vpnFleetManifest } from '../../../module/modules/Plugin/VpnFleet/manifest.ts';
import { moduleWorkerCall } from '../../../module/platform/remote-worker.ts';
import { WorkerApiClient } from '../../../module/platform/worker-api/client.ts';
import { REFRESH, VIEW, type VpnFleet } from '../../../module/modules/Plugin/VpnFleet/vpn-fleet.ts';
import { until } from '../../fixtures/platform/http.ts';
import { removeDir, type PanelProcess } from '../../fixtures/platform/processes.ts';
import { waitForAction, type Stack } from '../../fixtures/platform/setup.ts';
import { startTwoPanels, type TwoPanels } from './two-panels.ts';

let env: TwoPanels;
let stack: Stack;
let second: PanelProcess | null = null;

before(async () => {
  env = await startTwoPanels([['edge', '10.91.0.1/24']]);
  ({ stack, second } = env);
  const res = await api('POST', '/panels', { name: 'ams-2', location: 'ams', api_url: second.url, access_hash: second.accessHash });
  assert.equal(res.status, 201, JSON.stringify(res.body));
});

after(async () => {
  await env?.close();
});

const api = (method: string, path: string, body?: unknown) => env.api(method, path, body);

/** Calls a VpnFleet admin route with the admin token. */
async function fleetRoute(method: string, uri: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${stack.platform.url}/admin/modules/Plugin/VpnFleet/${uri}`, {
    method, headers: { authorization: `Bearer ${stack.token}`, accept: 'application/json' }, signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Queues a refresh through the API route and waits for that task to complete. */
async function refresh(): Promise<void> {
  const queued = await fleetRoute('POST', 'api/refresh');
  assert.equal(queued.status, 202, JSON.stringify(queued.body));
  const id = queued.body.task_id;
  const task = await until(async () => {
    const t = (await api('GET', `/tasks/${id}`)).body;
    return t && ['completed', 'failed'].includes(t.status) ? t : undefined;
  }, 30_000, 50);
  assert.equal(task.status, 'completed', task.lastError);
}

const plugin = () => stack.platform.platform.modules.instance<VpnFleet>('Plugin', 'VpnFleet');
const asAdmin = (keys: string[], query: Record<string, unknown> = {}): ModuleRequest => ({
  method: 'GET', headers: {}, query, body: null, admin: { email: 'a@example.test', hasPermission: (k) => keys.includes(k) }, csrf: 'tok',
});

test('the refresh job reads every panel: status, version, license, accounts, servers and online peers', async () => {
  await refresh();
  const { panels, totals } = (await fleetRoute('GET', 'api/panels')).body;
  assert.deepEqual(panels.map((p: any) => [p.name, p.location, p.up]), [['ams', 'ams', true], ['ams-2', 'ams', true]]);
  const status = (await fetch(`${second!.url}/api/v1/system/status`, { headers: { cookie: `access_hash=${second!.accessHash}` } }).then((r) => r.json())).msg;
  const edge = panels.find((p: any) => p.name === 'ams-2');
  assert.equal(edge.version, status.version);
  assert.equal(edge.license_valid, status.license_valid);
  // the test panels run on the free tier: `license` is the time of each answer, so only its form can be compared
  assert.equal(status.license_valid, false);
  assert.match(edge.license, /^\d{4}-\d{2}-\d{2}T/);
  assert.equal(edge.accounts, status.count_accounts);
  assert.equal(edge.accounts_available, status.count_accounts_available);
  assert.equal(edge.servers, 1);
  assert.equal(edge.online_peers, 0);
  assert.equal(edge.error, null);
  assert.equal(totals.panels, 2);
  assert.equal(totals.up, 2);
  const events = (await fleetRoute('GET', 'api/events')).body.events;
  assert.deepEqual(events.filter((e: any) => e.event === 'panel.up').map((e: any) => e.panel).sort(), ['ams', 'ams-2']);
});

test('service events are logged with the panel the service was placed on', async () => {
  const product = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'basic', bandwidth: 5 } });
  const created = await api('POST', '/services', { product_uuid: product.body.uuid, service_data: { username: 'fleet_1' } });
  const uuid = created.body.uuid;
  await api('POST', `/services/${uuid}/create`);
  assert.equal((await waitForAction(stack, uuid, 'create')).status, 'completed');
  const placed = (await api('GET', `/services/${uuid}`)).body.provision_data.panel;
  const events = (await vpnFleetServices(stack.platform.platform.modules).fleet!.events({ limit: 20 })).filter((e) => e.service_uuid === uuid);
  assert.deepEqual(events.map((e) => [e.event, e.panel]), [['service.provisioned', placed], ['service.created', null]]);
});

test('a panel that stops answering is stored as down with the reason and a panel.down event', async () => {
  await second!.stop();
  removeDir(second!.dataDir);
  second = null;
  await refresh();
  const { panels, totals } = (await fleetRoute('GET', 'api/panels')).body;
  const edge = panels.find((p: any) => p.name === 'ams-2');
  assert.equal(edge.up, false);
  assert.match(edge.error, /^cannot reach panel: /);
  assert.equal(edge.accounts, null);
  assert.deepEqual([totals.up, totals.down], [1, 1]);
  const down = (await fleetRoute('GET', 'api/events?panel=ams-2')).body.events[0];
  assert.equal(down.event, 'panel.down');
  assert.equal(down.detail, edge.error);
  // a second refresh records no new event (no change)
  await refresh();
  assert.equal((await fleetRoute('GET', 'api/events?panel=ams-2')).body.events.length, 2);
});

test('pages render the snapshot; controllers check permissions; sidebar links resolve to the web routes', async () => {
  const html = await plugin().index(asAdmin([VIEW, REFRESH]));
  assert.match(html, /data-panel="ams-2"/);
  assert.match(html, /status-failed">down/);
  assert.match(html, /name="_csrf" value="tok"/);
  assert.doesNotMatch(await plugin().index(asAdmin([VIEW])), /Refresh now/, 'no refresh button without the key');
  await assert.rejects(plugin().index(asAdmin([])), { message: 'Insufficient permissions' });
  await assert.rejects(plugin().refresh({ ...asAdmin([VIEW]), method: 'POST' }), { message: 'Insufficient permissions' });
  assert.match(await plugin().events(asAdmin([VIEW], { panel: 'ams-2' })), /panel\.down/);

  const keys = plugin().adminPermissions().map((p) => p.key);
  assert.deepEqual(keys, ['Plugin-VpnFleet-view', 'Plugin-VpnFleet-refresh']);
  for (const route of [...plugin().adminWebRoutes(), ...plugin().adminApiRoutes()]) assert.ok(keys.includes(route.permission), route.name);
  const hrefs = plugin().adminSidebar().map((entry) => resolveSidebarLink(entry, plugin().adminWebRoutes(), 'Plugin', 'VpnFleet'));
  assert.deepEqual(hrefs.map((h) => [h.route?.name, h.href]), [
    ['vpnfleet.fleet', '/admin/modules/Plugin/VpnFleet/fleet'],
    ['vpnfleet.events', '/admin/modules/Plugin/VpnFleet/events'],
  ]);
});

test('a remote worker (no platform database) has the platform run the refresh through the worker route', async () => {
  const token = (await stack.platform.platform.workerTokens.create('fleet-test')).token;
  const client = new WorkerApiClient({ url: stack.platform.url, token, requestTimeoutMs: 20_000 });
  try {
    const remote = vpnFleetManifest.services!({
      store: null, platform: null, capabilities: new CapabilityHost(), sealer: null, worker: moduleWorkerCall(client, 'Plugin', 'VpnFleet'), config: { enabled: true, version: '1.0.0' },
      logger: pino({ level: 'silent' }), clock: { now: () => new Date() },
    });
    assert.equal(remote.fleet, null);
    const before = (await vpnFleetServices(stack.platform.platform.modules).fleet!.get('ams'))!.refreshed_at;
    const summary = await remote.runRefresh();
    assert.deepEqual(summary, { panels: 2, up: 1, down: 1, removed: [] });
    assert.ok((await vpnFleetServices(stack.platform.platform.modules).fleet!.get('ams'))!.refreshed_at >= before);
    const refused = await fetch(`${stack.platform.url}/api/worker/modules/Plugin/VpnFleet/refresh`, { headers: { authorization: `Bearer ${stack.token}` } });
    assert.equal(refused.status, 401, 'an admin token is not a worker token');
  } finally {
    await client.close();
  }
});
