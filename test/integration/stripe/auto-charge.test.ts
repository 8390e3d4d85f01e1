// Automatic card payments against the local Stripe double on a driven clock: the first Checkout payment saves the card
// (off-session setup on the customer's Stripe customer); on the due date each renewal is charged off-session once
// (idempotency key per invoice): success settles through the signed webhook and extends the period; a decline and a
// required authentication leave the invoice open and mail the pay link once; replays of events, a second run and a
// repeated charge job change nothing; a removed card is detached.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { until } from '../../fixtures/platform/http.ts';
import { startClockStack, type ClockStack } from '../../fixtures/billing/clock-stack.ts';
import { startStripeDouble, type StripeDouble } from '../../helpers/stripe-double.ts';
import { queueCharge } from '../../../module/platform/services/billing/billing-jobs.ts';
import type { TestCard } from '../../../module/modules/Payment/Stripe/local-double.ts';

const KEYS = { secretKey: 'sk_test_51AutoChargeSuiteKey777', webhookSecret: 'whsec_AutoChargeSuiteSigningSecret' };
let stack: ClockStack;
let double: StripeDouble;
let gateway: string;
let product: string;
const lines: string[] = [];
const events: Array<{ name: string; payload: any }> = [];

before(async () => {
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
  stack = await startClockStack('2026-05-01', { logger });
  const started = await startStripeDouble({ ...KEYS, now: () => stack.clock.now().getTime() / 1000 });
  double = started.double;
  const gw = await stack.api('POST', '/modules/Payment/Stripe/instances', { label: 'Stripe', module_data: { secret_key: KEYS.secretKey, webhook_secret: KEYS.webhookSecret, api_base: started.url } });
  assert.equal(gw.status, 201, JSON.stringify(gw.body));
  gateway = gw.body.uuid;
  double.webhookUrl = `${stack.platform.url}/webhooks/payment/${gateway}`;
  const res = await stack.api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'basic', bandwidth: 10 } });
  product = res.body.uuid;
  await stack.api('PUT', `/products/${product}/prices/monthly`, { amount: '12.34', currency: 'EUR' });
  for (const name of ['payment.auto_charge_failed', 'payment.method_saved', 'invoice.paid', 'invoice.payment_failed'] as const) {
    stack.platform.platform.hooks.on(name, (payload) => void events.push({ name, payload }));
  }
});

after(async () => {
  await double?.close();
  await stack?.close();
});

/** Orders a plan and pays it on the double's Checkout page with `card` (saved for the renewals). */
async function buy(username: string, card: TestCard): Promise<{ service: string; customer: string }> {
  const order = await stack.api('POST', '/orders', { customer: { email: `${username}@example.test` }, product_uuid: product, billing_cycle: 'monthly', service_data: { username } });
  assert.equal(order.status, 201, JSON.stringify(order.body));
  const session = await stack.api('POST', `/invoices/${order.body.invoice.uuid}/payment-session`, { gateway_uuid: gateway, return_url: 'http://x.test/ok', cancel_url: 'http://x.test/no' });
  const id = /\/pay\/(cs_test_[0-9a-f]+)/.exec(session.body.html)?.[1];
  assert.ok(id, session.body.html);
  const call = double.requests.filter((r) => r.path === '/v1/checkout/sessions').at(-1)!;
  assert.equal(call.form['payment_intent_data[setup_future_usage]'], 'off_session', 'a service invoice saves the card');
  assert.match(call.form.customer, /^cus_test_/);
  assert.equal(await double.pay(id, { card }), 200);
  assert.equal((await stack.api('GET', `/invoices/${order.body.invoice.uuid}`)).body.status, 'paid');
  return { service: order.body.service_uuid, customer: order.body.order.customer_uuid };
}

async function renewal(service: string): Promise<any> {
  return (await stack.api('GET', `/invoices?service=${service}`)).body.invoices.find((i: any) => i.kind === 'renewal');
}

/** Every charge task queued so far is final and the double has sent its webhooks. */
async function chargesSettled(): Promise<void> {
  await until(async () => {
    const tasks = (await stack.api('GET', '/tasks?tag=billing_charge')).body.tasks;
    return tasks.every((t: any) => ['completed', 'failed', 'duplicate'].includes(t.status)) ? true : undefined;
  }, 30_000, 25);
  await double.settled();
}

