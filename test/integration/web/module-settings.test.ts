// Module settings pages (Stripe, Smtp) in the admin web, on a listening platform: secrets never shown back (not after
// saving, not on a refused save), a blank secret field keeps the secret, errors at each field from the module's own
// validation, the Stripe webhook URL shown is the one the platform answers on (a signed event posted to it), "test the
// keys" against the Stripe double, "send a test mail" to a real SMTP server, roles without the key refused.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildPlatformApp } from '../../../module/platform/app.ts';
import { Platform } from '../../../module/platform/platform.ts';
import { createWebDeps } from '../../../module/platform/web/web-host.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';
import { Browser } from '../../fixtures/web/web-stack.ts';
import { signatureFor, startStripeDouble, type StripeDouble } from '../../helpers/stripe-double.ts';
import { startSmtpServer, type TestSmtpServer } from '../smtp/smtp-fixture.ts';

const SECRET_KEY = 'sk_test_SettingsPage4242abcd';
const WEBHOOK_SECRET = 'whsec_SettingsPageSigning77';
const ROOT = { email: 'root@example.com', password: 'Root-Pass-1' };
const MAILER = { email: 'mailer@example.com', password: 'Mailer-Pass-1' };
const NOBODY = { email: 'nobody@example.com', password: 'Nobody-Pass-1' };

let platform: Platform;
let app: FastifyInstance;
let dataDir: string;
let host = '';
let stripe: { double: StripeDouble; url: string };
let smtp: TestSmtpServer;

