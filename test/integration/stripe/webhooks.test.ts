// Stripe webhooks through the platform app: events signed with the library's test-header helper and the endpoint
// secret credit an invoice once (replays and concurrent deliveries included); forged, wrong-secret, stale or future-dated
// (platform clock, both ways) and altered events are refused with nothing recorded; unknown types answer ok; mismatches
// are failures.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { config, type ModulesConfig } from '../../../config.ts';
import type { Platform } from '../../../module/platform/platform.ts';
import { storedBytes } from '../../fixtures/platform/stored-bytes.ts';
import { intentEvent, signatureFor } from '../../helpers/stripe-double.ts';
import { openWebhookPlatform, type WebhookPlatform } from './stripe-stack.ts';

const SECRET_KEY = 'sk_test_51WebhookSuiteKey7788';
const WEBHOOK_SECRET = 'whsec_WebhookSuiteSigningSecret4242';
const OTHER_SECRET = 'whsec_SomeoneElsesSigningSecret9999';

let env: WebhookPlatform;
let platform: Platform;
let app: FastifyInstance;
let gateway: string;
let productUuid: string;
/** Added to the platform clock (ms): moves "now" for the signature tolerance. */
let clockOffset = 0;
const logLines: string[] = [];

export const stripeOnlyConfig = (): ModulesConfig => ({
  modules: { Product: { VpnProduct: config.modules.Product.VpnProduct }, Plugin: {}, Payment: { Stripe: config.modules.Payment.Stripe }, Notification: {} },
});

const api = (method: string, url: string, payload?: unknown) => env.api(method, url, payload);

async function deliver(event: Record<string, unknown> | string, opts: { secret?: string; timestamp?: number; header?: string; alter?: (s: string) => string } = {}) {
  const payload = typeof event === 'string' ? event : JSON.stringify(event);
  const header = opts.header ?? signatureFor(payload, opts.secret ?? WEBHOOK_SECRET, opts.timestamp ?? Math.floor(Date.now() / 1000));
  const body = opts.alter ? opts.alter(payload) : payload;
  const res = await app.inject({ method: 'POST', url: `/webhooks/payment/${gateway}`, payload: body, headers: { 'content-type': 'application/json', 'stripe-signature': header } });
  return { status: res.statusCode, text: res.body };
}

