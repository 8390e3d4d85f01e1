// The recurring-billing messages: renewal invoice (pay link, or "your saved card is charged"), reminders before and
// after the due date, overdue (the suspension day), suspended for non-payment, card declined (pay link), cancellation;
// the generic "suspended" mail is not sent twice for a suspension for non-payment.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_VIEWS_DIR } from '../../../module/contract/view.ts';
import { MessageComposer } from '../../../module/modules/Notification/Smtp/messages/compose.ts';
import type { RecipientDirectory, ServiceFacts } from '../../../module/modules/Notification/Smtp/messages/recipients.ts';

let billingState: string | null = 'active';
let saved = false;
const facts = (): ServiceFacts => ({
  service_uuid: 'svc-1', module: 'VpnProduct', provision_status: 'completed', plan_type: 'basic', server_location: 'ams', account_name: 'a',
  wg_server: 'main', address: '10.0.0.2/32', panel_location: 'ams', panel: null, username: 'dan', billing_state: billingState,
});
const directory: RecipientDirectory = {
  ofService: async () => ({ customer_uuid: 'cus-1', email: 'dan@example.com', name: 'Dan' }),
  ofCustomer: async () => ({ customer_uuid: 'cus-1', email: 'dan@example.com', name: 'Dan' }),
  service: async () => facts(),
  hasSavedMethod: async () => saved,
};
const composer = new MessageComposer({ recipients: directory, links: null, brand: 'AcmeVPN', clientAreaUrl: null, publicUrl: 'https://acme.example/' });
const invoice = {
  invoice_uuid: 'inv-7', invoice_number: 'INV-2026-000007', customer_uuid: 'cus-1', service_uuid: 'svc-1', product_uuid: 'p', module: 'VpnProduct',
  amount: '5.00', amount_minor: 500, currency: 'EUR', due_date: '2026-03-31', at: '2026-03-24T12:00:00.000Z',
};
const PAY = 'https://acme.example/client/invoices/inv-7';

async function mail(event: Parameters<MessageComposer['compose']>[0], payload: Record<string, unknown>) {
  const out = await composer.compose(event, payload, DEFAULT_VIEWS_DIR);
  if ('skipped' in out) assert.fail(out.skipped);
  return out;
}

test('renewal invoice: period, amount, due date and the pay link, or the saved card', async () => {
  const renewal = await mail('invoice.renewal_created', { ...invoice, period_start: '2026-03-31', period_end: '2026-04-30' });
  assert.equal(renewal.subject, 'Renewal invoice INV-2026-000007: 5.00 EUR due 2026-03-31');
  assert.match(renewal.text, /Period: 2026-03-31 to 2026-04-30\n  Amount: 5\.00 EUR\n  Due date: 2026-03-31/);
  assert.ok(renewal.text.includes(`Pay it here: ${PAY}`));
  assert.ok(renewal.html.includes(`<a href="${PAY}">`));
  assert.deepEqual(renewal.origin, { event: 'invoice.renewal_created', service_uuid: 'svc-1', invoice_uuid: 'inv-7', customer_uuid: 'cus-1' });
  saved = true;
  const charged = await mail('invoice.renewal_created', { ...invoice, period_start: '2026-03-31', period_end: '2026-04-30' });
  assert.match(charged.text, /saved card is charged on the due date/);
  assert.ok(!charged.text.includes(PAY));
  saved = false;
});

test('reminders before and after the due date; overdue names the suspension day; suspended for non-payment', async () => {
  const before = await mail('invoice.reminder', { ...invoice, when: 'before', days: 3 });
  assert.equal(before.subject, 'Reminder: invoice INV-2026-000007 is due 2026-03-31');
  assert.match(before.text, /is due on 2026-03-31, in 3 day\(s\)/);
  const after = await mail('invoice.reminder', { ...invoice, when: 'after', days: 7 });
  assert.equal(after.subject, 'Reminder: invoice INV-2026-000007 is overdue');
  assert.ok(after.text.includes(PAY));
  const overdue = await mail('service.overdue', { ...invoice, days: 1, suspend_on: '2026-04-03' });
  assert.match(overdue.text, /suspended on 2026-04-03/);
  assert.equal(overdue.origin.invoice_uuid, 'inv-7');
  const suspended = await mail('service.suspended_nonpayment', { ...invoice, days: 3 });
  assert.equal(suspended.subject, 'Your AcmeVPN VPN is suspended: invoice INV-2026-000007 is unpaid');
  assert.ok(suspended.text.includes(PAY));
  billingState = 'suspended';
  const generic = await composer.compose('service.suspended', { service_uuid: 'svc-1', module: 'VpnProduct', at: 'x' }, DEFAULT_VIEWS_DIR);
  assert.deepEqual(generic, { skipped: 'suspended for non-payment: told by service.suspended_nonpayment' });
  billingState = 'active';
  assert.ok(!('skipped' in (await composer.compose('service.suspended', { service_uuid: 'svc-1', module: 'VpnProduct', at: 'x' }, DEFAULT_VIEWS_DIR))));
});

test('card declined and authentication required carry the pay link; cancellation at the period end or at once', async () => {
  const declined = await mail('payment.auto_charge_failed', { ...invoice, gateway: 'Stripe', code: 'card_declined', reason: 'Your card was declined.' });
  assert.equal(declined.subject, 'Your card was not charged for invoice INV-2026-000007: please pay it');
  assert.match(declined.text, /did not go through\.\nReason: Your card was declined\./);
  assert.ok(declined.text.includes(PAY) && declined.html.includes(`href="${PAY}"`));
  const auth = await mail('payment.auto_charge_failed', { ...invoice, gateway: 'Stripe', code: 'authentication_required', reason: 'needs authentication' });
  assert.match(auth.text, /your bank asks you to confirm it yourself/);
  const atEnd = await mail('service.cancelled', { service_uuid: 'svc-1', customer_uuid: 'cus-1', when: 'period_end', effective_date: '2026-04-30', by: 'customer', at: 'x' });
  assert.equal(atEnd.subject, 'Your AcmeVPN VPN is cancelled');
  assert.match(atEnd.text, /keeps working until 2026-04-30 and is not renewed/);
  const now = await mail('service.cancelled', { service_uuid: 'svc-1', customer_uuid: 'cus-1', when: 'immediate', effective_date: '2026-04-02', by: 'admin', at: 'x' });
  assert.match(now.text, /ends today \(2026-04-02\)/);
});