before(async () => {
  dataDir = tempDir('module-settings');
  platform = await Platform.open({ dataDir, logger: pino({ level: process.env.VPNHOST_TEST_LOG ?? 'silent' }), moduleWatchMs: 0 });
  app = await buildPlatformApp({ platform, logger: pino({ level: 'silent' }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  host = `127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const web = await createWebDeps(platform);
  await web.admins.create({ ...ROOT, role: 'Administrator' });
  await web.admins.create({ ...MAILER, role: (await web.roles.create('Mail only', ['Notification-Smtp-settings', 'Platform-Core-dashboard'])).id });
  await web.admins.create({ ...NOBODY, role: (await web.roles.create('Modules only', ['Platform-Core-modules', 'Platform-Core-dashboard'])).id });
  stripe = await startStripeDouble({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
  smtp = await startSmtpServer();
});

after(async () => {
  await app?.close();
  await platform?.close();
  await stripe?.double.close();
  await smtp?.close();
  if (dataDir) removeDir(dataDir);
});

/** A browser on the listening platform's address (the Host header a real browser sends). */
async function login(who: { email: string; password: string }): Promise<Browser & { page(url: string): ReturnType<Browser['get']> }> {
  const b = new Browser(app) as Browser & { page(url: string): ReturnType<Browser['get']> };
  b.page = (url) => b.get(url, { host });
  await b.get('/admin/login', { host });
  const res = await b.post('/admin/login', who, { headers: { host } });
  assert.equal(res.statusCode, 303);
  return b;
}

function noSecrets(html: string, secrets: string[]): void {
  for (const secret of secrets) assert.equal(html.includes(secret), false, `the page does not show ${secret}`);
}

let gateway = '';
let channel = '';

describe('Stripe', () => {
  test('created through the form; the page never shows a secret; a blank secret field keeps it; errors at each field', async () => {
    const b = await login(ROOT);
    const side = await b.page('/admin/modules/Payment/Stripe/settings');
    assert.equal(side.statusCode, 303, 'the sidebar entry leads to the settings page');
    assert.equal(side.headers.location, '/admin/module-settings?module=Payment%2FStripe');
    const form = await b.page('/admin/module-settings/new/Payment/Stripe');
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /name="secret_key"/);

    const refused = await b.post('/admin/module-settings/new/Payment/Stripe', { label: 'Cards', secret_key: 'pk_test_wrong', webhook_secret: WEBHOOK_SECRET }, { headers: { host } });
    assert.equal(refused.statusCode, 422);
    assert.match(refused.body, /id="f-secret_key"[^>]*>\s*(<small>[^<]*<\/small>\s*)?<p class="field-error">secret_key must be a Stripe secret key/);
    noSecrets(refused.body, [WEBHOOK_SECRET, 'pk_test_wrong']);

    const saved = await b.post('/admin/module-settings/new/Payment/Stripe', { label: 'Cards', secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET, api_base: stripe.url }, { headers: { host } });
    assert.equal(saved.statusCode, 303);
    gateway = String(saved.headers.location).split('/').pop()!;
    const page = await b.page(`/admin/module-settings/${gateway}`);
    assert.equal(page.statusCode, 200);
    noSecrets(page.body, [SECRET_KEY, WEBHOOK_SECRET]);
    assert.match(page.body, /Secret key <span class="badge">set<\/span>/);
    assert.match(page.body, /Key mode: <strong>test<\/strong>/);

    // A blank secret keeps it; a bad api_base is refused at its field, without echoing anything secret.
    const kept = await b.post(`/admin/module-settings/${gateway}`, { label: 'Cards', secret_key: '', webhook_secret: '', product_name: 'VPN plan', api_base: stripe.url }, { headers: { host } });
    assert.equal(kept.statusCode, 303);
    const stored = (await platform.moduleInstances.get(gateway))!.module_data;
    assert.deepEqual([stored.secret_key, stored.webhook_secret, stored.product_name], [SECRET_KEY, WEBHOOK_SECRET, 'VPN plan']);
    const bad = await b.post(`/admin/module-settings/${gateway}`, { label: 'Cards', secret_key: 'sk_test_NewKeyNotSaved99', api_base: 'ftp://x' }, { headers: { host } });
    assert.equal(bad.statusCode, 422);
    assert.match(bad.body, /id="f-api_base"[\s\S]{0,300}<p class="field-error">/);
    noSecrets(bad.body, [SECRET_KEY, WEBHOOK_SECRET, 'sk_test_NewKeyNotSaved99']);
    assert.equal((await platform.moduleInstances.get(gateway))!.module_data.secret_key, SECRET_KEY, 'a refused save changes nothing');
  });

  test('the webhook URL shown is the one the platform answers on: a signed event posted to it is handled', async () => {
    const b = await login(ROOT);
    const page = await b.page(`/admin/module-settings/${gateway}`);
    const shown = /<code class="webhook-url">([^<]+)<\/code>/.exec(page.body)?.[1];
    assert.equal(shown, `http://${host}/webhooks/payment/${gateway}`);
    const payload = JSON.stringify({ id: 'evt_settings_1', object: 'event', type: 'customer.created', data: { object: {} } });
    const signed = await fetch(shown!, { method: 'POST', body: payload, headers: { 'content-type': 'application/json', 'stripe-signature': signatureFor(payload, WEBHOOK_SECRET, Math.floor(Date.now() / 1000)) } });
    assert.deepEqual([signed.status, await signed.text()], [200, 'ok']);
    const forged = await fetch(shown!, { method: 'POST', body: payload, headers: { 'content-type': 'application/json', 'stripe-signature': signatureFor(payload, 'whsec_SomeoneElse123', Math.floor(Date.now() / 1000)) } });
    assert.deepEqual([forged.status, await forged.text()], [400, 'Invalid signature'], 'the module checked the signature');
  });

  test('"test the keys" asks the Stripe double with the saved key; a wrong key is reported', async () => {
    const b = await login(ROOT);
    await b.page(`/admin/module-settings/${gateway}`);
    const ok = await b.post(`/admin/module-settings/${gateway}/test`, {}, { headers: { host } });
    assert.equal(ok.statusCode, 200);
    assert.match(ok.body, /class="flash flash-ok test-result" role="status">Stripe accepted the secret key \(test mode\)\./);
    assert.ok(stripe.double.requests.some((r) => r.path === '/v1/balance'));
    assert.equal((await b.post(`/admin/module-settings/${gateway}`, { label: 'Cards', secret_key: 'sk_test_RevokedKey000' }, { headers: { host } })).statusCode, 303);
    const wrong = await b.post(`/admin/module-settings/${gateway}/test`, {}, { headers: { host } });
    assert.match(wrong.body, /class="flash flash-error test-result" role="status">Stripe refused the key/);
    noSecrets(wrong.body, ['sk_test_RevokedKey000', WEBHOOK_SECRET]);
  });
});

describe('Smtp', () => {
  test('host, port, encryption, credentials, sender; field errors; the password never shown; a test mail reaches the server', async () => {
    const b = await login(MAILER);
    await b.page('/admin/module-settings/new/Notification/Smtp');
    const fields = { label: 'Relay', host: '127.0.0.1', port: String(smtp.port), encryption: 'starttls', username: smtp.user, password: smtp.password, sender: 'VPN Host <noreply@vpn.example>', ca: smtp.cert };
    const refused = await b.post('/admin/module-settings/new/Notification/Smtp', { ...fields, port: 'abc', sender: 'nobody' }, { headers: { host } });
    assert.equal(refused.statusCode, 422);
    assert.match(refused.body, /id="f-port"[\s\S]{0,300}<p class="field-error">The port field must be an integer\.<\/p>/);
    assert.match(refused.body, /id="f-sender"[\s\S]{0,300}<p class="field-error">The sender field must be a valid email address\.<\/p>/);
    noSecrets(refused.body, [smtp.password]);
    const saved = await b.post('/admin/module-settings/new/Notification/Smtp', fields, { headers: { host } });
    assert.equal(saved.statusCode, 303);
    channel = String(saved.headers.location).split('/').pop()!;
    const page = await b.page(`/admin/module-settings/${channel}`);
    noSecrets(page.body, [smtp.password]);
    assert.match(page.body, /<option value="starttls" selected>starttls<\/option>/);
    assert.match(page.body, /Password <span class="badge">set<\/span>/);

    const sent = await b.post(`/admin/module-settings/${channel}/test`, { to: 'admin@vpn.example' }, { headers: { host } });
    assert.equal(sent.statusCode, 200);
    assert.match(sent.body, /class="flash flash-ok test-result" role="status">Test mail sent to admin@vpn.example; the server answered: 250/);
    const [mail] = await smtp.waitForMails(1);
    assert.equal(mail.subject, 'vpnhost test mail');
    assert.deepEqual(smtp.envelopes[0], ['admin@vpn.example']);
    assert.deepEqual(smtp.authOverTls, [true], 'the saved credentials, over STARTTLS');
    noSecrets(sent.body, [smtp.password]);
  });
});

describe('permissions', () => {
  test('roles without the module\'s settings key get 403 Insufficient permissions', async () => {
    const nobody = await login(NOBODY);
    for (const url of ['/admin/module-settings', `/admin/module-settings/${gateway}`, `/admin/module-settings/${channel}`, '/admin/module-settings/new/Payment/Stripe', '/admin/modules/Payment/Stripe/settings']) {
      const res = await nobody.page(url);
      assert.equal(res.statusCode, 403, url);
      assert.match(res.body, /Insufficient permissions/, url);
    }
    for (const url of [`/admin/module-settings/${gateway}`, `/admin/module-settings/${gateway}/test`, '/admin/module-settings/new/Notification/Smtp']) {
      const res = await nobody.post(url, { label: 'x', secret_key: 'sk_test_Intruder12345' }, { headers: { host } });
      assert.equal(res.statusCode, 403, url);
    }
    assert.equal((await platform.moduleInstances.get(gateway))!.module_data.secret_key, 'sk_test_RevokedKey000', 'nothing changed');
    const mailer = await login(MAILER);
    assert.equal((await mailer.page(`/admin/module-settings/${channel}`)).statusCode, 200);
    assert.equal((await mailer.page(`/admin/module-settings/${gateway}`)).statusCode, 403, 'the Smtp key does not open Stripe');
    const list = await mailer.page('/admin/module-settings');
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /Notification · Smtp/);
    assert.doesNotMatch(list.body, /Payment · Stripe/);
    const roles = await (await login(ROOT)).page('/admin/roles');
    for (const key of ['Payment-Stripe-settings', 'Notification-Smtp-settings']) assert.ok(roles.body.includes(`value="${key}"`), `${key} can be granted on the roles page`);
    const json = await app.inject({ method: 'GET', url: `/admin/module-settings/${gateway}`, headers: { accept: 'application/json', cookie: [...nobody.jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    assert.deepEqual([json.statusCode, json.json().error], [403, 'Insufficient permissions']);
  });
});
