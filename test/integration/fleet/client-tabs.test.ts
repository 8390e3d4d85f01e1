// VpnProduct's client-area tabs called directly (no web host): the menu, each variables_<tab>() rendered, the
// controllerClient_* {success, data} answers and their 500, the config download and QR against the panel's own
// config_text, usage from the panel's statistics, regenerate keys through a queued job, and the module's asset route.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { callClientAreaController, renderClientAreaTab } from '../../../module/contract/client-area.ts';
import type { ModuleRequest } from '../../../module/contract/http.ts';
import { JOB_ERRORS } from '../../../module/contract/result.ts';
import { humanBytes } from '../../../module/modules/Product/VpnProduct/caps/cap-view.ts';
import { NOT_READY, usageMonths } from '../../../module/modules/Product/VpnProduct/client-tabs.ts';
import type { VpnProduct } from '../../../module/modules/Product/VpnProduct/vpn-product.ts';
import { admin, panel, until } from '../../fixtures/platform/http.ts';
import { registerPanel, startStack, waitForAction, type Stack } from '../../fixtures/platform/setup.ts';

type JsQr = typeof jsQRModule.default;
const jsQR: JsQr = (jsQRModule as unknown as { default?: JsQr }).default ?? (jsQRModule as unknown as JsQr);

let stack: Stack;
let uuid: string;
let pendingUuid: string;
let accountName: string;

const api = (method: string, path: string, body?: unknown) => admin(stack.platform.url, stack.token, method, path, body);
const onPanel = (path: string) => panel(stack.panel.url, stack.panel.accessHash, 'GET', path);
const module = async (id = uuid) => (await stack.platform.platform.productForService(id)) as VpnProduct;
const req = (method = 'GET'): ModuleRequest => ({ method, headers: {}, query: {}, body: null });
const call = async (tab: string, method: string, httpMethod = 'GET', id = uuid) => callClientAreaController(await module(id), tab, method, req(httpMethod));

before(async () => {
  stack = await startStack();
  await registerPanel(stack);
  const product = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'premium', bandwidth: 40 } });
  const created = await api('POST', '/services', { product_uuid: product.body.uuid, service_data: { username: 'tabby_1' } });
  uuid = created.body.uuid;
  await api('POST', `/services/${uuid}/create`);
  assert.equal((await waitForAction(stack, uuid, 'create')).status, 'completed');
  accountName = (await api('GET', `/services/${uuid}`)).body.provision_data.account_name;
  pendingUuid = (await api('POST', '/services', { product_uuid: product.body.uuid, service_data: { username: 'waiting_1' } })).body.uuid;
});

after(async () => {
  await stack?.close();
});

test('the menu lists overview, connect, usage and manage with templates under client/ (only the overview reusable while the store is unchanged)', async () => {
  assert.deepEqual((await module()).getClientAreaMenuConfig(), {
    overview: { name: 'Overview', template: 'client.overview', cache: 'store' },
    connect: { name: 'Connect', template: 'client.connect' },
    usage: { name: 'Usage', template: 'client.usage' },
    manage: { name: 'Manage', template: 'client.manage' },
  });
});

test('overview: {success, data} with status, location, plan, bandwidth and the address on the panel', async () => {
  const answer = await call('overview', 'get');
  assert.equal(answer.status, 200);
  const account = (await onPanel(`/account/${accountName}`)).msg;
  assert.deepEqual(answer.body, {
    success: true,
    data: {
      service_uuid: uuid, status: 'completed', location: 'ams', plan: 'premium', bandwidth_mbit: 40, username: 'tabby_1',
      address: account.allowed_IPs.replace(/\/32$/, ''), server: 'main',
    },
  });
  const html = await renderClientAreaTab(await module(), 'overview');
  assert.match(html, /<dd>premium<\/dd>/);
  assert.match(html, /40 Mbit\/s/);
  assert.ok(html.includes(`<code>${account.allowed_IPs.replace(/\/32$/, '')}</code>`));
});

