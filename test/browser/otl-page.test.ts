// The one-time-link page in Chromium on a phone viewport: confirm, QR shown and readable, the download saves the
// configuration, a second visit shows not_relevant; screenshots under test-artifacts/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { decodeQrPng, otlPanel } from '../integration/otl/otl-fixture.ts';
import { closeBrowser, launchBrowser, newPage, screenshot } from '../helpers/browser.ts';

test('phone: confirm, QR, download once, then not_relevant', { timeout: 40_000 }, async (t) => {
  const browser = await launchBrowser(t);
  if (!browser) return;
  const p = await otlPanel();
  try {
    await p.app.listen({ host: '127.0.0.1', port: 0 });
    const address = p.app.server.address();
    assert.ok(address && typeof address === 'object');
    const base = `http://127.0.0.1:${address.port}`;
    await p.ok('PUT', '/otl/config', { title: 'Acme VPN', not_relevant: '<h1 id="gone">This link is no longer valid</h1>' });
    const configText = await p.ok<string>('GET', '/account/alice/config_text');
    const link = (await p.ok<string>('GET', '/account/alice/otl')).replace('http://127.0.0.1', base);

    const { context, page } = await newPage(browser, { phone: true });
    const first = await page.goto(link);
    assert.equal(first?.status(), 200);
    await screenshot(page, 'otl-confirm-phone');
    await page.getByRole('button', { name: 'Show my configuration' }).click();
    await page.waitForSelector('#otl-qr');

    // The QR image is shown, fits the phone's width and decodes to the configuration.
    const qr = page.locator('#otl-qr');
    assert.ok(await qr.isVisible());
    const box = await qr.boundingBox();
    assert.ok(box && box.width > 150 && box.x >= 0 && box.x + box.width <= 390, JSON.stringify(box));
    assert.equal(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), true, 'image decoded by the browser');
    assert.equal(decodeQrPng(await qr.screenshot()), configText, 'the QR as rendered decodes to config_text');
    assert.equal(await page.locator('#otl-config-text').textContent(), configText);
    const bodyWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(bodyWidth <= 390, `no horizontal scrolling (${bodyWidth})`);
    await screenshot(page, 'otl-config-phone');

    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#otl-download-config').click()]);
    assert.equal(download.suggestedFilename(), 'alice.conf');
    const saved = await download.path();
    assert.equal(readFileSync(saved, 'utf8'), configText);

    const second = await page.goto(link);
    assert.equal(second?.status(), 404);
    assert.equal(await page.locator('#gone').textContent(), 'This link is no longer valid');
    assert.equal(await page.locator('#otl-qr').count(), 0);
    await screenshot(page, 'otl-not-relevant-phone');
    await context.close();
  } finally {
    await closeBrowser(browser);
    await p.close();
  }
});
