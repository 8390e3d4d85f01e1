// Recurring billing on a driven clock with a real panel (simulated driver): renewal → payment extends the period from the
// old due date (month-end anchor); unpaid → reminder → overdue → suspended (panel account disabled) → paid →
// unsuspended; unpaid 30 days → terminated; an admin's suspension survives a payment; cancellation at the period end
// (and its undo) and at once; upgrade (prorated invoice) and downgrade (credit consumed by the next renewal).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HookEventName } from '../../../hooks.ts';
import { waitForTask } from '../../fixtures/billing/orders.ts';
import { panelAccount, provisionStatus, startClockStack, type ClockStack } from '../../fixtures/billing/clock-stack.ts';

/** Collects every billing event the platform emits: name and the uuid it is about. */
function record(stack: ClockStack): Array<{ name: string; invoice?: string; service?: string; payload: any }> {
  const seen: Array<{ name: string; invoice?: string; service?: string; payload: any }> = [];
  const names: HookEventName[] = [
    'invoice.renewal_created', 'invoice.reminder', 'service.overdue', 'service.suspended_nonpayment', 'service.unsuspended_payment',
    'service.terminated_nonpayment', 'service.renewed', 'service.cancelled', 'service.cancellation_undone', 'service.plan_changed', 'invoice.paid', 'invoice.created',
  ];
  for (const name of names) {
    stack.platform.platform.hooks.on(name, (payload: any) => void seen.push({ name, invoice: payload.invoice_uuid, service: payload.service_uuid, payload }));
  }
  return seen;
}

async function product(stack: ClockStack, plan: string, amount: string): Promise<string> {
  const res = await stack.api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: plan, bandwidth: plan === 'premium' ? 50 : 10 } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.equal((await stack.api('PUT', `/products/${res.body.uuid}/prices/monthly`, { amount, currency: 'EUR' })).status, 200);
  return res.body.uuid;
}

/** Orders and pays a monthly plan today; waits until it is provisioned. Answers the service uuid. */
async function sell(stack: ClockStack, productUuid: string, username: string): Promise<string> {
  const order = await stack.api('POST', '/orders', { customer: { email: `${username}@example.test` }, product_uuid: productUuid, billing_cycle: 'monthly', service_data: { username } });
  assert.equal(order.status, 201, JSON.stringify(order.body));
  assert.equal((await stack.api('GET', `/services/${order.body.service_uuid}/billing`)).body.state, 'pending');
  assert.equal((await stack.api('POST', `/invoices/${order.body.invoice.uuid}/payments`, { reference: 'first' })).status, 200);
  await provisionStatus(stack, order.body.service_uuid, 'completed');
  return order.body.service_uuid;
}

async function billing(stack: ClockStack, uuid: string): Promise<any> {
  return (await stack.api('GET', `/services/${uuid}/billing`)).body;
}

async function renewals(stack: ClockStack, uuid: string): Promise<any[]> {
  return (await stack.api('GET', `/invoices?service=${uuid}`)).body.invoices.filter((i: any) => i.kind === 'renewal').reverse();
}

