// The customers' messages: templates rendered from views/notifications (text unescaped, HTML escaped, in the layout),
// and the composer's choices (recipient, one-time link or instructions, nothing without a customer).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_VIEWS_DIR } from '../../../module/contract/view.ts';
import { MESSAGE_EVENTS, MESSAGE_TEMPLATES } from '../../../module/modules/Notification/Smtp/messages/catalogue.ts';
import { MessageComposer } from '../../../module/modules/Notification/Smtp/messages/compose.ts';
import type { ConnectLinks } from '../../../module/modules/Notification/Smtp/messages/connect-link.ts';
import type { RecipientDirectory, ServiceFacts } from '../../../module/modules/Notification/Smtp/messages/recipients.ts';
import { renderMessage } from '../../../module/modules/Notification/Smtp/messages/render.ts';

const facts: ServiceFacts = {
  service_uuid: 'svc-1', module: 'VpnProduct', provision_status: 'completed', plan_type: 'premium', server_location: 'ams',
  account_name: 'svc_0123456789ab', wg_server: 'main', address: '10.77.0.2/32', panel_location: 'ams', panel: null, username: 'carol_vpn',
  billing_state: 'active',
};
const directory: RecipientDirectory = {
  ofService: async (uuid) => (uuid === 'svc-1' ? { customer_uuid: 'cus-1', email: 'carol@example.com', name: "Carol <O'Brien> & Co" } : null),
  ofCustomer: async (uuid) => (uuid === 'cus-1' ? { customer_uuid: 'cus-1', email: 'carol@example.com', name: 'Carol' } : null),
  service: async (uuid) => (uuid === 'svc-1' ? facts : null),
  hasSavedMethod: async (uuid) => uuid === 'cus-1',
};
const invoice = {
  invoice_uuid: 'inv-1', invoice_number: 'INV-2026-000042', customer_uuid: 'cus-1', service_uuid: 'svc-1', product_uuid: 'p', module: 'VpnProduct',
  amount: '9.99', amount_minor: 999, currency: 'EUR', due_date: '2026-12-01', at: '2026-11-23T13:00:00.000Z',
};

function composer(links: ConnectLinks | null) {
  return new MessageComposer({ recipients: directory, links, brand: 'AcmeVPN', clientAreaUrl: 'https://acme.example/client', publicUrl: 'https://acme.example/' });
}

test('every template renders: a one-line subject, a text body and an HTML body inside the layout', () => {
  for (const name of MESSAGE_TEMPLATES) {
    const out = renderMessage(DEFAULT_VIEWS_DIR, name, { brand: 'AcmeVPN', customer: { name: 'Carol', email: 'c@example.com' }, service: facts, invoice, link: null, client_area_url: null });
    assert.ok(out.subject.length > 0 && out.subject.length <= 255 && !out.subject.includes('\n'), name);
    assert.match(out.text, /^Hello Carol,\n/, name);
    assert.match(out.html, /^<!doctype html>[\s\S]*<p>Hello Carol,<\/p>[\s\S]*this message was sent to c@example.com/, name);
  }
  assert.deepEqual(Object.values(MESSAGE_EVENTS).sort(), [...MESSAGE_TEMPLATES].sort());
});