async function order(username: string): Promise<{ uuid: string; service_uuid: string }> {
  const res = await api('POST', '/orders', { customer: { email: `${username}@example.test` }, product_uuid: productUuid, billing_cycle: 'monthly', service_data: { username, password: 'Secr3tPassw0rd' } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { uuid: res.body.invoice.uuid, service_uuid: res.body.service_uuid };
}

const invoice = async (uuid: string) => (await api('GET', `/invoices/${uuid}`)).body;
const createTasks = async (serviceUuid: string) => ({
  n: Number((await platform.store.db.selectFrom('tasks').select((eb) => eb.fn.countAll().as('n'))
    .where('tags', 'like', `%service:${serviceUuid}%`).where('tags', 'like', '%create%').executeTakeFirstOrThrow()).n),
});
/** Rows in payment_events. */
const paymentEvents = async () => Number((await platform.store.db.selectFrom('payment_events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
let seq = 0;
const eventId = () => `evt_suite_${++seq}_${Date.now()}`;

before(async () => {
  env = await openWebhookPlatform({
    modulesConfig: stripeOnlyConfig(), secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET,
    clock: { now: () => new Date(Date.now() + clockOffset) },
    logger: pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) }),
  });
  ({ platform, app, gateway, productUuid } = env);
});

after(async () => {
  await env?.close();
});

test('settings are checked, kept sealed and never answered; the settings page shows the webhook URL', async () => {
  const bad = await api('POST', '/modules/Payment/Stripe/instances', { label: 'Bad', module_data: { secret_key: 'pk_test_nope', webhook_secret: WEBHOOK_SECRET } });
  assert.equal(bad.status, 422);
  assert.match(bad.body.error, /^secret_key: /);
  const view = await api('GET', `/module-instances/${gateway}`);
  assert.deepEqual(view.body.secret_keys.sort(), ['secret_key', 'webhook_secret']);
  assert.equal(JSON.stringify(view.body).includes(SECRET_KEY) || JSON.stringify(view.body).includes(WEBHOOK_SECRET), false);
  const raw = storedBytes(env.dataDir);
  assert.equal(raw.includes(SECRET_KEY) || raw.includes(WEBHOOK_SECRET), false, 'sealed at rest');
  const html = await platform.billing.paymentHtml((await order('settings1')).uuid, gateway, { return_url: 'http://x.test/ok', cancel_url: 'http://x.test/no' });
  assert.match(html, /could not be opened/, 'Stripe unreachable: an error page, not a crash');
  const page = platform.modules.instance<import('../../../module/contract/payment.ts').Payment>('Payment', 'Stripe', { payment_gateway_uuid: gateway, module_data: { secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET } });
  const settings = await page.getSettingsPage({ base_url: 'https://billing.example.test/' });
  assert.match(settings, new RegExp(`https://billing\\.example\\.test/webhooks/payment/${gateway}`));
  assert.match(settings, /payment_intent\.succeeded/);
  assert.match(settings, /payment_intent\.payment_failed/);
  assert.equal(settings.includes(WEBHOOK_SECRET) || settings.includes(SECRET_KEY), false);
});

test('a valid signed payment_intent.succeeded credits once: 10 replays and 10 concurrent deliveries change nothing', async () => {
  const inv = await order('credit1');
  const event = intentEvent({ id: eventId(), type: 'payment_intent.succeeded', invoice_uuid: inv.uuid, amount: 999, currency: 'eur', created: Math.floor(Date.now() / 1000) });
  const first = await deliver(event);
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(JSON.parse(first.text), { received: true, outcome: 'paid' });
  for (let i = 0; i < 10; i++) assert.equal(JSON.parse((await deliver(event)).text).outcome, 'duplicate');
  let paid = await invoice(inv.uuid);
  assert.equal(paid.status, 'paid');
  assert.equal(paid.transactions.length, 1);
  assert.equal(paid.transactions[0].external_id, (event.data as any).object.id);
  assert.equal(paid.transactions[0].gateway, 'Stripe');
  assert.equal((await createTasks(inv.service_uuid)).n, 1, 'create() queued once');
  assert.equal((await api('GET', `/services/${inv.service_uuid}`)).body.provision_status, 'processing');

  const inv2 = await order('credit2');
  const event2 = intentEvent({ id: eventId(), type: 'payment_intent.succeeded', invoice_uuid: inv2.uuid, amount: 999, currency: 'eur', created: Math.floor(Date.now() / 1000) });
  const answers = await Promise.all(Array.from({ length: 10 }, () => deliver(event2)));
  assert.deepEqual(answers.map((a) => a.status), Array(10).fill(200));
  assert.deepEqual(answers.map((a) => JSON.parse(a.text).outcome).sort(), ['duplicate', 'duplicate', 'duplicate', 'duplicate', 'duplicate', 'duplicate', 'duplicate', 'duplicate', 'duplicate', 'paid']);
  paid = await invoice(inv2.uuid);
  assert.equal(paid.transactions.filter((t: any) => t.kind === 'payment').length, 1);
  assert.equal((await createTasks(inv2.service_uuid)).n, 1);

  // A second PaymentIntent for the paid invoice: recorded (it can be refunded) but not applied; its refund leaves the
  // invoice and the service alone.
  const second = await deliver(intentEvent({ id: eventId(), type: 'payment_intent.succeeded', invoice_uuid: inv2.uuid, amount: 999, currency: 'eur', intent: 'pi_second', created: Math.floor(Date.now() / 1000) }));
  assert.equal(JSON.parse(second.text).outcome, 'already_paid');
  paid = await invoice(inv2.uuid);
  const extra = paid.transactions.find((t: any) => t.external_id === 'pi_second');
  assert.match(extra.note, /^not applied: invoice already paid/);
  assert.equal((await createTasks(inv2.service_uuid)).n, 1);
  const back = await platform.billing.ledger.recordRefund({ transaction_uuid: extra.uuid, amount_minor: 999, external_id: 're_second' });
  assert.equal(back.full, false);
  assert.equal(back.service_action, null);
  assert.equal((await invoice(inv2.uuid)).status, 'paid');
  assert.equal((await invoice(inv2.uuid)).refunded_minor, 0);
});

test('forged, wrong-secret, stale, future-dated and altered events are refused with 400 and nothing recorded', async () => {
  const inv = await order('refuse1');
  const now = Math.floor(Date.now() / 1000);
  const make = () => intentEvent({ id: eventId(), type: 'payment_intent.succeeded', invoice_uuid: inv.uuid, amount: 999, currency: 'eur', created: now });
  const cases: Array<[string, () => Promise<{ status: number; text: string }>]> = [
    ['forged signature', () => deliver(make(), { header: `t=${now},v1=${'ab'.repeat(32)}` })],
    ['wrong secret', () => deliver(make(), { secret: OTHER_SECRET })],
    ['stale timestamp (301 s)', () => deliver(make(), { timestamp: now - 301 })],
    ['timestamp an hour in the future', () => deliver(make(), { timestamp: now + 3600 })],
    ['timestamp 301 s in the future', () => deliver(make(), { timestamp: now + 301 })],
    ['body changed after signing', () => deliver(make(), { alter: (s) => s.replace('"amount":999', '"amount":1') })],
    ['no header', async () => {
      const res = await app.inject({ method: 'POST', url: `/webhooks/payment/${gateway}`, payload: JSON.stringify(make()), headers: { 'content-type': 'application/json' } });
      return { status: res.statusCode, text: res.body };
    }],
  ];
  const eventsBefore = await paymentEvents();
  for (const [name, run] of cases) {
    const res = await run();
    assert.equal(res.status, 400, name);
    assert.equal(res.text, 'Invalid signature', name);
  }
  // The tolerance reads the platform clock: an event signed "now" is stale once the platform's clock is 301 s ahead.
  clockOffset = 301_000;
  try {
    assert.equal((await deliver(make())).status, 400, 'platform clock 301 s ahead');
  } finally {
    clockOffset = 0;
  }
  // And once the platform's clock is 3600 s behind, an event signed "now" is an hour in its future.
  clockOffset = -3_600_000;
  try {
    assert.equal((await deliver(make())).status, 400, 'platform clock an hour behind');
  } finally {
    clockOffset = 0;
  }
  const refusals = await platform.store.db.selectFrom('module_logs').select('response')
    .where('module_name', '=', 'Stripe').where('action', '=', 'webhook').where('response', 'like', '%ahead of the platform clock%').execute();
  assert.ok(refusals.length >= 3, 'the module log says why a future event was refused');
  assert.equal((await deliver(make(), { timestamp: now + 290 })).status, 200, 'a little ahead, within the tolerance (clock skew)');
  assert.equal((await deliver(make(), { timestamp: now - 290 })).status, 200, 'within the tolerance');
  const after = await invoice(inv.uuid);
  assert.deepEqual(after.transactions.map((t: any) => t.note.startsWith('not applied') ? 'not applied' : 'applied'), ['applied', 'not applied'], 'only the valid events were recorded');
  assert.equal(await paymentEvents(), eventsBefore + 2);
});

test('an unknown type answers ok/200 and records nothing; GET answers ok', async () => {
  const before = await paymentEvents();
  const res = await deliver({ id: eventId(), type: 'charge.refunded', data: { object: {} } });
  assert.equal(res.status, 200);
  assert.equal(res.text, 'ok');
  assert.equal((await deliver({ id: eventId(), data: {} })).text, 'ok');
  assert.equal(await paymentEvents(), before);
  const get = await app.inject({ method: 'GET', url: `/webhooks/payment/${gateway}` });
  assert.equal(get.statusCode, 200);
  assert.equal(get.body, 'ok');
});

test('an amount or currency that does not match the invoice is recorded as a failure, not a payment', async () => {
  for (const [name, amount, currency] of [['amount', 998, 'eur'], ['currency', 999, 'usd']] as const) {
    const inv = await order(`mismatch_${name}`);
    const res = await deliver(intentEvent({ id: eventId(), type: 'payment_intent.succeeded', invoice_uuid: inv.uuid, amount, currency, created: Math.floor(Date.now() / 1000) }));
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.text).outcome, 'mismatch', name);
    const row = await invoice(inv.uuid);
    assert.equal(row.status, 'failed', name);
    assert.deepEqual(row.transactions.map((t: any) => t.kind), ['failure'], name);
    assert.match(row.transactions[0].note, /mismatch/);
    assert.equal((await createTasks(inv.service_uuid)).n, 0, `${name}: nothing provisioned`);
    // The right amount afterwards still pays the (failed) invoice.
    const ok = await deliver(intentEvent({ id: eventId(), type: 'payment_intent.succeeded', invoice_uuid: inv.uuid, amount: 999, currency: 'EUR', created: Math.floor(Date.now() / 1000) }));
    assert.equal(JSON.parse(ok.text).outcome, 'paid');
  }
});

