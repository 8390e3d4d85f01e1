// VpnProduct's IKEv2 downloads in the client area's connect tab (Android `.sswan`, Apple `.mobileconfig`, Windows
// `.ps1`) against a real panel process: while the panel has IKEv2 off for the account (no CA, then not on its server)
// the tab shows none and each action answers 404 with a clear message; with IKEv2 on, the tab links all three and each
// download is the panel's own answer with its content type and file name. Through the HTTP client area a logged-in
// customer gets them at `ajax/connect/<method>` (digits in the method pass the route schema).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { callClientAreaController, renderClientAreaTab } from '../../../module/contract/client-area.ts';
import type { ModuleRequest } from '../../../module/contract/http.ts';
import { IKEV2_NOT_ENABLED, IKEV2_SERVER_NOT_ENABLED } from '../../../module/modules/Product/VpnProduct/panel-client.ts';
import { IKEV2_UNAVAILABLE, type VpnProduct } from '../../../module/modules/Product/VpnProduct/vpn-product.ts';
import { createWebDeps } from '../../../module/platform/web/web-host.ts';
import { admin, panel } from '../../fixtures/platform/http.ts';
import { registerPanel, startStack, waitForAction, type Stack } from '../../fixtures/platform/setup.ts';
import { Browser } from '../../fixtures/web/web-stack.ts';

let stack: Stack;
let uuid: string;
let accountName: string;
const CUSTOMER = { email: 'ike@example.com', password: 'Ike-Pass-123' };

/** The three downloads: client-area method, panel route, file name, content type, label. */
const DOWNLOADS = [
  { method: 'ikev2', route: 'ikev2_profile', filename: 'ike_user_1.sswan', type: 'application/vnd.strongswan.profile', label: 'Android (strongSwan app)' },
  { method: 'ikev2Apple', route: 'ikev2_mobileconfig', filename: 'ike_user_1.mobileconfig', type: 'application/x-apple-aspen-config', label: 'iPhone, iPad and Mac' },
  { method: 'ikev2Windows', route: 'ikev2_windows', filename: 'ike_user_1.ps1', type: 'text/plain; charset=utf-8', label: 'Windows' },
] as const;

const api = (method: string, path: string, body?: unknown) => admin(stack.platform.url, stack.token, method, path, body);
const onPanel = (method: string, path: string, form?: Record<string, string>) => panel(stack.panel.url, stack.panel.accessHash, method, path, form);
const module = async () => (await stack.platform.platform.productForService(uuid)) as VpnProduct;
const req = (): ModuleRequest => ({ method: 'GET', headers: {}, query: {}, body: null });
const call = async (method: string) => callClientAreaController(await module(), 'connect', method, req());
const href = (method: string) => `/client/services/${uuid}/ajax/connect/${method}`;

async function panelOk(method: string, path: string, form?: Record<string, string>): Promise<unknown> {
  const res = await onPanel(method, path, form);
  assert.equal(res.error, '', `${method} ${path}: ${res.error}`);
  return res.msg;
}

before(async () => {
  stack = await startStack();
  await registerPanel(stack);
  const product = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'premium', bandwidth: 40 } });
  uuid = (await api('POST', '/services', { product_uuid: product.body.uuid, service_data: { username: 'ike_user_1' } })).body.uuid;
  await api('POST', `/services/${uuid}/create`);
  assert.equal((await waitForAction(stack, uuid, 'create')).status, 'completed');
  accountName = (await api('GET', `/services/${uuid}`)).body.provision_data.account_name;
});

after(async () => {
  await stack?.close();
});

/** The panel refuses the account's profiles with `error`; the tab offers none and every action answers 404 clearly. */
async function assertNoIkev2(error: string): Promise<void> {
  for (const d of DOWNLOADS) assert.equal((await onPanel('GET', `/account/${accountName}/${d.route}`)).error, error, d.route);
  const data = ((await call('get')).body as { success: true; data: any }).data;
  assert.equal(data.ready, true);
  assert.equal(data.ikev2_available, false);
  assert.deepEqual(data.ikev2_downloads, []);
  const html = await renderClientAreaTab(await module(), 'connect');
  assert.ok(html.includes('data-vpn-download'), 'the WireGuard download is still there');
  assert.doesNotMatch(html, /IKEv2|data-vpn-ikev2|ajax\/connect\/ikev2/);
  for (const d of DOWNLOADS) {
    const answer = await call(d.method);
    assert.equal(answer.status, 404, d.method);
    assert.deepEqual(answer.body, { success: false, message: IKEV2_UNAVAILABLE }, d.method);
  }
}

