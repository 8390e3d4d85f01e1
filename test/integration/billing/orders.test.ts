// Orders and invoices over real HTTP with a real panel: prices, order → pending service + unpaid invoice, manual
// payment → create() queued → service completed and the account on the panel; refunds terminate or suspend per
// product; the invoice events carry customer, number, amount and currency.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { InvoiceEvent } from '../../../hooks.ts';
import { admin, panel, until } from '../../fixtures/platform/http.ts';
import { registerPanel, startStack, waitForAction, type Stack } from '../../fixtures/platform/setup.ts';

let stack: Stack;
const events: Array<{ name: string; payload: InvoiceEvent }> = [];
const api = (method: string, path: string, body?: unknown) => admin(stack.platform.url, stack.token, method, path, body);

before(async () => {
  stack = await startStack();
  await registerPanel(stack);
  for (const name of ['invoice.created', 'invoice.paid', 'invoice.payment_failed', 'invoice.refunded'] as const) {
    stack.platform.platform.hooks.on(name, (payload) => void events.push({ name, payload }));
  }
});

after(async () => {
  await stack?.close();
});

async function product(plan: string): Promise<string> {
  const res = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: plan, bandwidth: 10 } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.uuid;
}

async function statusOf(uuid: string, want: string): Promise<void> {
  await until(async () => ((await api('GET', `/services/${uuid}`)).body.provision_status === want ? true : undefined), 20_000, 50);
}

test('prices: set per product and cycle in minor units, bad amounts and currencies refused', async () => {
  const basic = await product('basic');
  const set = await api('PUT', `/products/${basic}/prices/monthly`, { amount: '4.99', currency: 'eur' });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.equal(set.body.amount_minor, 499);
  assert.equal(set.body.currency, 'EUR');
  assert.equal(set.body.amount, '4.99');
  assert.equal((await api('PUT', `/products/${basic}/prices/annually`, { amount: 49.9, currency: 'EUR' })).body.amount_minor, 4990);
  const listed = await api('GET', `/prices?product=${basic}`);
  assert.deepEqual(listed.body.prices.map((p: any) => [p.billing_cycle, p.amount]), [['annually', '49.90'], ['monthly', '4.99']]);
  const tooFine = await api('PUT', `/products/${basic}/prices/monthly`, { amount: '4.999', currency: 'EUR' });
  assert.equal(tooFine.status, 422);
  assert.match(tooFine.body.error, /at most 2 decimals for EUR/);
  assert.equal((await api('PUT', `/products/${basic}/prices/monthly`, { amount: '5', currency: 'ABC' })).status, 422);
  assert.equal((await api('PUT', `/products/${basic}/prices/weekly`, { amount: '5', currency: 'EUR' })).status, 400);
  assert.equal((await api('PUT', '/products/00000000-0000-0000-0000-000000000000/prices/monthly', { amount: '5', currency: 'EUR' })).status, 404);
  const noPrice = await api('POST', '/orders', { customer: { email: 'x@example.test' }, product_uuid: basic, billing_cycle: 'quarterly', service_data: { username: 'nobody1', password: 'Passw0rdXyz' } });
  assert.equal(noPrice.status, 422);
  assert.match(noPrice.body.error, /has no price for billing cycle quarterly/);
});