test('payment_intent.payment_failed records the failure (once) and the invoice stays payable', async () => {
  const failedEvents: string[] = [];
  const off = platform.hooks.on('invoice.payment_failed', (e) => void failedEvents.push(e.invoice_uuid));
  try {
    const inv = await order('failed1');
    const event = intentEvent({ id: eventId(), type: 'payment_intent.payment_failed', invoice_uuid: inv.uuid, amount: 999, currency: 'eur', created: Math.floor(Date.now() / 1000) });
    assert.equal(JSON.parse((await deliver(event)).text).outcome, 'failed');
    assert.equal(JSON.parse((await deliver(event)).text).outcome, 'duplicate');
    const row = await invoice(inv.uuid);
    assert.equal(row.status, 'failed');
    assert.deepEqual(row.transactions.map((t: any) => [t.kind, t.note]), [['failure', 'Your card was declined.']]);
    assert.deepEqual(failedEvents, [inv.uuid]);
    assert.equal((await api('POST', `/invoices/${inv.uuid}/payments`, {})).status, 200, 'a failed invoice can still be paid');
  } finally {
    off();
  }
});

test('no secret in the logs', async () => {
  const all = logLines.join('\n');
  assert.ok(all.length > 0);
  assert.equal(all.includes(SECRET_KEY), false);
  assert.equal(all.includes(WEBHOOK_SECRET), false);
  const rows = await platform.store.db.selectFrom('module_logs').select(['request', 'response']).execute();
  const logged = JSON.stringify(rows);
  assert.ok(logged.includes('webhook') || logged.includes('onPaymentSuccess'));
  assert.equal(logged.includes(SECRET_KEY) || logged.includes(WEBHOOK_SECRET), false);
});

test('a paid invoice whose service was left pending (process stopped before queueing) gets its create() at start', async () => {
  const inv = await order('resume1');
  await platform.store.db.updateTable('invoices').set({ status: 'paid' }).where('uuid', '=', inv.uuid).execute();
  assert.deepEqual(await platform.billing.ledger.resumePaid(), [inv.service_uuid]);
  assert.equal((await createTasks(inv.service_uuid)).n, 1);
  assert.equal((await api('GET', `/services/${inv.service_uuid}`)).body.provision_status, 'processing');
  assert.deepEqual(await platform.billing.ledger.resumePaid(), [], 'nothing left to resume');
});