test('connect: the config text and QR are the panel\'s; the download is a file named after the service', async () => {
  const config = (await onPanel(`/account/${accountName}/config_text`)).msg as string;
  const answer = await call('connect', 'get');
  assert.equal(answer.status, 200);
  const data = (answer.body as { success: true; data: any }).data;
  assert.equal(data.ready, true);
  assert.equal(data.config_text, config);
  assert.equal(data.filename, 'tabby_1.conf');
  const png = PNG.sync.read(Buffer.from(data.qr_data_url.replace(/^data:image\/png;base64,/, ''), 'base64'));
  const code = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
  assert.equal(code?.data, config, 'the QR code holds the configuration');
  const otlOffered = (await onPanel('/otl/config')).error === '';
  assert.equal(data.otl_available, otlOffered);

  const download = await call('connect', 'download');
  assert.equal(download.status, 200);
  assert.equal(download.body, config);
  assert.equal(download.headers?.['content-disposition'], 'attachment; filename="tabby_1.conf"');

  const html = await renderClientAreaTab(await module(), 'connect');
  assert.ok(html.includes(`href="/client/services/${uuid}/ajax/connect/download" download="tabby_1.conf"`));
  assert.ok(html.includes(`src="${data.qr_data_url.replace(/=/g, '&#x3D;')}"`), 'the QR image (handlebars escapes `=` in the attribute)');
  assert.equal(html.includes('Create a one-time link'), otlOffered);
  if (otlOffered) {
    assert.equal((await call('connect', 'otl', 'GET')).status, 405, 'a link is only made on POST');
    const link = await call('connect', 'otl', 'POST');
    assert.equal(link.status, 200);
    assert.match((link.body as any).data.url, /\/otl\/[0-9a-f]{80}$/);
    const page = await callClientAreaController(await module(), 'connect', 'otl', { ...req('POST'), headers: { accept: 'text/html' } });
    assert.equal(page.headers?.['content-type'], 'text/html; charset=utf-8');
    assert.match(String(page.body), /<a href="http:\/\/[^"]+\/otl\/[0-9a-f]{80}" data-vpn-otl>/, 'a page with the link for a browser without JavaScript');
    assert.ok(String(page.body).includes(`href="/client/services/${uuid}?tab&#x3D;connect"`));
  }
});