test('"how to connect" carries the panel link, escaped in HTML only, and no secret', async () => {
  const asked: string[] = [];
  const links: ConnectLinks = { link: async (panel, account) => (asked.push(`${panel}/${account}`), { url: 'https://gw.example/otl/abc123' }) };
  const mail = await composer(links).compose('service.provisioned', { service_uuid: 'svc-1', module: 'VpnProduct', at: 'now' }, DEFAULT_VIEWS_DIR);
  assert.ok(!('skipped' in mail));
  if ('skipped' in mail) return;
  assert.deepEqual(asked, ['ams/svc_0123456789ab']);
  assert.equal(mail.to, 'carol@example.com');
  assert.equal(mail.subject, 'Your AcmeVPN VPN is ready: how to connect');
  assert.match(mail.text, /^Hello Carol <O'Brien> & Co,/);
  assert.match(mail.text, /open it on the device you want to connect:\nhttps:\/\/gw\.example\/otl\/abc123\n/);
  assert.match(mail.text, /Location: ams\n  Plan: premium\n  VPN address: 10\.77\.0\.2\/32\n  Username: carol_vpn/);
  assert.match(mail.html, /<p>Hello Carol &lt;O&#x27;Brien&gt; &amp; Co,<\/p>/);
  assert.match(mail.html, /<a href="https:\/\/gw\.example\/otl\/abc123"/);
  assert.equal(mail.linkNote, null);
  assert.deepEqual(mail.origin, { event: 'service.provisioned', service_uuid: 'svc-1', invoice_uuid: null, customer_uuid: 'cus-1' });
  assert.doesNotMatch(mail.text + mail.html, /PrivateKey|PRIVATE KEY/);
  assert.match(mail.text, /holds no password and no private key\.\n$/);
});

test('without a link the mail points to the client area and the reason is kept for the log', async () => {
  const links: ConnectLinks = { link: async () => ({ url: null, reason: 'Not found' }) };
  const mail = await composer(links).compose('service.provisioned', { service_uuid: 'svc-1', at: 'now' }, DEFAULT_VIEWS_DIR);
  if ('skipped' in mail) return assert.fail(mail.skipped);
  assert.match(mail.text, /from your client area: https:\/\/acme\.example\/client\./);
  assert.doesNotMatch(mail.text, /otl/);
  assert.equal(mail.linkNote, 'Not found');
  const noPanel = await composer(null).compose('service.provisioned', { service_uuid: 'svc-1', at: 'now' }, DEFAULT_VIEWS_DIR);
  assert.equal('skipped' in noPanel ? null : noPanel.linkNote, 'no panel can be asked for a link here');
});

test('invoice messages go to the invoice customer with number, amount, currency and due date', async () => {
  const created = await composer(null).compose('invoice.created', invoice, DEFAULT_VIEWS_DIR);
  if ('skipped' in created) return assert.fail(created.skipped);
  assert.equal(created.subject, 'Invoice INV-2026-000042: 9.99 EUR due 2026-12-01');
  assert.equal(created.to, 'carol@example.com');
  assert.deepEqual(created.origin, { event: 'invoice.created', service_uuid: 'svc-1', invoice_uuid: 'inv-1', customer_uuid: 'cus-1' });
  const failed = await composer(null).compose('invoice.payment_failed', { ...invoice, reason: 'card declined' }, DEFAULT_VIEWS_DIR);
  if ('skipped' in failed) return assert.fail(failed.skipped);
  assert.equal(failed.subject, 'Payment failed for invoice INV-2026-000042');
  assert.match(failed.text, /Reason: card declined/);
  const paid = await composer(null).compose('invoice.paid', { ...invoice, transaction_uuid: 't', gateway: 'Stripe' }, DEFAULT_VIEWS_DIR);
  if ('skipped' in paid) return assert.fail(paid.skipped);
  assert.match(paid.text, /we received 9\.99 EUR for invoice INV-2026-000042/);
});

test('no customer, no mail', async () => {
  assert.deepEqual(await composer(null).compose('service.suspended', { service_uuid: 'svc-9', at: 'now' }, DEFAULT_VIEWS_DIR), { skipped: 'no customer for service svc-9' });
  assert.deepEqual(await composer(null).compose('invoice.created', { ...invoice, customer_uuid: 'cus-9', service_uuid: null }, DEFAULT_VIEWS_DIR), { skipped: 'no customer for invoice inv-1' });
});

test('password reset: the public URL + signed path, to the customer', async () => {
  const mail = await composer(null).compose('customer.password_reset', {
    customer_uuid: 'cus-1', email: 'old@example.com', reset_path: '/client/password/reset?token=abc.DEF%2Bghi', expires_at: '2026-11-23T14:30:00.000Z', at: 'now',
  }, DEFAULT_VIEWS_DIR);
  if ('skipped' in mail) return assert.fail(mail.skipped);
  assert.equal(mail.to, 'carol@example.com', "the customer's current address");
  assert.equal(mail.subject, 'Reset your AcmeVPN password');
  assert.match(mail.text, /\nhttps:\/\/acme\.example\/client\/password\/reset\?token=abc\.DEF%2Bghi\n/);
  assert.match(mail.text, /until 2026-11-23T14:30:00\.000Z/);
  assert.ok(mail.html.includes('href="https://acme.example/client/password/reset?token&#x3D;abc.DEF%2Bghi"'), 'escaped in HTML (= as &#x3D;)');
  assert.deepEqual(mail.origin, { event: 'customer.password_reset', service_uuid: null, invoice_uuid: null, customer_uuid: 'cus-1' });
  assert.deepEqual(await composer(null).compose('customer.password_reset', { customer_uuid: 'cus-9', reset_path: '/x' }, DEFAULT_VIEWS_DIR), { skipped: 'no customer cus-9' });
});
