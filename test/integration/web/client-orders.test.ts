// Client area orders and invoices (inject, with the platform also on loopback for the Stripe double's webhook): the
// order page lists priced products only; an order creates the invoice and the pending service owned by the customer;
// a form without its CSRF token is refused; someone else's invoice answers 404; paying through the Stripe double's
// checkout page turns the invoice paid and the service completed.
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { ModuleClass } from '../../../module/contract/module.ts';
import { Stripe } from '../../../module/modules/Payment/Stripe/index.ts';
import { buildPlatformApp } from '../../../module/platform/app.ts';
import type { ModuleImporter } from '../../../module/platform/loader.ts';
import { Platform } from '../../../module/platform/platform.ts';
import type { WebDeps } from '../../../module/platform/web/web-deps.ts';
import { createWebDeps } from '../../../module/platform/web/web-host.ts';
import { until } from '../../fixtures/platform/http.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';
import { Browser } from '../../fixtures/web/web-stack.ts';
import { VIEWS_DIR, webImporter, webModulesConfig } from '../../fixtures/web/web-modules.ts';
import { startStripeDouble, type StripeDouble } from '../../helpers/stripe-double.ts';

const SECRET_KEY = 'sk_test_51ClientOrdersSuiteKey1618';
const WEBHOOK_SECRET = 'whsec_ClientOrdersSigningSecret1414';
const ALICE = { email: 'alice.orders@example.com', password: 'Alice-Pass-1' };
const BOB = { email: 'bob.orders@example.com', password: 'Bob-Pass-12' };

let dataDir: string;
let platform: Platform;
let app: FastifyInstance;
let web: WebDeps;
let double: StripeDouble;
let priced: string;
let unpriced: string;
let alice: string;
let bobInvoice: string;

const importer: ModuleImporter = async (type, name) => (type === 'Payment' && name === 'Stripe' ? (Stripe as unknown as ModuleClass) : webImporter(type, name));