test('IKEv2 off for the account (no CA, then not on its server): no IKEv2 downloads, each action a 404 saying so', async () => {
  await assertNoIkev2(IKEV2_NOT_ENABLED);
  await panelOk('PUT', '/ikev2/generate_ca_rsa', { ca_common_name: 'Root', ca_organization: 'Org' });
  await panelOk('PUT', '/ikev2/generate_server_rsa', {
    server_domain: 'vpn.example.test', server_ip: '198.51.100.10', server_common_name: 'vpn.example.test', server_organization: 'Org',
  });
  await assertNoIkev2(IKEV2_SERVER_NOT_ENABLED);
});

test('IKEv2 on the account\'s server: the tab links all three; each download is the panel\'s answer, typed and named', async () => {
  await panelOk('PUT', '/wireguard/main', { ikev2: '1' });
  const data = ((await call('get')).body as { success: true; data: any }).data;
  assert.equal(data.ikev2_available, true);
  assert.deepEqual(data.ikev2_downloads.map((d: any) => [d.label, d.href, d.filename]), DOWNLOADS.map((d) => [d.label, href(d.method), d.filename]));

  const html = await renderClientAreaTab(await module(), 'connect');
  for (const d of DOWNLOADS) {
    assert.ok(html.includes(`<a class="button" href="${href(d.method)}"`), `plain link to ${d.method}`);
    assert.ok(html.includes(`<strong>${d.label}</strong>`), d.label);
    assert.ok(html.includes(`Download ${d.filename}</a>`), d.filename);
  }
  assert.match(html, /<ul class="cards" data-vpn-ikev2>/, 'the page\'s own card list (one column on a phone)');
  assert.equal((html.match(/data-vpn-ikev2-hint/g) ?? []).length, 1, 'one hint, under Windows');
  assert.ok(html.includes('<small data-vpn-ikev2-hint>Run it in an elevated PowerShell (Run as administrator): <code>powershell -ExecutionPolicy Bypass -File .\\ike_user_1.ps1</code></small>'));

  for (const d of DOWNLOADS) {
    const expected = await panelOk('GET', `/account/${accountName}/${d.route}`);
    assert.equal(typeof expected, 'string');
    const answer = await call(d.method);
    assert.equal(answer.status, 200, d.method);
    assert.equal(answer.body, expected, `${d.method} = the panel's ${d.route}`);
    assert.equal(answer.headers?.['content-type'], d.type);
    assert.equal(answer.headers?.['content-disposition'], `attachment; filename="${d.filename}"`);
  }
  const sswan = JSON.parse(String((await call('ikev2')).body));
  assert.equal(sswan.type, 'ikev2-eap', 'the .sswan stays JSON');
  assert.match(String((await call('ikev2Apple')).body), /^<\?xml[\s\S]*<plist/);
  assert.match(String((await call('ikev2Windows')).body), /Add-VpnConnection/);
});

test('HTTP client area: the customer downloads each profile at ajax/connect/<method>; the route takes digits, nothing else', async () => {
  const web = await createWebDeps(stack.platform.platform);
  const customer = await web.customers.create(CUSTOMER);
  await web.customers.queries.assignService(uuid, customer.uuid);
  const b = new Browser(stack.platform.app);
  assert.equal((await b.loginCustomer(CUSTOMER.email, CUSTOMER.password)).statusCode, 303);

  const page = await b.get(`/client/services/${uuid}?tab=connect`);
  assert.equal(page.statusCode, 200);
  for (const d of DOWNLOADS) assert.ok(page.body.includes(`href="${href(d.method)}"`), `the connect tab links ${d.method}`);

  for (const d of DOWNLOADS) {
    const file = await b.get(href(d.method));
    assert.equal(file.statusCode, 200, `${d.method}: ${file.body.slice(0, 200)}`);
    assert.equal(file.body, await panelOk('GET', `/account/${accountName}/${d.route}`));
    assert.equal(file.headers['content-type'], d.type);
    assert.equal(file.headers['content-disposition'], `attachment; filename="${d.filename}"`);
  }

  for (const bad of ['2ikev2', 'ikev2_apple', 'ikev2-apple', `a${'b'.repeat(64)}`]) {
    assert.equal((await b.json('GET', href(bad))).statusCode, 400, `${bad} is refused by the route schema`);
  }
  const lower = await b.json('GET', href('ikev2apple'));
  assert.equal(lower.statusCode, 404, 'passes the schema, but the handler is controllerClient_connectIkev2Apple');
  assert.deepEqual(lower.json(), { success: false, message: 'Not found' });
  assert.equal((await b.json('GET', href(`a${'b'.repeat(63)}`))).statusCode, 404, '64 characters pass the schema');
});
