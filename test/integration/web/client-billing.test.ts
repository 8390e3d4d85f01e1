// Recurring billing in the web pages: the client-area service page shows the billing period and state and cancels
// (at the period end or now, confirmed, CSRF, own services only); saved payment methods are listed and removed (own
// only); the admin service page shows the billing block and cancels / withdraws a cancellation.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Browser, startWebStack, type WebStack } from '../../fixtures/web/web-stack.ts';

const ALICE = { email: 'alice.billing@example.com', password: 'Alice-Pass-1' };
const BOB = { email: 'bob.billing@example.com', password: 'Bob-Pass-12' };
let stack: WebStack;
let product: string;
let alice: string;
let bob: string;

before(async () => {
  stack = await startWebStack();
  product = (await stack.platform.catalogue.createProduct('TabProduct', { server_location: 'ams', plan_type: 'premium', disk_space: 10, bandwidth: 100 })).uuid;
  (await stack.platform.billing.setPrice(product, 'monthly', '8.00', 'EUR'));
  alice = (await stack.web.customers.create(ALICE)).uuid;
  bob = (await stack.web.customers.create(BOB)).uuid;
  await stack.web.admins.create({ email: 'root.billing@example.com', password: 'Root-Pass-1', role: 'Administrator' });
});

after(async () => {
  await stack?.close();
});

/** A paid monthly service of `customer` (clock: 2026-03-01, so paid through 2026-04-01). */
async function paidService(customer: string, username: string): Promise<string> {
  const order = await stack.platform.billing.order({ customer_uuid: customer, product_uuid: product, billing_cycle: 'monthly', service_data: { username, domain: `${username.replace(/_/g, '-')}.example.com` } });
  await stack.platform.billing.payManually(order.invoice.uuid, 'wire');
  return order.service_uuid;
}

async function login(who: { email: string; password: string }): Promise<Browser> {
  const b = new Browser(stack.app);
  assert.equal((await b.loginCustomer(who.email, who.password)).statusCode, 303);
  return b;
}

test('the service page shows the billing period; a customer cancels at the period end, confirmed and with CSRF', async () => {
  const uuid = await paidService(alice, 'alice_keep');
  const b = await login(ALICE);
  const page = await b.get(`/client/services/${uuid}`);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /id="billing-state">active</);
  assert.match(page.body, /8\.00 EUR monthly/);
  assert.match(page.body, /paid through <strong id="next-due"><time datetime="2026-04-01">1 Apr 2026<\/time><\/strong>/, 'the day in the reader\'s locale (en-GB without Accept-Language)');
  assert.match(page.body, /id="cancel-form"/);
  assert.match((await b.get('/client')).body, /href="\/client\/payment-methods">Payment methods<\/a>/);

  assert.equal((await b.post(`/client/services/${uuid}/cancel`, { when: 'period_end', confirm: 'yes' }, { csrf: false })).statusCode, 403);
  const unconfirmed = await b.post(`/client/services/${uuid}/cancel`, { when: 'period_end' });
  assert.equal(unconfirmed.statusCode, 303);
  assert.match((await b.get(`/client/services/${uuid}`)).body, /tick the confirmation/);
  assert.equal((await stack.platform.recurring.service(uuid)).cancel_at, null);

  const done = await b.post(`/client/services/${uuid}/cancel`, { when: 'period_end', confirm: 'yes' });
  assert.equal(done.headers.location, `/client/services/${uuid}`);
  const after = await b.get(`/client/services/${uuid}`);
  assert.match(after.body, /it runs until 2026-04-01 and is not renewed/);
  assert.match(after.body, /id="cancel-note">Cancelled: the service ends on <time datetime="2026-04-01">1 Apr 2026<\/time>/);
  assert.doesNotMatch(after.body, /id="cancel-form"/);
  assert.deepEqual([(await stack.platform.recurring.service(uuid)).cancel_by, (await stack.platform.recurring.service(uuid)).state], ['customer', 'active']);
});

test('cancelling now ends the service today; someone else\'s service answers 404 and is not touched', async () => {
  const mine = await paidService(alice, 'alice_now');
  const theirs = await paidService(bob, 'bob_keep');
  const b = await login(ALICE);
  await b.get(`/client/services/${mine}`);
  await b.post(`/client/services/${mine}/cancel`, { when: 'immediate', confirm: 'yes' });
  assert.equal((await stack.platform.recurring.service(mine)).state, 'cancelled');
  assert.match((await b.get(`/client/services/${mine}`)).body, /Cancelled on <time datetime="2026-03-01">1 Mar 2026<\/time>\./);
  const other = await b.post(`/client/services/${theirs}/cancel`, { when: 'immediate', confirm: 'yes' });
  assert.equal(other.statusCode, 404);
  assert.equal((await stack.platform.recurring.service(theirs)).state, 'active');
});

test('saved payment methods: listed without references, removed by their owner only', async () => {
  const save = (customer: string, last4: string) => stack.platform.billing.ledger.saveMethod({
    customer_uuid: customer, gateway_uuid: `gw-${last4}`, gateway: 'Stripe', external_customer: `cus_${last4}`, external_id: `pm_secret_${last4}`,
    label: `visa •••• ${last4}`, brand: 'visa', last4, exp_month: 12, exp_year: 2034,
  });
  await save(alice, '4242');
  await save(bob, '1111');
  const b = await login(ALICE);
  const page = await b.get('/client/payment-methods');
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<strong>visa •••• 4242<\/strong> <small>expires 12\/2034<\/small>/);
  assert.doesNotMatch(page.body, /pm_secret|cus_4242|1111/);
  const [mine] = (await stack.platform.recurring.methods.list(alice));
  const [theirs] = (await stack.platform.recurring.methods.list(bob));
  assert.equal((await b.post(`/client/payment-methods/${theirs.uuid}/remove`)).statusCode, 404);
  assert.equal((await stack.platform.recurring.methods.list(bob)).length, 1);
  const removed = await b.post(`/client/payment-methods/${mine.uuid}/remove`);
  assert.equal(removed.headers.location, '/client/payment-methods');
  const after = await b.get('/client/payment-methods');
  assert.match(after.body, /visa •••• 4242 removed: renewals are no longer charged to it\./);
  assert.match(after.body, /No saved payment method/);
});

test('the admin service page shows the billing block; an admin cancels at the period end and withdraws it', async () => {
  const uuid = await paidService(bob, 'bob_admin');
  const b = new Browser(stack.app);
  assert.equal((await b.loginAdmin('root.billing@example.com', 'Root-Pass-1')).statusCode, 303);
  const page = await b.get(`/admin/services/${uuid}`);
  assert.match(page.body, /id="billing-state">active</);
  assert.match(page.body, /paid through <strong id="next-due">2026-04-01<\/strong>\s*\(anchor day 1, next period ends 2026-05-01\)/);
  await b.post(`/admin/services/${uuid}/billing/cancel`, { when: 'period_end' });
  const cancelled = await b.get(`/admin/services/${uuid}`);
  assert.match(cancelled.body, /Cancelled at the period end: the service ends on 2026-04-01\./);
  assert.match(cancelled.body, /id="cancel-note">Cancellation by admin: ends on 2026-04-01/);
  await b.post(`/admin/services/${uuid}/billing/undo-cancel`);
  assert.match((await b.get(`/admin/services/${uuid}`)).body, /Cancellation withdrawn: the service renews again\./);
  assert.equal((await stack.platform.recurring.service(uuid)).cancel_at, null);
});