before(async () => {
  dataDir = tempDir('client-orders');
  // Module views: the test Product's (fixtures) and the real Stripe module's, side by side.
  const views = join(dataDir, 'views');
  mkdirSync(join(views, 'modules', 'Product'), { recursive: true });
  mkdirSync(join(views, 'modules', 'Payment'), { recursive: true });
  symlinkSync(join(VIEWS_DIR, 'modules', 'Product', 'TabProduct'), join(views, 'modules', 'Product', 'TabProduct'));
  symlinkSync(new URL('../../../views/modules/Payment/Stripe', import.meta.url).pathname, join(views, 'modules', 'Payment', 'Stripe'));
  platform = await Platform.open({
    dataDir: join(dataDir, 'data'), logger: pino({ level: process.env.VPNHOST_TEST_LOG ?? 'silent' }),
    modulesConfig: { modules: { ...webModulesConfig.modules, Payment: { Stripe: { enabled: true, version: '1.0.0' } } } },
    importer, viewsDir: views, moduleWatchMs: 0,
  });
  app = await buildPlatformApp({ platform, web: {}, logger: pino({ level: process.env.VPNHOST_TEST_LOG ?? 'silent' }) });
  web = await createWebDeps(platform, {});
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  await platform.startWorkers(2);

  const started = await startStripeDouble({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
  double = started.double;
  const gateway = await platform.moduleInstances.create('Payment', 'Stripe', 'Card (Stripe double)', { secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET, api_base: started.url });
  double.webhookUrl = `${url}/webhooks/payment/${gateway.uuid}`;

  priced = (await platform.catalogue.createProduct('TabProduct', { server_location: 'ams', plan_type: 'premium', disk_space: 10, bandwidth: 100 })).uuid;
  unpriced = (await platform.catalogue.createProduct('TabProduct', { server_location: 'fra', plan_type: 'enterprise', disk_space: 10, bandwidth: 100 })).uuid;
  await platform.billing.setPrice(priced, 'monthly', '7.50', 'EUR');
  await platform.billing.setPrice(priced, 'annually', '75', 'EUR');
  alice = (await web.customers.create(ALICE)).uuid;
  const bob = await web.customers.create(BOB);
  bobInvoice = (await platform.billing.order({ customer_uuid: bob.uuid, product_uuid: priced, billing_cycle: 'monthly', service_data: { username: 'bob_vpn', domain: 'bob.example.com' } })).invoice.uuid;
});

after(async () => {
  await double?.close();
  await app?.close();
  await platform?.close();
  if (dataDir) removeDir(dataDir);
});

async function login(who = ALICE): Promise<Browser> {
  const b = new Browser(app);
  assert.equal((await b.loginCustomer(who.email, who.password)).statusCode, 303);
  return b;
}

/** Orders the priced product on the order page as Alice; the invoice's uuid from the redirect. */
async function order(b: Browser, username: string, cycle = 'monthly'): Promise<string> {
  await b.get('/client/order');
  const res = await b.post('/client/order', { product_uuid: priced, billing_cycle: cycle, username, domain: `${username.replace(/_/g, '-')}.example.com` });
  assert.equal(res.statusCode, 303, res.body);
  const invoice = /^\/client\/invoices\/([0-9a-f-]+)$/.exec(String(res.headers.location));
  assert.ok(invoice, String(res.headers.location));
  return invoice[1];
}

test('the order page lists the products that have a price, with each cycle and amount; the layout links to it', async () => {
  const b = await login();
  const page = await b.get('/client/order');
  assert.equal(page.statusCode, 200);
  assert.ok(page.body.includes(`id="offer-${priced}"`));
  assert.ok(!page.body.includes(unpriced), 'a product without a price is not offered');
  assert.doesNotMatch(page.body, /enterprise|>fra</);
  assert.match(page.body, /value="monthly" checked> monthly: <span class="price">7\.50 EUR<\/span>/);
  assert.match(page.body, /value="annually"> annually: <span class="price">75\.00 EUR<\/span>/);
  assert.match((await b.get('/client')).body, /href="\/client\/order">Order a plan<\/a> <a href="\/client\/invoices">My invoices<\/a>/);
});

test('an order creates the unpaid invoice and the pending service owned by the customer, then shows the invoice', async () => {
  const b = await login();
  const uuid = await order(b, 'alice_annual', 'annually');
  const invoice = (await platform.billing.invoice(uuid));
  assert.equal(invoice.customer_uuid, alice);
  assert.equal(invoice.status, 'unpaid');
  assert.equal(invoice.amount_minor, 7500);
  assert.equal(invoice.currency, 'EUR');
  assert.equal(await web.customers.queries.ownerOf(invoice.service_uuid!), alice);
  assert.equal((await platform.serviceAdmin.describe(invoice.service_uuid!)).provision_status, 'pending');
  assert.equal((await platform.serviceAdmin.describe(invoice.service_uuid!)).service_data.username, 'alice_annual');

  const page = await b.get(`/client/invoices/${uuid}`);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, new RegExp(`Order placed: invoice ${invoice.number}\\.`));
  assert.match(page.body, /<dd id="invoice-amount">75\.00 EUR<\/dd>/);
  assert.match(page.body, new RegExp(`<dd><time datetime="${invoice.due_date}">[^<]+</time></dd>`), 'the due date in the reader\'s locale');
  assert.match(page.body, /id="invoice-status">unpaid</);
  assert.match(page.body, /<a class="button pay" href="http:\/\/127\.0\.0\.1:\d+\/pay\/cs_test_[0-9a-f]+"/, 'a plain link to the checkout: no JavaScript needed');

  const list = await b.get('/client/invoices');
  assert.equal(list.statusCode, 200);
  assert.ok(list.body.includes(`/client/invoices/${uuid}`));
  assert.ok(!list.body.includes(bobInvoice), 'only the customer\'s own invoices are listed');
  assert.ok((await b.get('/client')).body.includes(`/client/services/${invoice.service_uuid}`), 'the new service is under my services');
});

test('an order form without its CSRF token is refused and orders nothing; a product without a price is refused', async () => {
  const b = await login();
  await b.get('/client/order');
  const before = (await platform.billing.listInvoices({ customer: alice }, 1, 200)).total;
  const forged = await b.post('/client/order', { product_uuid: priced, billing_cycle: 'monthly', username: 'forged_one', domain: 'forged.example.com' }, { csrf: false });
  assert.equal(forged.statusCode, 403);
  const noPrice = await b.post('/client/order', { product_uuid: unpriced, billing_cycle: 'monthly', username: 'no_price', domain: 'no-price.example.com' });
  // The unpriced product is not on the page, so its refusal is shown above the offers.
  assert.equal(noPrice.statusCode, 422);
  assert.match(noPrice.body, new RegExp(`The order was not placed: product ${unpriced} has no price for billing cycle monthly`));
  assert.equal((await platform.billing.listInvoices({ customer: alice }, 1, 200)).total, before);
});

test('someone else\'s invoice and a made-up id answer the same 404', async () => {
  const b = await login();
  for (const id of [bobInvoice, '00000000-0000-4000-8000-000000000000']) {
    const res = await b.get(`/client/invoices/${id}`);
    assert.equal(res.statusCode, 404, id);
    assert.doesNotMatch(res.body, /bob_vpn|7\.50/);
  }
  assert.equal((await new Browser(app).get(`/client/invoices/${bobInvoice}`)).statusCode, 303, 'no session: to the login page');
});

test('paying on the Stripe double\'s checkout page turns the invoice paid and the service completed', async () => {
  const b = await login();
  const uuid = await order(b, 'alice_paid');
  const page = await b.get(`/client/invoices/${uuid}`);
  const link = /href="([^"]+\/pay\/cs_test_[0-9a-f]+)"/.exec(page.body);
  assert.ok(link, page.body);
  const session = double.requests.filter((r) => r.path === '/v1/checkout/sessions' && r.idempotencyKey === uuid);
  assert.equal(session.length, 1);
  assert.equal(session[0].form['line_items[0][price_data][unit_amount]'], '750');
  assert.match(session[0].form.customer, /^cus_test_/, 'the Stripe customer the card is saved on (for the renewals)');
  assert.equal(session[0].form['payment_intent_data[setup_future_usage]'], 'off_session');
  assert.equal(double.requests.find((r) => r.path === '/v1/customers')?.form.email, ALICE.email);
  assert.match(session[0].form.success_url, new RegExp(`/client/invoices/${uuid}\\?paid=1$`));

  const paid = await fetch(`${link[1]}/succeed`, { method: 'POST', redirect: 'manual' });
  assert.equal(paid.status, 303, await paid.text());
  assert.equal((await platform.billing.invoice(uuid)).status, 'paid');
  const service = (await platform.billing.invoice(uuid)).service_uuid!;
  await until(async () => ((await platform.serviceAdmin.describe(service)).provision_status === 'completed' ? true : undefined), 10_000, 25);

  const after = await b.get(`/client/invoices/${uuid}?paid=1`);
  assert.match(after.body, /id="invoice-status">paid</);
  assert.doesNotMatch(after.body, /\/pay\/cs_test_|Pay this invoice|being confirmed/, 'a paid invoice offers no payment');
  assert.match((await b.get('/client/invoices')).body, new RegExp(`${uuid}">[^<]+</a>.*?status-paid`, 's'));
});

