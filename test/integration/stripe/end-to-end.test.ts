// End to end on real HTTP: a real panel process, the platform listening on loopback, the Stripe double as the API:
// order → invoice → Checkout Session (idempotent) → signed payment_intent.succeeded → service completed → the account
// on the panel; a refund through the Refunds API terminates it; a refund the API refuses leaves the invoice paid.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { panel, until } from '../../fixtures/platform/http.ts';
import { waitForAction, type Stack } from '../../fixtures/platform/setup.ts';
import type { StripeDouble } from '../../helpers/stripe-double.ts';
import { startStripeStack, type StripeStack } from './stripe-stack.ts';

let env: StripeStack;
let stack: Stack;
let double: StripeDouble;
let gateway: string;
let product: string;
const api = (method: string, path: string, body?: unknown) => env.api(method, path, body);

before(async () => {
  env = await startStripeStack({ secretKey: 'sk_test_51EndToEndSuiteKey3141', webhookSecret: 'whsec_EndToEndSuiteSigningSecret2718' });
  ({ stack, double, gateway, product } = env);
});

after(async () => {
  await env?.close();
});

async function paidOrder(username: string): Promise<{ invoice: string; service: string; transaction: string; account: string }> {
  const order = await api('POST', '/orders', { customer: { email: `${username}@example.test`, name: username }, product_uuid: product, billing_cycle: 'monthly', service_data: { username, password: 'Secr3tPassw0rd' } });
  assert.equal(order.status, 201, JSON.stringify(order.body));
  const invoice = order.body.invoice.uuid;
  const urls = { gateway_uuid: gateway, return_url: 'http://127.0.0.1/client/invoices/done', cancel_url: 'http://127.0.0.1/client/invoices/cancel' };
  const first = await api('POST', `/invoices/${invoice}/payment-session`, urls);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const again = await api('POST', `/invoices/${invoice}/payment-session`, urls);
  const link = /href="([^"]+\/pay\/(cs_test_[0-9a-f]+))"/.exec(first.body.html);
  assert.ok(link, first.body.html);
  assert.equal(/href="([^"]+)"/.exec(again.body.html)?.[1], link[1], 'the same session for the same invoice (idempotency key)');
  const calls = double.requests.filter((r) => r.path === '/v1/checkout/sessions' && r.idempotencyKey === invoice);
  assert.equal(calls.length, 2);
  assert.equal(calls[0].form['line_items[0][price_data][unit_amount]'], '1234', 'minor units');
  assert.equal(calls[0].form['line_items[0][price_data][currency]'], 'eur');
  assert.equal(calls[0].form['payment_intent_data[metadata][invoice_uuid]'], invoice);

  // The customer pays on the (double's) payment page: a real POST that makes it send the signed event.
  const page = await fetch(link[1]);
  assert.match(await page.text(), /Pay \(test\)/);
  const paid = await fetch(`${link[1]}/succeed`, { method: 'POST', redirect: 'manual' });
  assert.equal(paid.status, 303, await paid.text());
  assert.equal(paid.headers.get('location'), urls.return_url);
  const row = (await api('GET', `/invoices/${invoice}`)).body;
  assert.equal(row.status, 'paid');
  assert.equal((await waitForAction(stack, order.body.service_uuid, 'create')).status, 'completed');
  await until(async () => ((await api('GET', `/services/${order.body.service_uuid}`)).body.provision_status === 'completed' ? true : undefined), 20_000, 50);
  const service = (await api('GET', `/services/${order.body.service_uuid}`)).body;
  return { invoice, service: order.body.service_uuid, transaction: row.transactions[0].uuid, account: service.provision_data.account_name };
}

test('order → invoice → Stripe payment → service completed and the account on the panel; refund terminates it', async () => {
  const { invoice, service, transaction, account } = await paidOrder('stripe_e2e');
  const onPanel = await panel(stack.panel.url, stack.panel.accessHash, 'GET', `/account/${account}`);
  assert.equal(onPanel.error, '');
  assert.equal(onPanel.msg.username, 'stripe_e2e');
  assert.equal(onPanel.msg.status, 'enable');

  const refund = await api('POST', `/transactions/${transaction}/refund`, {});
  assert.equal(refund.status, 200, JSON.stringify(refund.body));
  assert.equal(refund.body.full, true);
  assert.match(refund.body.stripe_refund, /^re_test_/);
  const refundCall = double.requests.find((r) => r.path === '/v1/refunds');
  assert.equal(refundCall?.form.amount, '1234');
  const row = (await api('GET', `/invoices/${invoice}`)).body;
  assert.equal(row.status, 'refunded');
  assert.deepEqual(row.transactions.map((t: any) => [t.kind, t.external_id?.slice(0, 8)]), [['payment', 'pi_test_'], ['refund', 're_test_']]);
  assert.equal((await waitForAction(stack, service, 'termination')).status, 'completed');
  await until(async () => ((await api('GET', `/services/${service}`)).body.provision_status === 'terminated' ? true : undefined), 20_000, 50);
  assert.notEqual((await panel(stack.panel.url, stack.panel.accessHash, 'GET', `/account/${account}`)).error, '');
});

test('a refund the Stripe API refuses leaves the invoice paid and the service running; a partial refund is recorded', async () => {
  const { invoice, service, transaction } = await paidOrder('stripe_e2e2');
  double.failRefunds = 'Charge ch_x has been disputed.';
  try {
    const refused = await api('POST', `/transactions/${transaction}/refund`, { amount: '5' });
    assert.equal(refused.status, 502);
    assert.match(refused.body.error, /refund failed: Charge ch_x has been disputed\./);
  } finally {
    double.failRefunds = null;
  }
  let row = (await api('GET', `/invoices/${invoice}`)).body;
  assert.equal(row.status, 'paid');
  assert.equal(row.refunded_minor, 0);
  assert.deepEqual(row.transactions.map((t: any) => t.kind), ['payment']);
  const partial = await api('POST', `/transactions/${transaction}/refund`, { amount: '2.34' });
  assert.equal(partial.status, 200, JSON.stringify(partial.body));
  assert.equal(partial.body.full, false);
  row = (await api('GET', `/invoices/${invoice}`)).body;
  assert.equal(row.status, 'paid');
  assert.equal(row.refunded, '2.34');
  assert.equal((await api('GET', `/services/${service}`)).body.provision_status, 'completed');
});
