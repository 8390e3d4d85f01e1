// Admin pages in Chromium (desktop and phone): log in, a product's 422 errors next to its fields, fix them, create a
// service for a customer, run create behind its confirmation and watch it reach `completed` (a real panel process);
// an admin whose role lacks the key gets 403. One platform stack and one Chromium per file, a context per viewport, the
// tests at once. Screenshots of each page under test-artifacts/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newPage, screenshot, sharedBrowser } from '../helpers/browser.ts';
import { ADMIN, fitsWidth, LIMITED, logIn, startWebBrowserStack, waitForStatus, type WebBrowserStack } from '../helpers/browser-session.ts';

let s: WebBrowserStack;
const chromium = sharedBrowser();

before(async () => {
  s = await startWebBrowserStack();
});

after(async () => {
  await chromium.close();
  await s?.close();
});

describe('admin pages', { concurrency: 3 }, () => {
  for (const phone of [false, true]) {
    const tag = phone ? 'phone' : 'desktop';
    test(`${tag}: login, product 422 then fixed, service created and provisioned to completed`, { timeout: 45_000 }, async (t) => {
      const browser = await chromium.get(t);
      if (!browser) return;
      const { context, page } = await newPage(browser, { phone });
      try {
        await logIn(page, `${s.url}/admin/login`, ADMIN);
        assert.equal(new URL(page.url()).pathname, '/admin');
        await screenshot(page, `admin-dashboard-${tag}`);
        assert.ok(await fitsWidth(page), 'dashboard fits the viewport');

        await page.goto(`${s.url}/admin/products/new?module=VpnProduct`);
        // Location and plan type are select boxes (the panels' locations, the module's plan types): left unchosen.
        await page.fill('input[name=bandwidth]', '0');
        await page.click('.product-form button[type=submit]');
        const err = (field: string) => page.locator(`.field-error[data-field=${field}]`);
        assert.equal((await err('name').textContent())?.trim(), 'The name field is required.');
        assert.equal((await err('server_location').textContent())?.trim(), 'The server location field is required.');
        assert.match((await err('plan_type').textContent()) ?? '', /plan type field is required/i);
        assert.match((await err('bandwidth').textContent()) ?? '', /at least 1/);
        assert.ok(await err('bandwidth').isVisible());
        // Each message sits right under its own input.
        const input = await page.locator('input[name=bandwidth]').boundingBox();
        const message = await err('bandwidth').boundingBox();
        assert.ok(input && message && message.y >= input.y + input.height - 1 && message.y - (input.y + input.height) < 40, 'error below its field');
        await screenshot(page, `admin-product-422-${tag}`);

        await page.fill('input[name=name]', `Amsterdam ${tag}`);
        await page.selectOption('select[name=server_location]', 'ams');
        await page.selectOption('select[name=plan_type]', 'basic');
        await page.fill('input[name=bandwidth]', '100');
        await Promise.all([page.waitForURL(/\/admin\/products\/[0-9a-f-]{36}$/), page.click('.product-form button[type=submit]')]);
        assert.match(await page.locator('.flash').textContent() ?? '', /created/);
        const productUuid = page.url().split('/').pop()!;

        const email = `buyer-${tag}@browser.test`;
        await s.web.customers.create({ email, password: 'Buyer-Pass-1' });
        await page.goto(`${s.url}/admin/services/new`);
        await page.selectOption('select[name=product_uuid]', productUuid);
        await page.fill('input[name=username]', `web_${tag}`);
        await page.fill('input[name=customer_email]', email);
        await Promise.all([page.waitForURL(/\/admin\/services\/[0-9a-f-]{36}$/), page.click('main button[type=submit]')]);
        assert.equal((await page.locator('#provision-status').textContent())?.trim(), 'pending');
        await screenshot(page, `admin-service-${tag}`);
        await page.click('a.button:text-is("create")');
        assert.match(await page.locator('h1').textContent() ?? '', /Run create\?/);
        await screenshot(page, `admin-service-confirm-${tag}`);
        await page.click('button:has-text("Yes, run create")');
        await waitForStatus(page, 'completed');
        assert.match(await page.locator('table').nth(0).textContent() ?? '', /createJob\s*completed/);
        await screenshot(page, `admin-service-completed-${tag}`);
        await page.goto(`${s.url}/admin/services?status=completed`);
        assert.ok(await page.locator(`text=web_${tag}`).isVisible());
        await screenshot(page, `admin-services-${tag}`);
        assert.ok(await fitsWidth(page) || !phone, 'services list fits the phone');
        for (const [path, name] of [['/admin/panels', 'panels'], ['/admin/modules', 'modules'], ['/admin/roles', 'roles'], ['/admin/tasks', 'tasks']]) {
          await page.goto(`${s.url}${path}`);
          await screenshot(page, `admin-${name}-${tag}`);
        }
        assert.match(await page.locator('main').textContent() ?? '', /No stuck tasks/);
      } finally {
        await context.close();
      }
    });
  }

  test('a role without the key gets 403 Insufficient permissions, and the sidebar hides the page', { timeout: 30_000 }, async (t) => {
    const browser = await chromium.get(t);
    if (!browser) return;
    const { context, page } = await newPage(browser);
    try {
      await logIn(page, `${s.url}/admin/login`, LIMITED);
      assert.equal(await page.locator('nav.sidebar a[href="/admin/services"]').count(), 0);
      const res = await page.goto(`${s.url}/admin/services`);
      assert.equal(res?.status(), 403);
      assert.equal((await page.locator('p.error').textContent())?.trim(), 'Insufficient permissions');
      await screenshot(page, 'admin-403-desktop');
    } finally {
      await context.close();
    }
  });
});
