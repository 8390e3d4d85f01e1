// Client area in Chromium (desktop and phone): a customer logs in and sees only their own service, the Connect tab's
// download equals the panel's config_text and its QR image is shown, Manage regenerates the keys (the panel's
// configuration changes). A real panel process; screenshots under test-artifacts/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { panel, until } from '../fixtures/platform/http.ts';
import { launchBrowser, newPage, screenshot } from '../helpers/browser.ts';
import { fitsWidth, logIn, startWebBrowserStack, type WebBrowserStack } from '../helpers/browser-session.ts';

let s: WebBrowserStack;
const CUSTOMER = { email: 'owner@browser.test', password: 'Owner-Pass-1' };
let mine: string;
let theirs: string;

async function provisioned(username: string, email: string, password: string): Promise<string> {
  const ops = s.stack.platform.platform.ops;
  const products = s.stack.platform.platform.catalogue.list();
  const product = products[0] ?? (await ops.createProduct('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 50 }));
  const customer = s.web.customers.repo.findByEmail(email) ?? (await s.web.customers.create({ email, password }));
  const uuid = (await ops.createService(product.uuid, { username })).uuid;
  s.web.customers.repo.assignService(uuid, customer.uuid);
  await ops.runAction(uuid, 'create', {});
  await until(async () => (s.stack.platform.platform.services.get(uuid)?.provision_status === 'completed' ? true : undefined), 20_000, 100);
  return uuid;
}

/** The panel's config_text of the service's account. */
async function panelConfig(uuid: string): Promise<string> {
  const account = String(s.stack.platform.platform.services.get(uuid)!.provision_data.account_name);
  const res = await panel(s.stack.panel.url, s.stack.panel.accessHash, 'GET', `/account/${account}/config_text`);
  assert.equal(res.status, 'success', res.error);
  return res.msg as string;
}

before(async () => {
  s = await startWebBrowserStack();
  mine = await provisioned('owner_vpn', CUSTOMER.email, CUSTOMER.password);
  theirs = await provisioned('other_vpn', 'other@browser.test', 'Other-Pass-1');
});

after(async () => {
  await s?.close();
});

for (const phone of [false, true]) {
  const tag = phone ? 'phone' : 'desktop';
  test(`${tag}: only own service, config download = panel config_text, QR shown, keys regenerated`, { timeout: 45_000 }, async (t) => {
    const browser = await launchBrowser(t);
    if (!browser) return;
    try {
      const { page } = await newPage(browser, { phone });
      await logIn(page, `${s.url}/client/login`, CUSTOMER);
      assert.equal(new URL(page.url()).pathname, '/client');
      assert.equal(await page.locator(`a[href="/client/services/${mine}"]`).count(), 1);
      assert.equal(await page.locator(`a[href="/client/services/${theirs}"]`).count(), 0);
      assert.doesNotMatch(await page.content(), /other_vpn/);
      await screenshot(page, `client-services-${tag}`);
      assert.ok(await fitsWidth(page));

      const forged = await page.goto(`${s.url}/client/services/${theirs}`);
      assert.equal(forged?.status(), 404, 'someone else\'s service is not found');

      await page.goto(`${s.url}/client/services/${mine}`);
      await screenshot(page, `client-overview-${tag}`);
      // The Connect tab loads in place (progressive JS), with the QR image and the download.
      await page.click('nav.tabs a[data-tab=connect]');
      await page.waitForSelector('img[data-vpn-qr]');
      const qr = page.locator('img[data-vpn-qr]');
      assert.ok(await qr.isVisible());
      assert.equal(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), true);
      await screenshot(page, `client-connect-${tag}`);
      const before = await panelConfig(mine);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[data-vpn-download]')]);
      assert.equal(download.suggestedFilename(), 'owner_vpn.conf');
      assert.equal(readFileSync((await download.path())!, 'utf8'), before, 'download equals the panel\'s config_text');

      await page.goto(`${s.url}/client/services/${mine}?tab=manage`);
      page.once('dialog', (dialog) => void dialog.accept());
      await page.click('form[data-vpn-action=regenerate] button');
      await page.waitForSelector('[data-vpn-result=regenerate]:not([hidden])');
      assert.match(await page.locator('[data-vpn-result=regenerate]').textContent() ?? '', /new keys/);
      await screenshot(page, `client-manage-${tag}`);
      const after = await until(async () => {
        const now = await panelConfig(mine);
        return now !== before ? now : undefined;
      }, 20_000, 200);
      assert.notEqual(after, before, 'the old configuration stopped being the account\'s');
      await page.goto(`${s.url}/client/services/${mine}?tab=connect`);
      assert.equal((await page.locator('pre[data-vpn-config]').textContent())?.trim(), after.trim(), 'the Connect tab shows the new configuration');
      if (phone) assert.ok(await fitsWidth(page), 'connect tab fits the phone');
    } finally {
      await browser.close();
    }
  });
}
