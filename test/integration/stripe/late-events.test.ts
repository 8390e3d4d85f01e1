// Events for an invoice that is no longer payable: after it was paid, five signed payment_failed events and two
// mismatched payments arrive (a gateway retrying, a second card, a replayed decline). Each is recorded as what it was
// (failures `not applied`, money kept refundable), the invoice stays paid, and nobody is mailed: no
// `invoice.payment_failed` event, no message job. A failure while the invoice is still payable is mailed once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { config, type ModulesConfig } from '../../../config.ts';
import type { Platform } from '../../../module/platform/platform.ts';
import { until } from '../../fixtures/platform/http.ts';
import { intentEvent, signatureFor } from '../../helpers/stripe-double.ts';
import { openWebhookPlatform, type WebhookPlatform } from './stripe-stack.ts';

const WEBHOOK_SECRET = 'whsec_LateEventsSuiteSigningSecret5511';

let env: WebhookPlatform;
let platform: Platform;
let app: FastifyInstance;
let seq = 0;

const modules = (): ModulesConfig => ({
  modules: {
    Product: { VpnProduct: config.modules.Product.VpnProduct }, Plugin: {}, Payment: { Stripe: config.modules.Payment.Stripe },
    Notification: { Smtp: config.modules.Notification.Smtp },
  },
});

/** Delivers a signed PaymentIntent event for `invoice`; answers the ledger's outcome. */
async function deliver(type: 'payment_intent.succeeded' | 'payment_intent.payment_failed', invoice: string, amount = 999, currency = 'eur'): Promise<string> {
  const payload = JSON.stringify(intentEvent({ id: `evt_late_${++seq}`, type, invoice_uuid: invoice, amount, currency, created: Math.floor(Date.now() / 1000) }));
  const res = await app.inject({
    method: 'POST', url: `/webhooks/payment/${env.gateway}`, payload,
    headers: { 'content-type': 'application/json', 'stripe-signature': signatureFor(payload, WEBHOOK_SECRET, Math.floor(Date.now() / 1000)) },
  });
  assert.equal(res.statusCode, 200, res.body);
  return JSON.parse(res.body).outcome;
}

async function order(username: string): Promise<string> {
  const res = await env.api('POST', '/orders', { customer: { email: `${username}@late.example` }, product_uuid: env.productUuid, billing_cycle: 'monthly', service_data: { username } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.invoice.uuid;
}

/** Message jobs queued for `event` about `invoice`. */
const messageJobs = async (event: string, invoice: string) =>
  Number((await platform.store.db.selectFrom('tasks').select((eb) => eb.fn.countAll().as('n'))
    .where('tags', 'like', `%event:${event}%`).where('tags', 'like', `%invoice:${invoice}%`).executeTakeFirstOrThrow()).n);

before(async () => {
  env = await openWebhookPlatform({ modulesConfig: modules(), secretKey: 'sk_test_51LateEventsSuiteKey3311', webhookSecret: WEBHOOK_SECRET, logger: pino({ level: 'silent' }) });
  ({ platform, app } = env);
});

after(async () => {
  await env?.close();
});

test('failure and mismatch events after the invoice was paid are recorded and mail nobody', async () => {
  const failed: string[] = [];
  const off = platform.hooks.on('invoice.payment_failed', (e) => void failed.push(e.invoice_uuid));
  try {
    const inv = await order('late_one');
    // While the invoice is payable, a decline is news for the customer: one event, one message job.
    assert.equal(await deliver('payment_intent.payment_failed', inv), 'failed');
    await until(async () => (failed.length === 1 ? true : undefined), 10_000, 20);
    await until(async () => ((await messageJobs('invoice.payment_failed', inv)) === 1 ? true : undefined), 10_000, 20);

    assert.equal(await deliver('payment_intent.succeeded', inv), 'paid');
    const late = [];
    for (let i = 0; i < 5; i++) late.push(await deliver('payment_intent.payment_failed', inv));
    late.push(await deliver('payment_intent.succeeded', inv, 500), await deliver('payment_intent.succeeded', inv, 999, 'usd'));
    assert.deepEqual(late, ['not_payable', 'not_payable', 'not_payable', 'not_payable', 'not_payable', 'already_paid', 'already_paid']);

    const row = (await env.api('GET', `/invoices/${inv}`)).body;
    assert.equal(row.status, 'paid');
    const kinds = row.transactions.map((t: { kind: string; note: string }) => `${t.kind}:${t.note.startsWith('not applied: invoice already paid') ? 'not applied' : 'applied'}`);
    assert.deepEqual(kinds, [
      'failure:applied', 'payment:applied',
      ...Array(5).fill('failure:not applied'), 'payment:not applied', 'payment:not applied',
    ], 'every late event is on the invoice, marked not applied (late money stays refundable)');

    // A later event that does mail (another invoice's decline) is emitted and queued: the late ones did neither before it.
    const other = await order('late_two');
    assert.equal(await deliver('payment_intent.payment_failed', other), 'failed');
    await until(async () => (failed.includes(other) && (await messageJobs('invoice.payment_failed', other)) === 1 ? true : undefined), 10_000, 20);
    assert.deepEqual(failed, [inv, other], 'no payment_failed event after the invoice was paid');
    assert.equal(await messageJobs('invoice.payment_failed', inv), 1, 'still the one message of the decline before payment');
  } finally {
    off();
  }
});
