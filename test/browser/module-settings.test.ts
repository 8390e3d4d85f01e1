// The Stripe settings page in Chromium (desktop and phone): a refused key shown at its field, the gateway saved through
// the form, the secrets never shown back (only "set"), the webhook URL on the platform's own address, "Test the keys"
// answered by the Stripe double; the page fits the phone. Screenshots under test-artifacts/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildPlatformApp } from '../../module/platform/app.ts';
import { Platform } from '../../module/platform/platform.ts';
import { createWebDeps } from '../../module/platform/web/web-host.ts';
import { removeDir, tempDir } from '../fixtures/platform/processes.ts';
import { newPage, screenshot, sharedBrowser } from '../helpers/browser.ts';
import { ADMIN, fitsWidth, logIn } from '../helpers/browser-session.ts';
import { startStripeDouble, type StripeDouble } from '../helpers/stripe-double.ts';

const SECRET_KEY = 'sk_test_BrowserSettings4242';
const WEBHOOK_SECRET = 'whsec_BrowserSettingsSign1';

let platform: Platform;
let app: FastifyInstance;
let dataDir: string;
let url = '';
let stripe: { double: StripeDouble; url: string };
const chromium = sharedBrowser();

before(async () => {
  dataDir = tempDir('settings-browser');
  platform = await Platform.open({ dataDir, logger: pino({ level: 'silent' }), moduleWatchMs: 0 });
  app = await buildPlatformApp({ platform, logger: pino({ level: 'silent' }) });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
  await (await createWebDeps(platform)).admins.create({ ...ADMIN, role: 'Administrator' });
  stripe = await startStripeDouble({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
});

after(async () => {
  await chromium.close();
  await app?.close();
  await platform?.close();
  await stripe?.double.close();
  if (dataDir) removeDir(dataDir);
});

describe('Stripe settings page', { concurrency: 2 }, () => {
  for (const phone of [false, true]) {
    const tag = phone ? 'phone' : 'desktop';
    test(`${tag}: refused key at its field, saved, secrets only "set", webhook URL, test the keys`, { timeout: 45_000 }, async (t) => {
      const browser = await chromium.get(t);
      if (!browser) return;
      const { context, page } = await newPage(browser, { phone });
      try {
        await logIn(page, `${url}/admin/login`, ADMIN);
        await page.goto(`${url}/admin/modules/Payment/Stripe/settings`);
        assert.equal(new URL(page.url()).pathname, '/admin/module-settings', 'the sidebar link leads to the settings list');
        await page.click('text=Add Stripe settings');
        await page.fill('input[name=label]', `Cards ${tag}`);
        await page.fill('input[name=secret_key]', 'pk_live_notasecretkey');
        await page.fill('input[name=webhook_secret]', WEBHOOK_SECRET);
        await page.fill('input[name=api_base]', stripe.url);
        await page.click('form.settings-form button[type=submit]');
        const error = page.locator('#f-secret_key ~ .field-error');
        assert.match((await error.textContent()) ?? '', /secret_key must be a Stripe secret key/);
        assert.equal(await page.inputValue('input[name=webhook_secret]'), '', 'a submitted secret is not shown back either');
        await screenshot(page, `settings-stripe-422-${tag}`);

        await page.fill('input[name=secret_key]', SECRET_KEY);
        await page.fill('input[name=webhook_secret]', WEBHOOK_SECRET);
        await Promise.all([page.waitForURL(/\/admin\/module-settings\/[0-9a-f-]{36}$/), page.click('form.settings-form button[type=submit]')]);
        const gateway = page.url().split('/').pop()!;
        assert.equal((await page.locator('code.webhook-url').textContent())?.trim(), `${url}/webhooks/payment/${gateway}`);
        const html = await page.content();
        assert.equal(html.includes(SECRET_KEY) || html.includes(WEBHOOK_SECRET), false, 'no secret in the page');
        assert.match((await page.locator('label[for=f-secret_key]').textContent()) ?? '', /set/);

        await page.click('button:has-text("Test the keys")');
        assert.match((await page.locator('.test-result.flash-ok').textContent()) ?? '', /Stripe accepted the secret key \(test mode\)/);
        assert.ok(await fitsWidth(page) || !phone, 'the settings page fits the phone');
        await screenshot(page, `settings-stripe-${tag}`);
      } finally {
        await context.close();
      }
    });
  }
});