test('an unpaid service\'s tabs link the invoice it waits for; a declined payment shows the gateway\'s reason; once paid the invoice thanks and links the Connect tab', async () => {
  const b = await login();
  const uuid = await order(b, 'alice_declined');
  const service = (await platform.billing.invoice(uuid)).service_uuid!;
  const waiting = await b.get(`/client/services/${service}`);
  assert.match(waiting.body, new RegExp(`id="awaiting-payment">This service waits for payment: it is set up as soon as invoice <a href="/client/invoices/${uuid}">`));
  assert.match(waiting.body, />waiting for payment</);
  const tab = await b.get(`/client/services/${service}/tabs/connect`);
  assert.match(tab.body, /waits for payment/, 'a tab loaded in place says the same');

  const page = await b.get(`/client/invoices/${uuid}`);
  const link = /href="([^"]+\/pay\/cs_test_[0-9a-f]+)"/.exec(page.body)![1];
  const declined = await fetch(`${link}/decline`, { method: 'POST', redirect: 'manual' });
  assert.equal(declined.status, 303, await declined.text());
  assert.equal((await platform.billing.invoice(uuid)).status, 'failed');
  const failed = await b.get(`/client/invoices/${uuid}`);
  const reason = (await platform.billing.invoice(uuid)).transactions.find((t) => t.kind === 'failure')!.note;
  assert.ok(reason.length > 0);
  assert.ok(failed.body.includes(`id="payment-declined">Your payment was declined: ${reason.replace(/'/g, '&#x27;')}`), 'the gateway\'s reason');
  assert.match(failed.body, /Pay this invoice/, 'a failed invoice can be paid again');

  const again = /href="([^"]+\/pay\/cs_test_[0-9a-f]+)"/.exec(failed.body)![1];
  assert.equal((await fetch(`${again}/succeed`, { method: 'POST', redirect: 'manual' })).status, 303);
  const thanked = await b.get(`/client/invoices/${uuid}?paid=1`);
  assert.match(thanked.body, /id="invoice-thanks"><strong>Thank you for your payment\.<\/strong>/);
  assert.match(thanked.body, new RegExp(`href="/client/services/${service}\\?tab(=|&#x3D;)connect" id="connect-link"`), 'the Connect tab of the service');
  assert.doesNotMatch(thanked.body, /id="payment-declined"/);
  // Days in the reader's language: a German browser reads 04.12.2026, not 2026-12-04.
  const due = (await platform.billing.invoice(uuid)).due_date;
  const [y, m, d] = due.split('-');
  const german = await b.get(`/client/invoices/${uuid}`, { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' });
  assert.ok(german.body.includes(`<time datetime="${due}">${d}.${m}.${y}</time>`), 'the due date in German');
});