test('usage: the previous and current month from the panel\'s statistics, none before the service\'s creation, in human units and the reader\'s locale', async () => {
  const answer = await call('usage', 'get');
  assert.equal(answer.status, 200);
  const data = (answer.body as { success: true; data: any }).data;
  const created = new Date((await api('GET', `/services/${uuid}`)).body.created_at);
  const createdDay = created.toISOString().slice(0, 10);
  const label = (m: { year: number; month: number }) => `${m.year}-${String(m.month).padStart(2, '0')}`;
  assert.equal(data.available, true, `the stack's panel keeps statistics (${data.message})`);
  const months = usageMonths(new Date(), created);
  assert.deepEqual(data.months.map((m: any) => m.label), months.map(label));
  assert.equal(data.months[0].label, createdDay.slice(0, 7), 'the service was created this month: no month before it');
  const cur = months.at(-1)!;
  const stats = (await onPanel(`/account/${accountName}/traffic_statistics/${cur.year}/${cur.month}`)).msg as any[];
  const days = data.months.at(-1).days;
  assert.deepEqual(days, stats.filter((e) => e.date >= createdDay).map((e) => ({
    date: e.date, download: e.traffic_download, upload: e.traffic_upload, download_text: humanBytes(e.traffic_download), upload_text: humanBytes(e.traffic_upload),
  })));
  assert.ok(days.every((d: any) => d.date >= createdDay), 'no day before the creation');
  const html = await renderClientAreaTab(await module(), 'usage', { locale: 'de-DE' });
  assert.match(html, /data-usage-chart data-usage="\[/);
  const month = new Intl.DateTimeFormat('de-DE', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(`${label(cur)}-01T00:00:00Z`));
  assert.ok(html.includes(`<h2><time datetime="${label(cur)}">${month}</time></h2>`), 'the month in the reader\'s locale');
  assert.ok(html.includes(`Total: ${data.months.at(-1).total_download_text} downloaded`));
  assert.ok(html.includes('/client/modules/Product/VpnProduct/assets/uPlot.iife.min.js'));
});

test('usageMonths: the previous and the current month, none before the creation (across a year)', () => {
  const at = (iso: string) => new Date(iso);
  assert.deepEqual(usageMonths(at('2026-01-15T10:00:00Z')), [{ year: 2025, month: 12 }, { year: 2026, month: 1 }]);
  assert.deepEqual(usageMonths(at('2026-01-15T10:00:00Z'), at('2025-12-31T23:00:00Z')), [{ year: 2025, month: 12 }, { year: 2026, month: 1 }]);
  assert.deepEqual(usageMonths(at('2026-01-15T10:00:00Z'), at('2026-01-01T00:00:00Z')), [{ year: 2026, month: 1 }]);
  assert.deepEqual(usageMonths(at('2026-03-02T00:00:00Z'), at('2025-06-01T00:00:00Z')), [{ year: 2026, month: 2 }, { year: 2026, month: 3 }]);
});

test('a service without an account: tabs say so, handlers that need the account answer 500 with the generic text', async () => {
  const connect = await call('connect', 'get', 'GET', pendingUuid);
  assert.deepEqual((connect.body as any).data.message, NOT_READY);
  const usage = await call('usage', 'get', 'GET', pendingUuid);
  assert.equal((usage.body as any).data.available, false);
  for (const [tab, method, http] of [['connect', 'download', 'GET'], ['manage', 'regenerate', 'POST']] as const) {
    const failed = await call(tab, method, http, pendingUuid);
    assert.equal(failed.status, 500);
    assert.deepEqual(failed.body, { success: false, message: JOB_ERRORS.unexpected });
  }
  assert.match(await renderClientAreaTab(await module(pendingUuid), 'manage'), /Available once your VPN is set up/);
  assert.equal((await call('overview', 'nosuch')).status, 404);
});

test('manage: regenerate keys queues a job that gives the account a new key pair on the panel; GET is refused', async () => {
  const before = (await onPanel(`/account/${accountName}`)).msg;
  const oldConfig = (await onPanel(`/account/${accountName}/config_text`)).msg;
  const refused = await call('manage', 'regenerate', 'GET');
  assert.equal(refused.status, 405);
  const answer = await call('manage', 'regenerate', 'POST');
  assert.equal(answer.status, 200);
  assert.equal((answer.body as any).success, true);
  assert.equal((answer.body as any).data.queued, true);
  const task = await waitForAction(stack, uuid, 'regenerate_keys');
  assert.equal(task.status, 'completed', task.lastError);
  const afterAccount = (await onPanel(`/account/${accountName}`)).msg;
  assert.notEqual(afterAccount.public_key, before.public_key, 'a new public key on the panel');
  assert.notEqual(afterAccount.private_key, before.private_key);
  assert.equal(afterAccount.allowed_IPs, before.allowed_IPs, 'same address');
  assert.equal(afterAccount.username, 'tabby_1');
  assert.equal(afterAccount.b_download, before.b_download);
  const form = await renderClientAreaTab(await module(), 'manage', { csrf: 'csrf-token-1' });
  assert.ok(form.includes(`action="/client/services/${uuid}/ajax/manage/regenerate"`));
  assert.ok(form.includes('name="_csrf" value="csrf-token-1"'), 'the host\'s CSRF token reaches the form (works without JavaScript)');
  const newConfig = (await onPanel(`/account/${accountName}/config_text`)).msg;
  assert.notEqual(newConfig, oldConfig, 'the old configuration no longer matches');
  const service = (await api('GET', `/services/${uuid}`)).body;
  assert.equal(service.provision_status, 'completed', 'the lifecycle leaves the status alone');
  assert.equal('rekey_from' in service.provision_data, false);
  const connect = (await call('connect', 'get')).body as any;
  assert.equal(connect.data.config_text, newConfig, 'the client area shows the new configuration');

  // a browser without JavaScript posts the form: it is sent back to the tab
  const plain = await callClientAreaController(await module(), 'manage', 'regenerate', { ...req('POST'), headers: { accept: 'text/html,application/xhtml+xml' } });
  assert.equal(plain.status, 303);
  assert.equal(plain.headers?.location, `/client/services/${uuid}?tab=manage`);
  const second = await until(async () => {
    const tasks = (await api('GET', `/tasks?tag=${encodeURIComponent(`service:${uuid}`)}`)).body.tasks.filter((t: any) => t.tags.includes('regenerate_keys'));
    return tasks.length === 2 && tasks.every((t: any) => t.status === 'completed') ? tasks : undefined;
  }, 30_000, 50);
  assert.equal(second.length, 2);
  assert.notEqual((await onPanel(`/account/${accountName}`)).msg.public_key, afterAccount.public_key, 'keys changed again');
});

test('the module serves its chart assets locally and nothing else', async () => {
  const base = `${stack.platform.url}/client/modules/Product/VpnProduct/assets`;
  const uplot = await fetch(`${base}/uPlot.iife.min.js`);
  assert.equal(uplot.status, 200);
  assert.match(uplot.headers.get('content-type') ?? '', /javascript/);
  assert.match(await uplot.text(), /uPlot/);
  const own = await fetch(`${base}/vpn-client.js`);
  assert.equal(own.status, 200);
  assert.match(await own.text(), /data-usage-chart/);
  assert.equal((await fetch(`${base}/uPlot.min.css`)).status, 200);
  for (const bad of ['..%2Fmanifest.ts', 'package.json', 'x.js']) assert.equal((await fetch(`${base}/${bad}`)).status, 404, bad);
});
