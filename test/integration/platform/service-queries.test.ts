// Admin reads and the username rule: GET /api/admin/services and GET /api/admin/module-logs (paged; filtered by status,
// product, location, text), and a username another live service holds on the same panel location refused at
// saveServiceData (422 naming the field).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { USERNAME_TAKEN } from '../../../module/modules/Product/VpnProduct/usernames.ts';
import { admin } from '../../fixtures/platform/http.ts';
import { registerPanel, startStack, waitForAction, type Stack } from '../../fixtures/platform/setup.ts';

let stack: Stack;
let ams: string;
let fra: string;
const svc: Record<string, string> = {};

const api = (method: string, path: string, body?: unknown) => admin(stack.platform.url, stack.token, method, path, body);

async function product(location: string): Promise<string> {
  const res = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: location, plan_type: 'basic', bandwidth: 10 } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.uuid;
}

before(async () => {
  stack = await startStack({ workers: 1 });
  await registerPanel(stack, 'ams');
  await registerPanel(stack, 'fra');
  ams = await product('ams');
  fra = await product('fra');
});

after(async () => {
  await stack?.close();
});

test('a username held by a live service at the same location is refused at saveServiceData with 422 on `username`', async () => {
  const first = await api('POST', '/services', { product_uuid: ams, service_data: { username: 'alice_vpn', password: 'Alice-pass-1234' } });
  assert.equal(first.status, 201);
  svc.a = first.body.uuid;

  const second = await api('POST', '/services', { product_uuid: ams, service_data: { username: 'alice_vpn' } });
  assert.equal(second.status, 422);
  assert.equal(second.body.error, 'invalid service data');
  assert.deepEqual(second.body.errors, { username: [USERNAME_TAKEN] });

  const elsewhere = await api('POST', '/services', { product_uuid: fra, service_data: { username: 'alice_vpn' } });
  assert.equal(elsewhere.status, 201, 'another location is another panel');
  svc.b = elsewhere.body.uuid;

  await stack.platform.platform.lifecycle.set(svc.a, 'terminated');
  const again = await api('POST', '/services', { product_uuid: ams, service_data: { username: 'alice_vpn' } });
  assert.equal(again.status, 201, 'a terminated service no longer holds its username');
  svc.c = again.body.uuid;

  const bob = await api('POST', '/services', { product_uuid: ams, service_data: { username: 'bob_vpn', password: 'Bob-pass-98765' } });
  svc.d = bob.body.uuid;
  assert.equal((await api('POST', `/services/${svc.d}/create`)).status, 200);
  assert.equal((await waitForAction(stack, svc.d, 'create')).status, 'completed');
  const cache = stack.platform.platform.modules.cache('Product', 'VpnProduct');
  assert.equal(cache.get('VpnProduct:first-server:ams'), 'main', "the job's server lookup sits in VpnProduct's shared cache, where the next job finds it");
});

test('GET /api/admin/services pages newest first and filters by status, product, location and text', async () => {
  const all = await api('GET', '/services');
  assert.equal(all.status, 200);
  assert.equal(all.body.total, 4);
  assert.deepEqual(all.body.services.map((s: any) => s.uuid), [svc.d, svc.c, svc.b, svc.a]);
  assert.deepEqual([all.body.page, all.body.per_page], [1, 50]);
  const text = JSON.stringify(all.body);
  for (const secret of ['Alice-pass-1234', 'Bob-pass-98765']) assert.equal(text.includes(secret), false, 'no secret in the list');

  const ids = async (query: string) => (await api('GET', `/services?${query}`)).body.services.map((s: any) => s.uuid);
  assert.deepEqual(await ids('status=completed'), [svc.d]);
  assert.deepEqual(await ids('status=terminated'), [svc.a]);
  assert.deepEqual(await ids(`product=${fra}`), [svc.b]);
  assert.deepEqual(await ids('location=fra'), [svc.b]);
  assert.deepEqual(await ids('location=ams&status=pending'), [svc.c]);
  assert.deepEqual(await ids('q=bob'), [svc.d]);
  assert.deepEqual(await ids(`q=${svc.a.slice(0, 13)}`), [svc.a]);
  assert.deepEqual(await ids('q=nobody-has-this'), []);

  const page1 = await api('GET', '/services?per_page=3&page=1');
  const page2 = await api('GET', '/services?per_page=3&page=2');
  assert.deepEqual(page1.body.services.map((s: any) => s.uuid), [svc.d, svc.c, svc.b]);
  assert.deepEqual(page2.body.services.map((s: any) => s.uuid), [svc.a]);
  assert.equal(page2.body.total, 4);
  assert.equal((await api('GET', '/services?status=bogus')).status, 400);
  assert.equal((await api('GET', '/services?per_page=0')).status, 400);
});

test('GET /api/admin/module-logs pages newest first and filters by module, level, service, product, location and text', async () => {
  const modules = stack.platform.platform.modules;
  modules.instance('Product', 'VpnProduct', { service_uuid: svc.b }).logInfo('probe-b', { note: 'hello from fra' }, 'ok');
  modules.instance('Product', 'VpnProduct', { service_uuid: svc.c }).logError('probe-c', { note: 'trouble at ams', password: 'Probe-secret-555' }, 'failed');

  const all = await api('GET', '/module-logs?module=VpnProduct');
  assert.equal(all.status, 200);
  assert.ok(all.body.total >= 2);
  assert.equal(all.body.logs[0].action, 'probe-c', 'newest first');
  assert.equal(JSON.stringify(all.body).includes('Probe-secret-555'), false, 'entries are scrubbed');

  const actions = async (query: string) => (await api('GET', `/module-logs?${query}`)).body.logs.map((l: any) => l.action);
  assert.deepEqual(await actions(`service=${svc.b}`), ['probe-b']);
  assert.deepEqual(await actions('level=error&q=probe'), ['probe-c']);
  assert.deepEqual(await actions(`product=${fra}&q=probe`), ['probe-b']);
  assert.deepEqual(await actions('location=ams&q=probe'), ['probe-c']);
  assert.deepEqual(await actions('q=hello from fra'), ['probe-b']);
  assert.deepEqual(await actions('status=pending&q=probe'), ['probe-c', 'probe-b'], "by the entry's service status");
  assert.deepEqual(await actions('status=completed&q=probe'), []);
  assert.deepEqual(await actions('type=Payment'), []);

  const first = await api('GET', '/module-logs?q=probe&per_page=1&page=1');
  const second = await api('GET', '/module-logs?q=probe&per_page=1&page=2');
  assert.deepEqual([first.body.logs[0].action, second.body.logs[0].action, first.body.total], ['probe-c', 'probe-b', 2]);
  assert.equal((await api('GET', '/module-logs?level=warning')).status, 400);
});