async function pay(stack: ClockStack, invoiceUuid: string): Promise<void> {
  const res = await stack.api('POST', `/invoices/${invoiceUuid}/payments`, {});
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

test('renewal invoice made once within the lead time; paying it late extends from the old due date (31st anchor)', async () => {
  const stack = await startClockStack('2026-01-31');
  try {
    const events = record(stack);
    const basic = await product(stack, 'basic', '5.00');
    const uuid = await sell(stack, basic, 'renew_1');
    const first = await billing(stack, uuid);
    assert.deepEqual([first.state, first.anchor_day, first.next_due_date, first.next_period_end], ['active', 31, '2026-02-28', '2026-03-31']);
    const service = (await stack.api('GET', `/services/${uuid}`)).body;
    assert.equal(service.billing.next_due_date, '2026-02-28', 'the admin API shows the billing period with the service');

    await stack.advanceTo('2026-02-20');
    assert.equal((await renewals(stack, uuid)).length, 0, 'nothing before the lead time (7 days)');
    await stack.advanceTo('2026-02-21');
    const [renewal] = await renewals(stack, uuid);
    assert.deepEqual([renewal.period_start, renewal.period_end, renewal.due_date, renewal.amount, renewal.status], ['2026-02-28', '2026-03-31', '2026-02-28', '5.00', 'unpaid']);
    assert.match(renewal.number, /^INV-2026-\d{6}$/);
    const again = await stack.runBilling();
    assert.equal(again.renewals, 0, 'a second run the same day makes nothing');
    assert.equal((await renewals(stack, uuid)).length, 1);
    assert.equal(events.filter((e) => e.name === 'invoice.renewal_created' && e.invoice === renewal.uuid).length, 1);

    await stack.advanceTo('2026-03-02');
    assert.equal((await billing(stack, uuid)).state, 'overdue');
    await pay(stack, renewal.uuid);
    const extended = await billing(stack, uuid);
    assert.deepEqual([extended.state, extended.next_due_date, extended.next_period_end], ['active', '2026-03-31', '2026-04-30'], 'from the old due date, not the payment day');
    const renewed = events.find((e) => e.name === 'service.renewed' && e.invoice === renewal.uuid);
    assert.equal(renewed?.payload.next_due_date, '2026-03-31');
    assert.equal((await waitForTask(stack, uuid, 'create')).status, 'completed');
    assert.equal((await stack.api('GET', `/tasks?tag=service:${uuid}`)).body.tasks.filter((t: any) => t.tags.includes('create')).length, 1, 'a renewal provisions nothing again');

    await stack.advanceTo('2026-03-24');
    const next = (await renewals(stack, uuid)).at(-1);
    assert.deepEqual([next.period_start, next.period_end], ['2026-03-31', '2026-04-30']);
  } finally {
    await stack.close();
  }
});

test('unpaid: reminder, overdue, suspended for non-payment (panel account disabled), paid → unsuspended at once', async () => {
  const stack = await startClockStack('2026-03-10');
  try {
    const events = record(stack);
    const basic = await product(stack, 'basic', '4.00');
    const early = await sell(stack, basic, 'early_1');
    const late = await sell(stack, basic, 'late_1');
    await stack.advanceTo('2026-04-05');
    await pay(stack, (await renewals(stack, early))[0].uuid);
    assert.equal((await billing(stack, early)).next_due_date, '2026-05-10', 'paid before its due date: one more month from 04-10');
    const [open] = await renewals(stack, late);

    await stack.advanceTo('2026-04-07');
    const reminder = events.find((e) => e.name === 'invoice.reminder' && e.invoice === open.uuid);
    assert.deepEqual([reminder?.payload.when, reminder?.payload.days], ['before', 3]);
    await stack.advanceTo('2026-04-11');
    assert.equal((await billing(stack, late)).state, 'overdue');
    assert.equal((await billing(stack, early)).state, 'active');
    const overdue = events.find((e) => e.name === 'service.overdue' && e.invoice === open.uuid);
    assert.equal(overdue?.payload.suspend_on, '2026-04-13');
    await stack.advanceTo('2026-04-12');
    assert.equal((await billing(stack, late)).state, 'overdue', 'not before 3 days overdue');
    await stack.advanceTo('2026-04-13');
    assert.equal((await billing(stack, late)).state, 'suspended');
    await provisionStatus(stack, late, 'suspended');
    assert.equal((await panelAccount(stack, late))?.status, 'disable', 'the panel account is disabled');
    assert.equal(events.filter((e) => e.name === 'service.suspended_nonpayment' && e.service === late).length, 1);

    await stack.advanceTo('2026-04-14');
    await pay(stack, open.uuid);
    assert.equal((await billing(stack, late)).state, 'active');
    await provisionStatus(stack, late, 'completed');
    assert.equal((await panelAccount(stack, late))?.status, 'enable', 'enabled again on payment');
    assert.equal(events.filter((e) => e.name === 'service.unsuspended_payment' && e.service === late).length, 1);
    assert.equal((await billing(stack, late)).next_due_date, '2026-05-10');
  } finally {
    await stack.close();
  }
});

test('unpaid 30 days → terminated (invoice voided, account gone); an admin-suspended service stays suspended after payment', async () => {
  const stack = await startClockStack('2026-05-01');
  try {
    const events = record(stack);
    const basic = await product(stack, 'basic', '3.00');
    const never = await sell(stack, basic, 'never_1');
    const held = await sell(stack, basic, 'held_1');
    await stack.advanceTo('2026-05-20');
    assert.deepEqual((await stack.api('POST', `/services/${held}/suspend`)).body, { status: 'success' });
    await provisionStatus(stack, held, 'suspended');

    await stack.advanceTo('2026-06-04');
    assert.equal((await billing(stack, never)).state, 'suspended');
    assert.equal((await billing(stack, held)).state, 'overdue', 'billing does not take over an admin suspension');
    await pay(stack, (await renewals(stack, held))[0].uuid);
    assert.equal((await billing(stack, held)).state, 'active');
    const tasks = (await stack.api('GET', `/tasks?tag=service:${held}`)).body.tasks;
    assert.equal(tasks.filter((t: any) => t.tags.includes('unsuspend')).length, 0, 'no unsuspend queued');
    assert.equal((await stack.api('GET', `/services/${held}`)).body.provision_status, 'suspended');

    await stack.advanceTo('2026-06-30');
    assert.equal((await billing(stack, never)).state, 'suspended');
    await stack.advanceTo('2026-07-01');
    assert.equal((await billing(stack, never)).state, 'terminated');
    await provisionStatus(stack, never, 'terminated');
    assert.equal(await panelAccount(stack, never), null, 'the account is deleted on the panel');
    assert.equal((await renewals(stack, never))[0].status, 'void');
    assert.equal(events.filter((e) => e.name === 'service.terminated_nonpayment' && e.service === never).length, 1);
    await stack.advanceTo('2026-07-05');
    assert.equal((await renewals(stack, never)).length, 1, 'no renewal after termination');
  } finally {
    await stack.close();
  }
});

test('cancellation at the period end (no more renewals, terminated on the due date), undone, and at once', async () => {
  const stack = await startClockStack('2026-07-01');
  try {
    const events = record(stack);
    const basic = await product(stack, 'basic', '6.00');
    const ending = await sell(stack, basic, 'ending_1');
    const undone = await sell(stack, basic, 'undone_1');
    const now = await sell(stack, basic, 'now_1');
    await stack.advanceTo('2026-07-10');
    const cancelled = await stack.api('POST', `/services/${ending}/billing/cancel`, { when: 'period_end' });
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.deepEqual([cancelled.body.state, cancelled.body.cancel_at, cancelled.body.cancel_by], ['active', '2026-08-01', 'admin']);
    assert.equal((await stack.api('POST', `/services/${undone}/billing/cancel`, {})).status, 200);
    const undo = await stack.api('DELETE', `/services/${undone}/billing/cancel`);
    assert.deepEqual([undo.status, undo.body.cancel_at], [200, null]);
    assert.equal((await stack.api('DELETE', `/services/${undone}/billing/cancel`)).status, 409, 'nothing left to undo');
    const at = events.find((e) => e.name === 'service.cancelled' && e.service === ending)?.payload;
    assert.deepEqual([at?.when, at?.effective_date, at?.by], ['period_end', '2026-08-01', 'admin']);

    const immediate = await stack.api('POST', `/services/${now}/billing/cancel`, { when: 'immediate' });
    assert.equal(immediate.body.state, 'cancelled');
    await provisionStatus(stack, now, 'terminated');

    await stack.advanceTo('2026-07-31');
    assert.equal((await renewals(stack, ending)).length, 0, 'no renewal for a service cancelled at its period end');
    assert.equal((await renewals(stack, undone)).length, 1, 'an undone cancellation renews again');
    assert.equal((await stack.api('GET', `/services/${ending}`)).body.provision_status, 'completed', 'it runs until the period ends');
    await stack.advanceTo('2026-08-01');
    assert.equal((await billing(stack, ending)).state, 'cancelled');
    await provisionStatus(stack, ending, 'terminated');
    assert.equal((await stack.api('POST', `/services/${ending}/billing/cancel`, {})).status, 409);
  } finally {
    await stack.close();
  }
});

test('upgrade prorated to the day is invoiced and applied on payment; a downgrade credits the customer, the next renewal uses it', async () => {
  const stack = await startClockStack('2026-04-01');
  try {
    const events = record(stack);
    const basic = await product(stack, 'basic', '9.00');
    const premium = await product(stack, 'premium', '15.00');
    const uuid = await sell(stack, basic, 'mover_1');
    await stack.advanceTo('2026-04-11');
    const quote = await stack.api('POST', `/services/${uuid}/billing/change-plan`, { product_uuid: premium, dry_run: true });
    assert.deepEqual([quote.body.proration.days_left, quote.body.proration.days_total, quote.body.proration.balance_minor], [20, 30, 400]);
    const up = await stack.api('POST', `/services/${uuid}/billing/change-plan`, { product_uuid: premium });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.deepEqual([up.body.outcome, up.body.proration.credit_minor, up.body.proration.charge_minor, up.body.proration.balance], ['invoiced', 600, 1000, '4.00']);
    assert.equal((await stack.api('GET', `/services/${uuid}`)).body.product_uuid, basic, 'nothing changes before the payment');
    assert.equal((await stack.api('POST', `/services/${uuid}/billing/change-plan`, { product_uuid: premium })).status, 409, 'one change waits at a time');
    await pay(stack, up.body.invoice_uuid);
    assert.equal((await waitForTask(stack, uuid, 'change_package')).status, 'completed');
    assert.equal((await stack.api('GET', `/services/${uuid}`)).body.product_uuid, premium);
    assert.equal((await billing(stack, uuid)).recurring_minor, 1500);

    await stack.advanceTo('2026-04-21');
    const down = await stack.api('POST', `/services/${uuid}/billing/change-plan`, { product_uuid: basic });
    assert.deepEqual([down.body.outcome, down.body.proration.balance_minor, down.body.credit_minor], ['applied', -200, 200]);
    const owner = (await stack.api('GET', '/customers')).body.customers.find((c: any) => c.email === 'mover_1@example.test');
    assert.deepEqual((await stack.api('GET', `/customers/${owner.uuid}/credit`)).body.balances, { EUR: 200 });
    assert.equal((await stack.api('GET', `/services/${uuid}`)).body.product_uuid, basic);
    assert.equal(events.filter((e) => e.name === 'service.plan_changed' && e.service === uuid).length, 2);

    await stack.advanceTo('2026-04-24');
    const [renewal] = await renewals(stack, uuid);
    assert.deepEqual([renewal.amount_minor, renewal.credit_minor], [700, 200], 'the basic price less the credit');
    assert.deepEqual((await stack.api('GET', `/customers/${owner.uuid}/credit`)).body.balances, { EUR: 0 });
  } finally {
    await stack.close();
  }
});
