// Billing's hooks (invoice.created, invoice.paid, invoice.payment_failed) reach the customer through the Smtp module:
// listener → messageJob → deliverJob → a real SMTP server (STARTTLS + AUTH); a refund sends nothing; each send recorded.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { InvoiceEvent } from '../../../hooks.ts';
import { smtpServices } from '../../../module/modules/Notification/Smtp/index.ts';
import { CustomerRepository } from '../../../module/platform/store/repositories/customers.ts';
import { openSmtpPlatform, startSmtpServer, type TestSmtpServer } from './smtp-fixture.ts';

let server: TestSmtpServer;
let env: Awaited<ReturnType<typeof openSmtpPlatform>>;

before(async () => {
  server = await startSmtpServer();
  env = await openSmtpPlatform();
  env.platform.moduleAdmin.createInstance('Notification', 'Smtp', 'Billing mail', {
    host: '127.0.0.1', port: server.port, encryption: 'starttls', username: server.user, password: server.password, sender: 'billing@vpn.example', ca: server.cert,
  });
});

after(async () => {
  await env?.close();
  await server?.close();
});

test('invoice created, payment failed and payment received are mailed to the invoice customer; a refund is not', async () => {
  const customer = new CustomerRepository(env.platform.db).create({ email: 'dora@customer.example', name: 'Dora' });
  const invoice: InvoiceEvent = {
    invoice_uuid: 'c0ffee00-0000-4000-8000-000000000001', invoice_number: 'INV-2026-000007', customer_uuid: customer.uuid, service_uuid: null,
    product_uuid: null, module: null, amount: '12.50', amount_minor: 1250, currency: 'EUR', due_date: '2026-12-07', at: '2026-11-23T13:40:00.000Z',
  };
  await env.platform.hooks.emit('invoice.created', invoice);
  await server.waitForMails(1, 20_000);
  await env.platform.hooks.emit('invoice.payment_failed', { ...invoice, reason: 'Your card was declined.', at: '2026-11-23T13:41:00.000Z' });
  await server.waitForMails(2, 20_000);
  await env.platform.hooks.emit('invoice.refunded', { ...invoice, refunded_minor: 1250, full: true, at: '2026-11-23T13:42:00.000Z' });
  await env.platform.hooks.emit('invoice.paid', { ...invoice, transaction_uuid: 't-1', gateway: 'Stripe', at: '2026-11-23T13:43:00.000Z' });
  await server.waitForMails(3, 20_000);
  assert.deepEqual(server.received.map((m) => m.subject), [
    'Invoice INV-2026-000007: 12.50 EUR due 2026-12-07',
    'Payment failed for invoice INV-2026-000007',
    'Payment received for invoice INV-2026-000007',
  ]);
  assert.ok(server.envelopes.every((rcpt) => rcpt.join() === 'dora@customer.example'));
  assert.match(String(server.received[0].text), /Amount: 12\.50 EUR\n {2}Due date: 2026-12-07/);
  assert.match(String(server.received[1].text), /Reason: Your card was declined\./);
  assert.match(String(server.received[2].html), /we received <strong>12\.50 EUR<\/strong> for invoice INV-2026-000007/);

  const store = smtpServices(env.platform.modules).smtpSends!;
  for (let i = 0; i < 200 && store.list().some((s) => s.status === 'queued'); i++) await new Promise((r) => setTimeout(r, 25));
  assert.deepEqual(store.list().reverse().map((s) => [s.event, s.invoice_uuid, s.customer_uuid, s.status]), [
    ['invoice.created', invoice.invoice_uuid, customer.uuid, 'sent'],
    ['invoice.payment_failed', invoice.invoice_uuid, customer.uuid, 'sent'],
    ['invoice.paid', invoice.invoice_uuid, customer.uuid, 'sent'],
  ]);
  assert.equal(server.received.length, 3, 'the refund sent nothing');
});
