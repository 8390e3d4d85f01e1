// The back office in Chromium (desktop, then phone): an admin creates a named plan with a monthly price and a data cap
// (50 GB, then throttled to 5 Mbit/s) in the product form, a customer orders it (a refused order keeps what was
// typed), pays on the Stripe double's page, is thanked and follows the link to the Connect tab of the provisioned
// service, whose Usage tab shows the allowance bar; the admin finds the invoice, refunds part of it through the gateway, and the revenue table of the month
// grows by the payment minus the refund (the uPlot charts drawn). Screenshots under test-artifacts/ (docs/billing.md: Back office).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { newPage, screenshot, sharedBrowser } from '../helpers/browser.ts';
import { ADMIN, fitsWidth, logIn, startWebBrowserStack, type WebBrowserStack } from '../helpers/browser-session.ts';
import { startStripeDouble, type StripeDouble } from '../helpers/stripe-double.ts';

const SECRET_KEY = 'sk_test_backoffice';
const WEBHOOK_SECRET = 'whsec_backoffice';
let s: WebBrowserStack;
let double: StripeDouble;
const chromium = sharedBrowser();

before(async () => {
  s = await startWebBrowserStack();
  const started = await startStripeDouble({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
  double = started.double;
  const gateway = await s.stack.platform.platform.moduleAdmin.createInstance('Payment', 'Stripe', 'Card', { secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET, api_base: started.url });
  double.webhookUrl = `${s.url}/webhooks/payment/${gateway.uuid}`;
});

after(async () => {
  await chromium.close();
  await double?.close();
  await s?.close();
});

/** The net revenue of the current month in EUR as the revenue table shows it (0 before any payment). */
async function netThisMonth(page: Page): Promise<number> {
  const month = new Date().toISOString().slice(0, 7);
  const cell = page.locator(`#revenue-table tr[data-month="${month}"] td.net span[data-currency=EUR]`);
  if (!(await cell.count())) return 0;
  return Number((await cell.textContent())!.replace(/[^\d.-]/g, ''));
}

/** Reloads until `check` holds (bounded): webhooks and jobs run in the background. */
async function reloadUntil(page: Page, check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    assert.ok(Date.now() < until, `waited for ${what}`);
    await page.waitForTimeout(250);
    await page.reload();
  }
}

describe('back office', { concurrency: false }, () => {
  for (const phone of [false, true]) {
    const tag = phone ? 'phone' : 'desktop';
    test(`${tag}: named plan with a price and a data cap made in the web, ordered, paid on the Stripe double, connected, allowance bar on the Usage tab; part refunded; revenue shows payment minus refund`, { timeout: 90_000 }, async (t) => {
      const browser = await chromium.get(t);
      if (!browser) return;
      const admin = await newPage(browser, { phone });
      const client = await newPage(browser, { phone });
      const plan = `Amsterdam Basic ${tag}`;
      const email = `buyer-${tag}@backoffice.test`;
      try {
        await logIn(admin.page, `${s.url}/admin/login`, ADMIN);
        await admin.page.goto(`${s.url}/admin/revenue`);
        const before = await netThisMonth(admin.page);

        // The plan: listing, the module's fields (select boxes for fixed values), a monthly price.
        await admin.page.goto(`${s.url}/admin/products/new?module=VpnProduct`);
        await admin.page.fill('input[name=name]', plan);
        await admin.page.fill('textarea[name=description]', 'WireGuard and IKEv2 in Amsterdam, 100 Mbit/s.');
        assert.deepEqual(await admin.page.locator('select[name=plan_type] option').allTextContents(), ['— choose —', 'basic', 'premium', 'enterprise']);
        await admin.page.selectOption('select[name=server_location]', 'ams');
        await admin.page.selectOption('select[name=plan_type]', 'basic');
        await admin.page.fill('input[name=bandwidth]', '100');
        // The data cap: 50 GB a period, then throttled to 5 Mbit/s (what a used-up cap does is a select box).
        await admin.page.fill('input[name=data_cap_gb]', '50');
        assert.deepEqual(await admin.page.locator('select[name=cap_action] option').evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value).filter(Boolean)), ['throttle', 'suspend']);
        await admin.page.selectOption('select[name=cap_action]', 'throttle');
        await admin.page.fill('input[name=cap_throttle_mbit]', '5');
        await admin.page.fill('input[name=price_monthly]', '10.00');
        await admin.page.fill('input[name=currency]', 'EUR');
        await screenshot(admin.page, `admin-product-form-${tag}`);
        await Promise.all([admin.page.waitForURL(/\/admin\/products\/[0-9a-f-]{36}$/), admin.page.click('.product-form button[type=submit]')]);
        assert.match(await admin.page.locator('.flash').textContent() ?? '', new RegExp(`${plan} created`));
        assert.match(await admin.page.locator('main').textContent() ?? '', /50 GB per period, then throttled to 5 Mbit\/s until it renews/, 'the plan carries the cap');
        await admin.page.goto(`${s.url}/admin/products`);
        assert.match(await admin.page.locator('main table').textContent() ?? '', /10\.00 EUR monthly/);
        await screenshot(admin.page, `admin-products-${tag}`);

        // The customer orders it: the name and price, only the module's fields (no Domain on a VPN plan).
        await s.web.customers.create({ email, password: 'Buyer-Pass-12' });
        await logIn(client.page, `${s.url}/client/login`, { email, password: 'Buyer-Pass-12' });
        await client.page.goto(`${s.url}/client/order`);
        const offer = client.page.locator('li.offer', { has: client.page.locator('h2', { hasText: plan }) });
        assert.match(await offer.textContent() ?? '', /monthly: 10\.00 EUR/);
        assert.equal(await offer.locator('input[name=domain]').count(), 0, 'no Domain field on a VPN plan');
        assert.equal((await offer.locator('label[for$=-username]').textContent())?.trim(), 'Username');
        await offer.locator('input[name=username]').fill('x');
        await offer.locator('button[type=submit]').click();
        const refused = client.page.locator('li.offer', { has: client.page.locator('h2', { hasText: plan }) });
        assert.match(await refused.locator('.field-error[data-field=username]').textContent() ?? '', /The username field must be at least 3 characters/);
        assert.equal(await refused.locator('input[name=username]').inputValue(), 'x', 'what was typed is kept');
        await screenshot(client.page, `client-order-refused-${tag}`);
        await refused.locator('input[name=username]').fill(`bo_${tag}`);
        await Promise.all([client.page.waitForURL(/\/client\/invoices\/[0-9a-f-]{36}/), refused.locator('button[type=submit]').click()]);
        const invoiceUrl = client.page.url().split('?')[0];
        assert.match(await client.page.locator('main').textContent() ?? '', new RegExp(`${plan} \\(monthly\\)`));
        await client.page.goto(`${s.url}/client`);
        const card = client.page.locator('ul.cards li', { hasText: plan });
        await card.locator('a').click();
        assert.match(await client.page.locator('#awaiting-payment').textContent() ?? '', /waits for payment/);
        await screenshot(client.page, `client-awaiting-payment-${tag}`);

        // Pay on the double's page; back on the invoice: thanks and the way to the Connect tab.
        await client.page.goto(invoiceUrl);
        await Promise.all([client.page.waitForURL(/\/pay\//), client.page.click('a.button.pay')]);
        await Promise.all([client.page.waitForURL((u) => u.pathname.startsWith('/client/invoices/')), client.page.click('button:text-is("Pay (test)")')]);
        await reloadUntil(client.page, async () => (await client.page.locator('#invoice-status').textContent()) === 'paid', 'the invoice to be paid');
        assert.match(await client.page.locator('#invoice-thanks').textContent() ?? '', /Thank you for your payment/);
        await screenshot(client.page, `client-invoice-paid-${tag}`);
        await client.page.click('#connect-link');
        assert.match(client.page.url(), /tab=connect/);
        await reloadUntil(client.page, async () => (await client.page.locator('pre[data-vpn-config]').count()) > 0, 'the Connect tab\'s configuration');
        assert.match(await client.page.locator('pre[data-vpn-config]').textContent() ?? '', /\[Interface\][\s\S]*PrivateKey/);
        assert.match(await client.page.locator('h1 .product-name').textContent() ?? '', new RegExp(plan));
        if (phone) assert.ok(await fitsWidth(client.page), 'connect tab fits the phone');
        await screenshot(client.page, `client-connect-named-${tag}`);

        // The Usage tab: the plan's allowance as a bar (nothing used yet), and what happens when it is used up.
        await client.page.goto(client.page.url().replace(/tab=connect/, 'tab=usage'));
        const cap = client.page.locator('[data-usage-cap]');
        assert.match((await cap.textContent() ?? '').replace(/\s+/g, ' '), /0 B of 50 GB used this period \(0%\)/);
        assert.equal(await cap.locator('progress.usage-cap-bar').getAttribute('max'), '100');
        assert.equal(await cap.locator('progress.usage-cap-bar').getAttribute('value'), '0');
        assert.ok(await cap.locator('progress.usage-cap-bar').isVisible(), 'the allowance bar is shown');
        assert.match(await cap.locator('.usage-cap-note').textContent() ?? '', /the speed drops to 5 Mbit\/s until the period renews/);
        if (phone) assert.ok(await fitsWidth(client.page), 'usage tab fits the phone');
        await screenshot(client.page, `client-usage-cap-${tag}`);

        // The admin finds the invoice and refunds 4.00 of it through the gateway.
        await admin.page.goto(`${s.url}/admin/invoices?customer=${encodeURIComponent(email)}&status=paid`);
        await screenshot(admin.page, `admin-invoices-${tag}`);
        await Promise.all([admin.page.waitForURL(/\/admin\/invoices\/[0-9a-f-]{36}$/), admin.page.locator('#invoices tbody a').first().click()]);
        assert.equal(await admin.page.locator('#invoice-status').textContent(), 'paid');
        const refund = admin.page.locator('tr[data-kind=payment] form.refund-form');
        await refund.locator('input[name=amount]').fill('4.00');
        await Promise.all([admin.page.waitForURL(/\/admin\/invoices\/[0-9a-f-]{36}$/), refund.locator('button').click()]);
        assert.match(await admin.page.locator('.flash').textContent() ?? '', /Refunded 4\.00 EUR/);
        assert.equal(await admin.page.locator('#invoice-refunded').textContent(), '4.00 EUR');
        assert.equal(await admin.page.locator('tr[data-kind=refund]').count(), 1);
        await screenshot(admin.page, `admin-invoice-refunded-${tag}`);

        await admin.page.goto(`${s.url}/admin/revenue`);
        assert.equal(Math.round((await netThisMonth(admin.page) - before) * 100), 600, 'the month\'s net revenue grew by 10.00 paid minus 4.00 refunded');
        await admin.page.waitForSelector('#chart-revenue .uplot canvas');
        await admin.page.waitForSelector('#chart-services .uplot canvas');
        if (phone) assert.ok(await fitsWidth(admin.page), 'revenue page fits the phone');
        await screenshot(admin.page, `admin-revenue-${tag}`);
        await admin.page.goto(`${s.url}/admin`);
        await admin.page.waitForSelector('#chart-revenue .uplot canvas');
        await screenshot(admin.page, `admin-dashboard-revenue-${tag}`);
      } finally {
        await admin.context.close();
        await client.context.close();
      }
    });
  }
});
