// In Chromium: every page has its favicon (admin, client area, the panel's public one-time-link page) and no console
// error (Chromium logged a 404 for /favicon.ico before); the roles page shows your own row without a role form or a
// Delete button, and deleting another admin asks first (a <details>) and works without JavaScript.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { until } from '../fixtures/platform/http.ts';
import { newPage, screenshot, sharedBrowser } from '../helpers/browser.ts';
import { ADMIN, LIMITED, logIn, startWebBrowserStack, type WebBrowserStack } from '../helpers/browser-session.ts';

let s: WebBrowserStack;
let service: string;
const CUSTOMER = { email: 'icon@browser.test', password: 'Icon-Pass-12' };
const chromium = sharedBrowser();

before(async () => {
  s = await startWebBrowserStack();
  const ops = s.stack.platform.platform.ops;
  const product = await ops.createProduct('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 50 });
  const customer = await s.web.customers.create(CUSTOMER);
  service = (await ops.createService(product.uuid, { username: 'icon_user' })).uuid;
  await s.web.customers.queries.assignService(service, customer.uuid);
  await ops.runAction(service, 'create', {});
  await until(async () => ((await s.stack.platform.platform.services.get(service))?.provision_status === 'completed' ? true : undefined), 20_000, 100);
});

after(async () => {
  await chromium.close();
  await s?.close();
});

/** Console errors of `page` with the URL each is about (a failed favicon load is one). */
function consoleErrors(page: Page): Array<{ text: string; url: string }> {
  const errors: Array<{ text: string; url: string }> = [];
  page.on('console', (message) => { if (message.type() === 'error') errors.push({ text: message.text(), url: message.location().url }); });
  page.on('pageerror', (error) => errors.push({ text: error.message, url: page.url() }));
  return errors;
}

/** The page's icon link: its href, checked to decode as an image in the page. */
async function pageIcon(page: Page): Promise<string> {
  const href = String(await page.locator('link[rel=icon]').getAttribute('href'));
  const decoded = await page.evaluate(async (src) => { const img = new Image(); img.src = src; await img.decode(); return img.naturalWidth > 0; }, href);
  assert.equal(decoded, true, `${page.url()}: the icon ${href.slice(0, 40)} decodes`);
  return href;
}

test('admin pages, client area and the panel one-time-link page have a favicon and log no error', { timeout: 90_000 }, async (t) => {
  const browser = await chromium.get(t);
  if (!browser) return;
  const { context, page } = await newPage(browser);
  const errors = consoleErrors(page);
  const visits: Array<[string, () => Promise<unknown>]> = [
    ['login page (plain layout)', () => page.goto(`${s.url}/admin/login`)],
    ['dashboard (admin layout)', () => logIn(page, `${s.url}/admin/login`, ADMIN)],
    ['my services (client layout)', () => logIn(page, `${s.url}/client/login`, CUSTOMER)],
    ['error page (plain layout)', () => page.goto(`${s.url}/client/services/00000000-0000-4000-8000-000000000000`)],
    ['service page', () => page.goto(`${s.url}/client/services/${service}?tab=connect`)],
  ];
  for (const [name, open] of visits) {
    await open();
    assert.equal(await pageIcon(page), '/assets/favicon.svg', name);
  }
  const icon = await page.request.get(`${s.url}/assets/favicon.svg`);
  assert.deepEqual([icon.status(), icon.headers()['content-type']], [200, 'image/svg+xml']);
  const answer = await page.request.get(`${s.url}/favicon.ico`);
  assert.deepEqual([answer.status(), answer.headers()['content-type']], [200, 'image/svg+xml'], 'what a browser asks for on its own');

  // The Connect tab's button makes a link (AJAX); the panel's page it opens carries its icon inline (its CSP allows data: images).
  await page.getByRole('button', { name: 'Create a one-time link' }).click();
  const link = await page.locator('[data-vpn-otl]').getAttribute('href');
  assert.match(String(link), /\/otl\/[0-9a-f]{80}$/);
  await page.goto(String(link));
  assert.match(await pageIcon(page), /^data:image\/svg\+xml;base64,/);
  await page.getByRole('button', { name: 'Show my configuration' }).click();
  await page.waitForSelector('#otl-qr');
  assert.match(await pageIcon(page), /^data:image\/svg\+xml;base64,/);
  // A JSON answer opened in the browser has no icon link: Chromium asks for /favicon.ico, which is there too.
  const json = await page.goto(`${s.url}/healthz`);
  assert.equal(json?.status(), 200);
  await page.goto(`${s.url}/client`);
  const missing = `${s.url}/client/services/00000000-0000-4000-8000-000000000000`;
  assert.deepEqual(errors.filter((e) => e.url !== missing), [], 'no console error on any page (but the 404 of the page asked for that does not exist)');
  await context.close();
});

test('roles page: your own row has no role form and no Delete; another admin is deleted after a confirming step', { timeout: 60_000 }, async (t) => {
  const browser = await chromium.get(t);
  if (!browser) return;
  const { context, page } = await newPage(browser, { phone: true });
  await logIn(page, `${s.url}/admin/login`, ADMIN);
  await page.goto(`${s.url}/admin/roles`);
  const own = page.locator('tr', { hasText: ADMIN.email });
  assert.equal(await own.locator('select[name=role_id]').count(), 0);
  assert.equal(await own.getByText('Delete').count(), 0);
  assert.match(String(await own.textContent()), /\(you\)/);
  const other = page.locator('tr', { hasText: LIMITED.email });
  const confirm = other.getByRole('button', { name: `Delete ${LIMITED.email} now` });
  assert.equal(await confirm.isVisible(), false, 'hidden until Delete is opened');
  await other.locator('summary', { hasText: 'Delete' }).click();
  await screenshot(page, 'admin-roles-delete-phone');
  await Promise.all([page.waitForURL(`${s.url}/admin/roles`), confirm.click()]);
  assert.match(String(await page.locator('.flash').textContent()), new RegExp(`Admin ${LIMITED.email.replace('.', '\\.')} deleted`));
  assert.equal(await page.locator('tr', { hasText: LIMITED.email }).count(), 0);
  assert.equal(await s.web.admins.findByEmail(LIMITED.email), null);
  await context.close();
});