test('order → unpaid invoice → manual payment → create queued → completed, account on the panel; refund terminates', async () => {
  const basic = await product('basic');
  await api('PUT', `/products/${basic}/prices/monthly`, { amount: '7.50', currency: 'EUR' });
  events.length = 0;
  const order = await api('POST', '/orders', {
    customer: { email: 'Dana@Example.test', name: 'Dana' }, product_uuid: basic, billing_cycle: 'monthly',
    service_data: { username: 'dana_1', password: 'Secr3tPassw0rd' },
  });
  assert.equal(order.status, 201, JSON.stringify(order.body));
  const invoice = order.body.invoice;
  const serviceUuid: string = order.body.service_uuid;
  assert.equal(invoice.status, 'unpaid');
  assert.equal(invoice.amount_minor, 750);
  assert.equal(invoice.amount, '7.50');
  assert.equal(invoice.currency, 'EUR');
  assert.match(invoice.number, /^INV-\d{4}-\d{6}$/);
  assert.match(invoice.due_date, /^\d{4}-\d{2}-\d{2}$/);
  assert.equal((await api('GET', `/services/${serviceUuid}`)).body.provision_status, 'pending', 'nothing provisioned before payment');
  const created = events.find((e) => e.name === 'invoice.created');
  assert.ok(created);
  assert.equal(created.payload.invoice_uuid, invoice.uuid);
  assert.equal(created.payload.invoice_number, invoice.number);
  assert.equal(created.payload.customer_uuid, order.body.order.customer_uuid);
  assert.equal(created.payload.amount, '7.50');
  assert.equal(created.payload.currency, 'EUR');
  const customers = (await api('GET', '/customers')).body.customers;
  assert.equal(customers.find((c: any) => c.uuid === order.body.order.customer_uuid).email, 'dana@example.test');

  const paid = await api('POST', `/invoices/${invoice.uuid}/payments`, { reference: 'bank transfer 42' });
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  assert.equal(paid.body.status, 'paid');
  assert.equal(paid.body.transactions.length, 1);
  assert.equal(paid.body.transactions[0].gateway, 'manual');
  assert.equal(paid.body.transactions[0].external_id, 'bank transfer 42');
  const again = await api('POST', `/invoices/${invoice.uuid}/payments`, {});
  assert.equal(again.status, 409, 'a paid invoice is not paid twice');
  assert.equal((await waitForAction(stack, serviceUuid, 'create')).status, 'completed');
  await statusOf(serviceUuid, 'completed');
  const service = (await api('GET', `/services/${serviceUuid}`)).body;
  const account = await panel(stack.panel.url, stack.panel.accessHash, 'GET', `/account/${service.provision_data.account_name}`);
  assert.equal(account.error, '');
  assert.equal(account.msg.username, 'dana_1');
  const paidEvent = events.find((e) => e.name === 'invoice.paid') as any;
  assert.equal(paidEvent.payload.gateway, 'manual');
  assert.equal(paidEvent.payload.transaction_uuid, paid.body.transactions[0].uuid);

  const tooMuch = await api('POST', `/transactions/${paid.body.transactions[0].uuid}/refund`, { amount: '7.51' });
  assert.equal(tooMuch.status, 422);
  const part = await api('POST', `/transactions/${paid.body.transactions[0].uuid}/refund`, { amount: '2.50' });
  assert.equal(part.status, 200, JSON.stringify(part.body));
  assert.equal(part.body.full, false);
  assert.equal(part.body.service_action, null);
  assert.equal((await api('GET', `/invoices/${invoice.uuid}`)).body.status, 'paid', 'a partial refund keeps the invoice paid');
  const rest = await api('POST', `/transactions/${paid.body.transactions[0].uuid}/refund`, {});
  assert.equal(rest.body.full, true);
  assert.equal(rest.body.service_action, 'termination');
  const after = (await api('GET', `/invoices/${invoice.uuid}`)).body;
  assert.equal(after.status, 'refunded');
  assert.equal(after.refunded_minor, 750);
  assert.deepEqual(after.transactions.map((t: any) => [t.kind, t.amount_minor]), [['payment', 750], ['refund', 250], ['refund', 500]]);
  assert.equal((await waitForAction(stack, serviceUuid, 'termination')).status, 'completed');
  await statusOf(serviceUuid, 'terminated');
  const gone = await panel(stack.panel.url, stack.panel.accessHash, 'GET', `/account/${service.provision_data.account_name}`);
  assert.notEqual(gone.error, '', 'the account is deleted on the panel');
  assert.deepEqual(events.filter((e) => e.name === 'invoice.refunded').map((e: any) => [e.payload.refunded_minor, e.payload.full]), [[250, false], [750, true]]);
});

test('refund policy `suspend`: a full refund suspends the service instead', async () => {
  const premium = await product('premium');
  await api('PUT', `/products/${premium}/prices/annually`, { amount: '60', currency: 'USD' });
  const policy = await api('PUT', `/products/${premium}/refund-policy`, { refund_action: 'suspend' });
  assert.deepEqual(policy.body, { product_uuid: premium, refund_action: 'suspend' });
  const customer = await api('POST', '/customers', { email: 'eve@example.test', name: 'Eve' });
  assert.equal(customer.status, 201);
  assert.equal((await api('POST', '/customers', { email: 'EVE@example.test' })).status, 409);
  const order = await api('POST', '/orders', { customer_uuid: customer.body.uuid, product_uuid: premium, billing_cycle: 'annually', service_data: { username: 'eve_1', password: 'Secr3tPassw0rd' } });
  assert.equal(order.status, 201, JSON.stringify(order.body));
  const serviceUuid = order.body.service_uuid;
  const paid = await api('POST', `/invoices/${order.body.invoice.uuid}/payments`);
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  await statusOf(serviceUuid, 'completed');
  const refund = await api('POST', `/transactions/${paid.body.transactions[0].uuid}/refund`, { amount: 60 });
  assert.equal(refund.body.service_action, 'suspend');
  await statusOf(serviceUuid, 'suspended');
  const listed = await api('GET', `/invoices?customer=${customer.body.uuid}`);
  assert.equal(listed.body.total, 1);
  assert.equal(listed.body.invoices[0].status, 'refunded');
  assert.equal((await api('GET', '/invoices?status=refunded')).body.total, 2);
});
