// Several panels per location and change_package moves against real panel processes: placement picks the panel with
// the most free accounts and never a down one; a move to another location creates on the new panel, then deletes on the
// old one; a move to another server of the same panel re-creates there; same location and server only re-plans.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { vpnProductServices } from '../../../module/modules/Product/VpnProduct/index.ts';
import { panel } from '../../fixtures/platform/http.ts';
import type { PanelProcess } from '../../fixtures/platform/processes.ts';
import { waitForAction, type Stack } from '../../fixtures/platform/setup.ts';
import { startTwoPanels, type TwoPanels } from './two-panels.ts';

let env: TwoPanels;
let stack: Stack;
let second: PanelProcess;

before(async () => {
  env = await startTwoPanels([['main', '10.88.0.1/22'], ['alt', '10.89.0.1/24']]);
  ({ stack, second } = env);
  for (const [name, location, p] of [['par-a', 'par', stack.panel], ['par-b', 'par', second], ['fra', 'fra', second]] as const) {
    const res = await api('POST', '/panels', { name, location, api_url: p.url, access_hash: p.accessHash });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  }
  // a panel that is down (never answers) registered straight in the store, named to sort first at `par`
  await vpnProductServices(stack.platform.platform.modules).panelStore!.upsert({ name: 'par-0', location: 'par', api_url: 'http://127.0.0.1:1', access_hash: 'x'.repeat(80) });
});

after(async () => {
  await env?.close();
});

const api = (method: string, path: string, body?: unknown) => env.api(method, path, body);
const accountOn = (p: PanelProcess, name: string) => panel(p.url, p.accessHash, 'GET', `/account/${name}`);

