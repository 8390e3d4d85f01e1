// Billing's hooks (invoice.created, invoice.paid, invoice.payment_failed) and the web host's customer.password_reset
// reach the customer through the Smtp module: listener → messageJob → deliverJob → a real SMTP server (STARTTLS +
// AUTH); a refund sends nothing; each send recorded; the reset token sealed in the task record and kept out of logs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { InvoiceEvent } from '../../../hooks.ts';
import { smtpServices } from '../../../module/modules/Notification/Smtp/index.ts';
import type { Smtp } from '../../../module/modules/Notification/Smtp/smtp.ts';
import { CustomerQueries } from '../../../module/platform/store/query/repositories/customers.ts';
import { openSmtpPlatform, startSmtpServer, type TestSmtpServer } from './smtp-fixture.ts';

let server: TestSmtpServer;
let env: Awaited<ReturnType<typeof openSmtpPlatform>>;

before(async () => {
  server = await startSmtpServer();
  env = await openSmtpPlatform();
  await env.platform.moduleAdmin.createInstance('Notification', 'Smtp', 'Billing mail', {
    host: '127.0.0.1', port: server.port, encryption: 'starttls', username: server.user, password: server.password, sender: 'billing@vpn.example', ca: server.cert,
  });
});

after(async () => {
  await env?.close();
  await server?.close();
});

test('invoice created, payment failed and payment received are mailed to the invoice customer; a refund is not', async () => {
  const customer = await new CustomerQueries(env.platform.store).create({ email: 'dora@customer.example', name: 'Dora' });
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
  for (let i = 0; i < 200 && (await store.list()).some((s) => s.status === 'queued'); i++) await new Promise((r) => setTimeout(r, 25));
  assert.deepEqual((await store.list()).reverse().map((s) => [s.event, s.invoice_uuid, s.customer_uuid, s.status]), [
    ['invoice.created', invoice.invoice_uuid, customer.uuid, 'sent'],
    ['invoice.payment_failed', invoice.invoice_uuid, customer.uuid, 'sent'],
    ['invoice.paid', invoice.invoice_uuid, customer.uuid, 'sent'],
  ]);
  assert.equal(server.received.length, 3, 'the refund sent nothing');
});

test('a password reset request mails the link to the customer; the token is sealed in the task record and never logged', async () => {
  const customer = await new CustomerQueries(env.platform.store).create({ email: 'emil@customer.example', name: 'Emil' });
  const token = 'v1.ResetTokenPart-8812.SignaturePart-4407';
  const before = server.received.length;
  await env.platform.hooks.emit('customer.password_reset', {
    customer_uuid: customer.uuid, service_uuid: null, product_uuid: null, module: null, email: customer.email,
    reset_path: `/client/password/reset?token=${token}`, expires_at: '2026-11-23T15:00:00.000Z', at: '2026-11-23T14:00:00.000Z',
  });
  const mails = await server.waitForMails(before + 1, 20_000);
  const mail = mails[before];
  assert.equal(mail.subject, 'Reset your vpnhost password');
  assert.deepEqual(server.envelopes[before], ['emil@customer.example']);
  assert.match(String(mail.text), new RegExp(`\\nhttp://127\\.0\\.0\\.1:8090/client/password/reset\\?token=${token.replace(/\./g, '\\.')}\\n`));

  const tasks = await env.platform.queue.list({ tag: 'event:customer.password_reset' });
  assert.equal(tasks.length, 1);
  assert.equal(JSON.stringify(tasks[0].input).includes(token), false, 'the task listing shows the reset path redacted');
  const logs = JSON.stringify((await env.platform.moduleLogStore.read({ limit: 1000 }))) + env.lines.join('\n');
  assert.equal(logs.includes(token), false, 'the token is in no log');
});

test('with no channel the reset mail is recorded as logged, named in the log without its text or link', async () => {
  const customer = await new CustomerQueries(env.platform.store).create({ email: 'fay@customer.example', name: 'Fay' });
  const token = 'v1.OtherResetToken-5521.Sig-9932';
  const smtp = env.platform.modules.instance<Smtp>('Notification', 'Smtp');
  const result = await smtp.messageJob('customer.password_reset', { customer_uuid: customer.uuid, email: customer.email, expires_at: 'soon', at: 'now' },
    { secret: { reset_path: `/client/password/reset?token=${token}` } });
  assert.equal(result.status, 'success', result.message);
  const record = (await smtpServices(env.platform.modules).smtpSends!.list({ event: 'customer.password_reset' })).find((s) => s.recipient === 'fay@customer.example');
  assert.equal(record?.status, 'logged');
  const warning = env.lines.map((l) => JSON.parse(l)).find((l) => l.send_uuid === record?.uuid && l.level === 40);
  assert.deepEqual([warning?.template, warning?.to, warning?.subject, warning?.text], ['password-reset', 'fay@customer.example', record?.subject, undefined]);
  assert.equal(env.lines.join('\n').includes(token), false);
  assert.equal(JSON.stringify((await env.platform.moduleLogStore.read({ limit: 1000 }))).includes(token), false);
});

test('a message job run twice for the same event (a retried attempt) records and sends one mail', async () => {
  const customer = await new CustomerQueries(env.platform.store).create({ email: 'gus@customer.example', name: 'Gus' });
  const channel = (await env.platform.moduleInstances.list('Notification', 'Smtp'))[0];
  const opened = (await env.platform.moduleInstances.get(channel.uuid))!;
  const smtp = env.platform.modules.instance<Smtp>('Notification', 'Smtp', { payment_gateway_uuid: opened.uuid, module_data: opened.module_data });
  const event = {
    invoice_uuid: 'c0ffee00-0000-4000-8000-000000000002', invoice_number: 'INV-2026-000008', customer_uuid: customer.uuid, service_uuid: null,
    product_uuid: null, module: null, amount: '1.00', amount_minor: 100, currency: 'EUR', due_date: '2026-12-08', at: '2026-11-23T14:10:00.000Z',
  };
  const before = server.received.length;
  assert.equal((await smtp.messageJob('invoice.created', event)).status, 'success');
  const again = await smtp.messageJob('invoice.created', event);
  assert.equal(again.status, 'success');
  assert.match(String(again.message), /^already (queued|sent) as send /);
  await server.waitForMails(before + 1, 20_000);
  const sends = (await smtpServices(env.platform.modules).smtpSends!.list({ event: 'invoice.created' })).filter((s) => s.invoice_uuid === event.invoice_uuid);
  assert.equal(sends.length, 1);
  assert.equal((await smtp.messageJob('invoice.created', { ...event, at: '2026-11-23T14:11:00.000Z' })).status, 'success', 'a later event of the same invoice is another mail');
  await server.waitForMails(before + 2, 20_000);
});
