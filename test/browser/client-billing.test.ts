// The client area's billing in Chromium (desktop and phone): the service page shows the billing period, the customer
// cancels at the end of the paid period through the form (no JavaScript needed: the details element and a plain post),
// and removes a saved card on the Payment methods page. Screenshots under test-artifacts/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newPage, screenshot, sharedBrowser } from '../helpers/browser.ts';
import { fitsWidth, logIn, startWebBrowserStack, type WebBrowserStack } from '../helpers/browser-session.ts';

let s: WebBrowserStack;
const CUSTOMER = { email: 'payer@browser.test', password: 'Payer-Pass-1' };
const chromium = sharedBrowser();
const services: Record<string, string> = {};

before(async () => {
  s = await startWebBrowserStack();
  const platform = s.stack.platform.platform;
  const customer = await s.web.customers.create(CUSTOMER);
  const product = await platform.ops.createProduct('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 20 });
  (await platform.billing.setPrice(product.uuid, 'monthly', '6.00', 'EUR'));
  for (const tag of ['desktop', 'phone']) {
    const order = await platform.billing.order({ customer_uuid: customer.uuid, product_uuid: product.uuid, billing_cycle: 'monthly', service_data: { username: `payer_${tag}` } });
    await platform.billing.payManually(order.invoice.uuid, 'wire');
    services[tag] = order.service_uuid;
    await platform.billing.ledger.saveMethod({
      customer_uuid: customer.uuid, gateway_uuid: `gateway-${tag}`, gateway: 'Stripe', external_customer: 'cus_browser', external_id: `pm_browser_${tag}`,
      label: `visa •••• ${tag === 'phone' ? '1111' : '4242'}`, brand: 'visa', last4: tag === 'phone' ? '1111' : '4242', exp_month: 12, exp_year: 2034,
    });
  }
});

after(async () => {
  await chromium.close();
  await s?.close();
});

describe('client area billing', { concurrency: 2 }, () => {
  for (const phone of [false, true]) {
    const tag = phone ? 'phone' : 'desktop';
    test(`${tag}: billing period shown, cancelled at the period end through the form, a saved card removed`, { timeout: 45_000 }, async (t) => {
      const browser = await chromium.get(t);
      if (!browser) return;
      const { context, page } = await newPage(browser, { phone });
      try {
        await logIn(page, `${s.url}/client/login`, CUSTOMER);
        const uuid = services[tag];
        const due = (await s.stack.platform.platform.recurring.service(uuid)).next_due_date!;
        await page.goto(`${s.url}/client/services/${uuid}`);
        assert.equal(await page.locator('#billing-state').textContent(), 'active');
        assert.equal(await page.locator('#next-due time').getAttribute('datetime'), due);
        await page.click('#billing summary');
        await page.check('#cancel-form input[name=confirm]');
        await screenshot(page, `client-billing-${tag}`);
        assert.ok(await fitsWidth(page));
        await Promise.all([page.waitForURL(`${s.url}/client/services/${uuid}`), page.click('#cancel-form button[type=submit]')]);
        assert.match(await page.locator('#cancel-note').textContent() ?? '', /the service ends on .+ and is not renewed/);
        assert.equal(await page.locator('#cancel-note time').getAttribute('datetime'), due);
        assert.equal((await s.stack.platform.platform.recurring.service(uuid)).cancel_by, 'customer');

        await page.goto(`${s.url}/client/payment-methods`);
        const card = phone ? '1111' : '4242';
        const item = page.locator('li.method', { hasText: card });
        assert.equal(await item.count(), 1);
        await screenshot(page, `client-payment-methods-${tag}`);
        assert.ok(await fitsWidth(page));
        await Promise.all([page.waitForURL(`${s.url}/client/payment-methods`), item.locator('button').click()]);
        assert.equal(await page.locator('li.method', { hasText: card }).count(), 0);
        assert.match(await page.content(), new RegExp(`visa •••• ${card} removed`));
      } finally {
        await context.close();
      }
    });
  }
});