test('saved card, off-session charge on the due date: success, decline and authentication required, each once', async () => {
  const ok = await buy('card_ok', 'ok');
  const declined = await buy('card_no', 'decline_later');
  const auth = await buy('card_3ds', 'auth_later');
  const methods = (await stack.api('GET', `/customers/${ok.customer}/payment-methods`)).body.payment_methods;
  assert.deepEqual(methods.map((m: any) => [m.label, m.gateway, m.gateway_uuid]), [['visa •••• 4242', 'Stripe', gateway]]);
  assert.equal(JSON.stringify(methods).includes('pm_test_'), false, 'the gateway references are not shown');
  assert.equal(events.filter((e) => e.name === 'payment.method_saved').length, 3);

  await stack.advanceTo('2026-05-25');
  const open = { ok: await renewal(ok.service), declined: await renewal(declined.service), auth: await renewal(auth.service) };
  assert.equal(open.ok.due_date, '2026-06-01');
  assert.equal(double.requests.filter((r) => r.path === '/v1/payment_intents').length, 0, 'nothing is charged before the due date');

  await stack.advanceTo('2026-06-01');
  await chargesSettled();
  const charges = double.requests.filter((r) => r.path === '/v1/payment_intents');
  assert.deepEqual(charges.map((c) => c.idempotencyKey).sort(), [open.ok, open.declined, open.auth].map((i) => `charge-${i.uuid}`).sort());
  assert.equal(charges[0].form.off_session, 'true');
  assert.equal((await stack.api('GET', `/invoices/${open.ok.uuid}`)).body.status, 'paid', 'settled through the signed webhook');
  assert.equal((await stack.api('GET', `/services/${ok.service}/billing`)).body.next_due_date, '2026-07-01');
  for (const invoice of [open.declined, open.auth]) assert.equal((await stack.api('GET', `/invoices/${invoice.uuid}`)).body.status, 'failed', 'still payable');
  const failures = events.filter((e) => e.name === 'payment.auto_charge_failed');
  assert.deepEqual(failures.map((e) => [e.payload.invoice_uuid, e.payload.code]).sort(), [[open.declined.uuid, 'card_declined'], [open.auth.uuid, 'authentication_required']].sort());
  assert.equal(events.filter((e) => e.name === 'invoice.payment_failed').length, 0, 'told once, as auto_charge_failed');

  // Replays of every event, a second run the same day and the charge jobs queued again change nothing.
  for (const event of [...double.events]) assert.equal(await double.replay(event.id), 200);
  await stack.runBilling();
  for (const invoice of [open.ok, open.declined, open.auth]) await queueCharge(invoice.uuid);
  await chargesSettled();
  assert.equal(double.events.filter((e) => e.type.startsWith('payment_intent.') && e.payload.includes('"auto_charge":"1"')).length, 3, 'one webhook per charge');
  assert.equal((await stack.api('GET', `/invoices/${open.ok.uuid}`)).body.transactions.filter((t: any) => t.kind === 'payment').length, 1);
  assert.equal(events.filter((e) => e.name === 'payment.auto_charge_failed').length, 2);
  assert.equal(events.filter((e) => e.name === 'invoice.paid' && e.payload.invoice_uuid === open.ok.uuid).length, 1);

  // The customer gets one mail per refusal, with the link to pay the invoice.
  await until(async () => {
    const sends = (await stack.api('GET', '/smtp/sends?event=payment.auto_charge_failed')).body.sends;
    return sends.length >= 2 ? sends : undefined;
  }, 20_000, 50);
  // Readiness, not a pause: every mail task of the event is final, so no later send can still be on its way.
  const mailTasks = await until(async () => {
    const tasks = (await stack.api('GET', '/tasks?tag=event:payment.auto_charge_failed')).body.tasks;
    return tasks.every((t: any) => ['completed', 'failed', 'duplicate'].includes(t.status)) ? tasks : undefined;
  }, 20_000, 50);
  assert.equal(mailTasks.length, 2, 'one mail task per refusal');
  assert.equal((await stack.api('GET', '/smtp/sends?event=payment.auto_charge_failed')).body.sends.length, 2);
  const mail = lines.map((l) => JSON.parse(l)).find((l) => l.subject === `Your card was not charged for invoice ${open.declined.number}: please pay it`);
  assert.ok(mail, 'the declined mail is named in the log (no SMTP channel)');
  assert.equal(mail.text, undefined, 'its body (with the pay link) is never logged; the link is checked in test/unit/smtp/billing-messages.test.ts');

  // Paid later on Checkout: the period is extended from the old due date.
  const session = await stack.api('POST', `/invoices/${open.declined.uuid}/payment-session`, { gateway_uuid: gateway, return_url: 'http://x.test/ok', cancel_url: 'http://x.test/no' });
  await double.pay(/\/pay\/(cs_test_[0-9a-f]+)/.exec(session.body.html)![1], { card: 'ok' });
  assert.equal((await stack.api('GET', `/services/${declined.service}/billing`)).body.next_due_date, '2026-07-01');
});

test('a removed card is detached at Stripe and no longer charged', async () => {
  const { service, customer } = await buy('card_gone', 'ok');
  const [method] = (await stack.api('GET', `/customers/${customer}/payment-methods`)).body.payment_methods;
  const removed = await stack.api('DELETE', `/customers/${customer}/payment-methods/${method.uuid}`);
  assert.equal(removed.status, 200, JSON.stringify(removed.body));
  assert.equal(double.requests.filter((r) => r.path.endsWith('/detach')).length, 1);
  assert.deepEqual((await stack.api('GET', `/customers/${customer}/payment-methods`)).body.payment_methods, []);
  assert.equal((await stack.api('DELETE', `/customers/${customer}/payment-methods/${method.uuid}`)).status, 404);
  const due = (await stack.api('GET', `/services/${service}/billing`)).body.next_due_date;
  await stack.advanceTo(due);
  await chargesSettled();
  const open = await renewal(service);
  assert.equal(open.status, 'unpaid');
  assert.equal(double.requests.filter((r) => r.idempotencyKey === `charge-${open.uuid}`).length, 0, 'no saved card: no charge');
});
