// Client area in Chromium (desktop and phone): a customer logs in and sees only their own service, the Connect tab's
// download equals the panel's config_text and its QR image is shown, Manage regenerates the keys (the panel's
// configuration changes); the Usage tab loaded in place runs the module's script and draws its chart. A real panel
// process; one platform stack and one Chromium per file, a context per viewport, both viewports at once (each with its
// own service); screenshots under test-artifacts/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { panel, until } from '../fixtures/platform/http.ts';
import { newPage, screenshot, sharedBrowser } from '../helpers/browser.ts';
import { fitsWidth, logIn, startWebBrowserStack, type WebBrowserStack } from '../helpers/browser-session.ts';

let s: WebBrowserStack;
const CUSTOMER = { email: 'owner@browser.test', password: 'Owner-Pass-1' };
const chromium = sharedBrowser();
/** The customer's service per viewport (the two run at once and each regenerates its keys). */
const mine: Record<string, string> = {};
let theirs: string;

async function provisioned(username: string, email: string, password: string): Promise<string> {
  const ops = s.stack.platform.platform.ops;
  const products = (await s.stack.platform.platform.catalogue.list());
  const product = products[0] ?? (await ops.createProduct('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 50 }));
  const customer = (await s.web.customers.queries.findByEmail(email)) ?? (await s.web.customers.create({ email, password }));
  const uuid = (await ops.createService(product.uuid, { username })).uuid;
  await s.web.customers.queries.assignService(uuid, customer.uuid);
  await ops.runAction(uuid, 'create', {});
  await until(async () => ((await s.stack.platform.platform.services.get(uuid))?.provision_status === 'completed' ? true : undefined), 20_000, 100);
  return uuid;
}

/** The panel's config_text of the service's account. */
async function panelConfig(uuid: string): Promise<string> {
  const account = String((await s.stack.platform.platform.services.get(uuid))!.provision_data.account_name);
  const res = await panel(s.stack.panel.url, s.stack.panel.accessHash, 'GET', `/account/${account}/config_text`);
  assert.equal(res.status, 'success', res.error);
  return res.msg as string;
}

before(async () => {
  s = await startWebBrowserStack();
  // IKEv2 on the panel's server, so the Connect tab also offers the built-in clients' profiles
  const onPanel = async (method: string, path: string, form: Record<string, string>) =>
    assert.equal((await panel(s.stack.panel.url, s.stack.panel.accessHash, method, path, form)).error, '', path);
  await onPanel('PUT', '/ikev2/generate_ca_rsa', { ca_common_name: 'Browser CA', ca_organization: 'vpnhost' });
  await onPanel('PUT', '/ikev2/generate_server_rsa', { server_domain: 'vpn.browser.test', server_ip: '198.51.100.20', server_common_name: 'vpn.browser.test', server_organization: 'vpnhost' });
  await onPanel('PUT', '/wireguard/main', { ikev2: '1' });
  await s.web.customers.create(CUSTOMER);
  await s.stack.platform.platform.ops.createProduct('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 50 });
  [mine.desktop, mine.phone, theirs] = await Promise.all([
    provisioned('owner_vpn', CUSTOMER.email, CUSTOMER.password),
    provisioned('owner_phone', CUSTOMER.email, CUSTOMER.password),
    provisioned('other_vpn', 'other@browser.test', 'Other-Pass-1'),
  ]);
});

after(async () => {
  await chromium.close();
  await s?.close();
});

describe('client area', { concurrency: 2 }, () => {
  for (const phone of [false, true]) {
    const tag = phone ? 'phone' : 'desktop';
    test(`${tag}: only own services, config download = panel config_text, QR shown, usage chart in place, keys regenerated`, { timeout: 45_000 }, async (t) => {
      const browser = await chromium.get(t);
      if (!browser) return;
      const { context, page } = await newPage(browser, { phone });
      const own = mine[tag];
      const username = phone ? 'owner_phone' : 'owner_vpn';
      try {
        await logIn(page, `${s.url}/client/login`, CUSTOMER);
        assert.equal(new URL(page.url()).pathname, '/client');
        for (const uuid of Object.values(mine)) assert.equal(await page.locator(`a[href="/client/services/${uuid}"]`).count(), 1);
        assert.equal(await page.locator(`a[href="/client/services/${theirs}"]`).count(), 0);
        assert.doesNotMatch(await page.content(), /other_vpn/);
        await screenshot(page, `client-services-${tag}`);
        assert.ok(await fitsWidth(page));

        const forged = await page.goto(`${s.url}/client/services/${theirs}`);
        assert.equal(forged?.status(), 404, 'someone else\'s service is not found');

        // The first tab arrives without the module's scripts (as a tab of a page without them would), so the Usage tab
        // loaded in place below has to run its own.
        await page.route(`${s.url}/client/services/${own}`, async (route) => {
          const res = await route.fetch();
          await route.fulfill({ response: res, body: (await res.text()).replace(/<script src="\/client\/modules\/[^"]*"[^>]*><\/script>/g, '') });
        });
        await page.goto(`${s.url}/client/services/${own}`);
        await page.unroute(`${s.url}/client/services/${own}`);
        assert.equal(await page.evaluate(() => typeof (window as unknown as { uPlot?: unknown }).uPlot), 'undefined', 'no module script on the first load');
        await screenshot(page, `client-overview-${tag}`);
        // The Connect tab loads in place (progressive JS), with the QR image and the download.
        await page.click('nav.tabs a[data-tab=connect]');
        await page.waitForSelector('img[data-vpn-qr]');
        const qr = page.locator('img[data-vpn-qr]');
        assert.ok(await qr.isVisible());
        assert.equal(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), true);
        // IKEv2: plain links to the three profiles; the Windows script is the panel's own for the account
        const ikev2 = page.locator('[data-vpn-ikev2] a.button');
        assert.equal(await ikev2.count(), 3);
        const account = String((await s.stack.platform.platform.services.get(own))!.provision_data.account_name);
        const [script] = await Promise.all([page.waitForEvent('download'), ikev2.nth(2).click()]);
        assert.equal(script.suggestedFilename(), `${username}.ps1`);
        const windows = await panel(s.stack.panel.url, s.stack.panel.accessHash, 'GET', `/account/${account}/ikev2_windows`);
        assert.equal(readFileSync((await script.path())!, 'utf8'), windows.msg, 'the Windows script is the panel\'s');
        if (phone) assert.ok(await fitsWidth(page), 'connect tab with the IKEv2 profiles fits the phone');
        await screenshot(page, `client-connect-${tag}`);
        const before = await panelConfig(own);
        const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[data-vpn-download]')]);
        assert.equal(download.suggestedFilename(), `${username}.conf`);
        assert.equal(readFileSync((await download.path())!, 'utf8'), before, 'download equals the panel\'s config_text');

        // The Usage tab loaded in place: its scripts run (uPlot, the module script) and the chart is drawn.
        await page.click('nav.tabs a[data-tab=usage]');
        await page.waitForSelector('[data-usage-chart][data-drawn] .uplot');
        assert.equal(await page.evaluate(() => typeof (window as unknown as { uPlot?: unknown }).uPlot), 'function');
        await screenshot(page, `client-usage-${tag}`);

        await page.goto(`${s.url}/client/services/${own}?tab=manage`);
        page.once('dialog', (dialog) => void dialog.accept());
        await page.click('form[data-vpn-action=regenerate] button');
        await page.waitForSelector('[data-vpn-result=regenerate]:not([hidden])');
        assert.match(await page.locator('[data-vpn-result=regenerate]').textContent() ?? '', /new keys/);
        await screenshot(page, `client-manage-${tag}`);
        const after = await until(async () => {
          const now = await panelConfig(own);
          return now !== before ? now : undefined;
        }, 20_000, 200);
        assert.notEqual(after, before, 'the old configuration stopped being the account\'s');
        await page.goto(`${s.url}/client/services/${own}?tab=connect`);
        assert.equal((await page.locator('pre[data-vpn-config]').textContent())?.trim(), after.trim(), 'the Connect tab shows the new configuration');
        if (phone) assert.ok(await fitsWidth(page), 'connect tab fits the phone');
      } finally {
        await context.close();
      }
    });
  }
});
