// Billing's order flow on real HTTP (real panel process, platform on loopback, the Stripe double as the API) with a
// real SMTP server as the customer's mailbox: order → "Invoice" mail → signed payment → "Payment received" → service
// completed → "how to connect" (one-time link or instructions, no secret) → refund → "terminated".
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { until } from '../../fixtures/platform/http.ts';
import type { Stack } from '../../fixtures/platform/setup.ts';
import { startStripeStack, type StripeStack } from '../stripe/stripe-stack.ts';
import { startSmtpServer, type TestSmtpServer } from './smtp-fixture.ts';

const SECRET_KEY = 'sk_test_51OrderMailsSuiteKey2718';
const WEBHOOK_SECRET = 'whsec_OrderMailsSigningSecret1618';
const SERVICE_PASSWORD = 'Order-Passw0rd-4471';

let env: StripeStack;
let stack: Stack;
let server: TestSmtpServer;
let gateway: string;
let product: string;
const api = (method: string, path: string, body?: unknown) => env.api(method, path, body);

before(async () => {
  server = await startSmtpServer();
  env = await startStripeStack({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
  ({ stack, gateway, product } = env);
  const channel = await api('POST', '/modules/Notification/Smtp/instances', { label: 'Customer mail', module_data: {
    host: '127.0.0.1', port: server.port, encryption: 'starttls', username: server.user, password: server.password, sender: 'VPN Host <noreply@vpn.example>', ca: server.cert,
  } });
  assert.equal(channel.status, 201, JSON.stringify(channel.body));
});

after(async () => {
  await env?.close();
  await server?.close();
});

test('the customer of a paid order is mailed the invoice, the payment, how to connect and the termination', async () => {
  const order = await api('POST', '/orders', { customer: { email: 'olga@customer.example', name: 'Olga' }, product_uuid: product, billing_cycle: 'monthly', service_data: { username: 'olga_vpn', password: SERVICE_PASSWORD } });
  assert.equal(order.status, 201, JSON.stringify(order.body));
  const invoice = order.body.invoice;
  await server.waitForMails(1, 20_000);
  assert.equal(server.received[0].subject, `Invoice ${invoice.number}: 12.34 EUR due ${invoice.due_date}`);

  const session = await api('POST', `/invoices/${invoice.uuid}/payment-session`, { gateway_uuid: gateway, return_url: 'http://127.0.0.1/done', cancel_url: 'http://127.0.0.1/cancel' });
  const link = /href="([^"]+\/pay\/cs_test_[0-9a-f]+)"/.exec(session.body.html);
  assert.ok(link, session.body.html);
  assert.equal((await fetch(`${link[1]}/succeed`, { method: 'POST', redirect: 'manual' })).status, 303);
  await server.waitForMails(3, 30_000);
  const subjects = server.received.map((m) => m.subject);
  assert.deepEqual(subjects.slice(1).sort(), [`Payment received for invoice ${invoice.number}`, 'Your vpnhost VPN is ready: how to connect'].sort());
  assert.ok(server.envelopes.every((rcpt) => rcpt.join() === 'olga@customer.example'));

  const connect = server.received.find((m) => m.subject === 'Your vpnhost VPN is ready: how to connect')!;
  const text = String(connect.text);
  const service = (await api('GET', `/services/${order.body.service_uuid}`)).body;
  assert.equal(service.provision_status, 'completed');
  // This stack's panel issues one-time links, so the mail carries one (the fallback text is service-mails.test.ts's),
  // and it opens: the confirm page of a live link.
  const mailed = new RegExp(`${stack.panel.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/otl/[A-Za-z0-9_-]+`).exec(text);
  assert.ok(mailed, text);
  assert.equal((await fetch(mailed[0])).status, 200, 'the mailed link is live');
  assert.match(text, /Username: olga_vpn/);
  for (const secret of [SERVICE_PASSWORD, SECRET_KEY, WEBHOOK_SECRET, server.password, 'PrivateKey']) {
    assert.equal(server.received.some((m) => String(m.text).includes(secret) || String(m.html).includes(secret)), false, `${secret} is in no mail`);
  }

  const transaction = (await api('GET', `/invoices/${invoice.uuid}`)).body.transactions[0].uuid;
  assert.equal((await api('POST', `/transactions/${transaction}/refund`, {})).status, 200);
  await server.waitForMails(4, 30_000);
  assert.equal(server.received[3].subject, 'Your vpnhost VPN has been terminated');

  await until(async () => {
    const sends = (await api('GET', `/smtp/sends?service=${order.body.service_uuid}`)).body.sends as any[];
    return sends.length >= 3 && sends.every((s) => s.status === 'sent') ? sends : undefined;
  }, 10_000, 50);
});