async function product(data: Record<string, unknown>): Promise<string> {
  const res = await api('POST', '/products', { module: 'VpnProduct', product_data: { plan_type: 'basic', bandwidth: 10, ...data } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.uuid;
}

async function provisioned(productUuid: string, username: string): Promise<{ uuid: string; provision: any }> {
  const created = await api('POST', '/services', { product_uuid: productUuid, service_data: { username } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const uuid = created.body.uuid;
  await api('POST', `/services/${uuid}/create`);
  const task = await waitForAction(stack, uuid, 'create');
  assert.equal(task.status, 'completed', task.lastError);
  return { uuid, provision: (await api('GET', `/services/${uuid}`)).body.provision_data };
}

async function changePackage(uuid: string, productUuid: string): Promise<any> {
  const before = (await api('GET', `/tasks?tag=${encodeURIComponent(`service:${uuid}`)}`)).body.tasks.length;
  assert.deepEqual((await api('POST', `/services/${uuid}/change_package`, { product_uuid: productUuid })).body, { status: 'success' });
  const task = await waitForAction(stack, uuid, 'change_package');
  assert.equal((await api('GET', `/tasks?tag=${encodeURIComponent(`service:${uuid}`)}`)).body.tasks.length, before + 1);
  assert.equal(task.status, 'completed', task.lastError);
  return (await api('GET', `/services/${uuid}`)).body;
}

test('the admin lists several panels per location, each under its name', async () => {
  const panels = (await api('GET', '/panels')).body.panels as Array<{ name: string; location: string }>;
  assert.deepEqual(panels.map((p) => `${p.location}/${p.name}`), ['ams/ams', 'fra/fra', 'par/par-0', 'par/par-a', 'par/par-b']);
});

test('placement: the panel with the most free accounts at the location, never the down one', async () => {
  // panel A already holds 3 accounts, so panel B (same free-tier limit) has more room
  for (let i = 0; i < 3; i++) {
    const res = await panel(stack.panel.url, stack.panel.accessHash, 'POST', '/account', { wg_name: 'main', allowed_IPs: `10.77.3.${10 + i}/32`, name: `filler${i}` });
    assert.equal(res.error, '');
  }
  const par = await product({ server_location: 'par' });
  const { provision } = await provisioned(par, 'placed_1');
  assert.equal(provision.panel, 'par-b');
  assert.equal(provision.panel_location, 'par');
  assert.equal((await accountOn(second, provision.account_name)).msg.username, 'placed_1');
  assert.equal((await accountOn(stack.panel, provision.account_name)).error, 'Account not found');
});

test('change_package to another location moves the account: created on the new panel, deleted on the old one', async () => {
  const ams = await product({ server_location: 'ams', bandwidth: 20 });
  const fra = await product({ server_location: 'fra', bandwidth: 50 });
  const { uuid, provision } = await provisioned(ams, 'mover_1');
  assert.equal(provision.panel, 'ams');
  assert.match(provision.address, /^10\.77\./);
  const name = provision.account_name;

  const service = await changePackage(uuid, fra);
  assert.equal(service.product_uuid, fra);
  assert.equal(service.provision_status, 'completed');
  assert.equal(service.provision_data.panel, 'fra');
  assert.equal(service.provision_data.panel_location, 'fra');
  assert.equal(service.provision_data.wg_server, 'alt', 'the first server (sorted) of the new panel');
  assert.match(service.provision_data.address, /^10\.89\.0\./);
  assert.equal('move' in service.provision_data, false, 'the move record is cleared');
  const moved = await accountOn(second, name);
  assert.equal(moved.error, '');
  assert.equal(moved.msg.username, 'mover_1');
  assert.equal(moved.msg.b_download, '50');
  assert.equal(moved.msg.allowed_IPs.replace(/\/32$/, ''), service.provision_data.address.replace(/\/32$/, ''));
  assert.equal((await accountOn(stack.panel, name)).error, 'Account not found', 'deleted on the old panel');

  // same location, another server of the same panel: re-created on that server
  const fraMain = await product({ server_location: 'fra', bandwidth: 60, wg_server: 'main' });
  const again = await changePackage(uuid, fraMain);
  assert.equal(again.provision_data.panel, 'fra');
  assert.equal(again.provision_data.wg_server, 'main');
  assert.match(again.provision_data.address, /^10\.88\./);
  const onMain = await accountOn(second, name);
  assert.equal(onMain.msg.wg_name, 'main');
  assert.equal(onMain.msg.b_download, '60');

  // same location and server: only the bandwidth changes
  const fraMainFast = await product({ server_location: 'fra', bandwidth: 90, wg_server: 'main' });
  const replanned = await changePackage(uuid, fraMainFast);
  assert.deepEqual({ ...replanned.provision_data }, { ...again.provision_data });
  assert.equal((await accountOn(second, name)).msg.b_download, '90');
});

test('a move interrupted after the create finishes on retry: the new account is adopted and the old one deleted', async () => {
  const ams = await product({ server_location: 'ams' });
  const fra = await product({ server_location: 'fra', wg_server: 'main' });
  const { uuid, provision } = await provisioned(ams, 'crashy_1');
  // the state a crash leaves: the move recorded, the account already on the new panel, the old one still there
  const { platform } = stack.platform;
  await platform.services.saveProvisionData(uuid, { ...provision, move: { panel: 'fra', location: 'fra', wg_server: 'main' } });
  const early = await panel(second.url, second.accessHash, 'POST', '/account', { wg_name: 'main', allowed_IPs: '10.88.2.200/32', name: provision.account_name, username: 'crashy_1', status: 'enable' });
  assert.equal(early.error, '');
  const service = await changePackage(uuid, fra);
  assert.equal(service.provision_data.panel, 'fra');
  assert.equal(service.provision_data.address.replace(/\/32$/, ''), '10.88.2.200', 'the account the interrupted attempt created is adopted');
  assert.equal((await accountOn(stack.panel, provision.account_name)).error, 'Account not found');
  const all = await panel(second.url, second.accessHash, 'GET', '/account');
  assert.equal((all.msg as any[]).filter((a) => a.username === 'crashy_1').length, 1);
});

test('a panel that filled up after it was chosen: the placement is dropped and the retry places the service elsewhere', async () => {
  // fill panel A (par-a) to its free-tier limit
  const status = (await panel(stack.panel.url, stack.panel.accessHash, 'GET', '/system/status')).msg as any;
  for (let i = 0; i < status.count_accounts_available; i++) {
    const res = await panel(stack.panel.url, stack.panel.accessHash, 'POST', '/account', { wg_name: 'main', allowed_IPs: `10.77.2.${10 + i}/32`, name: `full${i}` });
    assert.equal(res.error, '', `filler ${i}`);
  }
  const par = await product({ server_location: 'par' });
  const created = await api('POST', '/services', { product_uuid: par, service_data: { username: 'refilled_1' } });
  const uuid = created.body.uuid;
  // the state an attempt leaves after choosing par-a while it still had room
  await stack.platform.platform.services.saveProvisionData(uuid, { placement: { panel: 'par-a', location: 'par' } });
  await api('POST', `/services/${uuid}/create`);
  const task = await waitForAction(stack, uuid, 'create', 60_000);
  assert.equal(task.status, 'completed', task.lastError);
  assert.ok(task.attempts >= 2, 'the first attempt met the full panel');
  const provision = (await api('GET', `/services/${uuid}`)).body.provision_data;
  assert.equal(provision.panel, 'par-b');
  assert.equal((await accountOn(second, provision.account_name)).msg.username, 'refilled_1');
  assert.equal((await accountOn(stack.panel, provision.account_name)).error, 'Account not found');
});
