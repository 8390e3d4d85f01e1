// Contract suite of billing's repositories on the query layer (orders, invoices, transactions and gateway events,
// periods, runs, dunning steps, outbox, credits, payment methods, settings, revenue, renewal batches), run on SQLite
// and on PostgreSQL. Every once-only write is tried by two concurrent callers (one wins) and every multi-step write
// is checked all-or-nothing.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { manualClock } from '../../shared/clock.ts';
import type { QueryStore } from '../../module/platform/store/query/query-store.ts';
import { BillingOutboxQueries } from '../../module/platform/store/query/repositories/billing-outbox.ts';
import { BillingRunQueries } from '../../module/platform/store/query/repositories/billing-runs.ts';
import { BillingSettingsQueries } from '../../module/platform/store/query/repositories/billing-settings.ts';
import { DunningQueries, stepKey } from '../../module/platform/store/query/repositories/billing-steps.ts';
import { CustomerCreditQueries } from '../../module/platform/store/query/repositories/customer-credits.ts';
import { CustomerQueries } from '../../module/platform/store/query/repositories/customers.ts';
import { InvoiceQueries, type InvoiceRow } from '../../module/platform/store/query/repositories/invoices.ts';
import { PaymentMethodQueries } from '../../module/platform/store/query/repositories/payment-methods.ts';
import { ProductQueries } from '../../module/platform/store/query/repositories/products.ts';
import { RenewalInvoiceQueries, type RenewalWindow } from '../../module/platform/store/query/repositories/renewal-invoices.ts';
import { RevenueQueries } from '../../module/platform/store/query/repositories/revenue.ts';
import { ServiceBillingQueries } from '../../module/platform/store/query/repositories/service-billing.ts';
import { TransactionQueries } from '../../module/platform/store/query/repositories/transactions.ts';
import { DEFAULT_BILLING_SETTINGS } from '../../module/platform/services/billing/billing-settings.ts';
import { withStore, type OpenStore } from './store.contract.ts';

type Clock = ReturnType<typeof manualClock>;

/** A product, a customer and `n` services of theirs (pending). */
async function seed(store: QueryStore, clock: Clock, n = 1, name = 'Basic'): Promise<{ product: string; customer: string; services: string[] }> {
  const product = (await new ProductQueries(store, clock).create('VpnProduct', { plan_type: 'basic' }, randomUUID(), { name })).uuid;
  const customer = (await new CustomerQueries(store, clock).create({ email: `${randomUUID()}@example.test` })).uuid;
  const services: string[] = [];
  for (let i = 0; i < n; i++) {
    const uuid = randomUUID();
    await store.db.insertInto('services').values({
      uuid, product_uuid: product, module: 'VpnProduct', service_data: '{}', provision_status: 'active', status_reason: null,
      customer_uuid: customer, created_at: clock.now().toISOString(), updated_at: clock.now().toISOString(),
    }).execute();
    services.push(uuid);
  }
  return { product, customer, services };
}

/** An active period of `service` due on `due` (monthly, 1000 EUR cents, anchored on the 1st). */
async function activePeriod(store: QueryStore, clock: Clock, service: string, due = '2026-12-01', end = '2027-01-01'): Promise<void> {
  const periods = new ServiceBillingQueries(store, clock);
  await periods.create({ service_uuid: service, billing_cycle: 'monthly', recurring_minor: 1000, currency: 'EUR' });
  assert.equal(await periods.startFirstPeriod(service, { anchor_day: 1, paid_on: '2026-11-01', next_due_date: due, next_period_end: end }), true);
}

const invoiceOf = (customer: string, service: string | null, amount = 1000): Parameters<InvoiceQueries['createInvoice']>[0] => ({
  order_uuid: null, customer_uuid: customer, service_uuid: service, description: 'Basic (monthly)', amount_minor: amount, currency: 'EUR', due_date: '2026-12-04',
});

const WINDOW: RenewalWindow = { today: '2026-11-27', lead: 7, horizon: '2026-12-04', at: '2026-11-27T10:00:00.000Z' };

/** Both results of two concurrent calls, and how many answered `won`. */
async function race<T>(a: () => Promise<T>, b: () => Promise<T>, won: (value: T) => boolean): Promise<number> {
  const results = await Promise.all([a(), b()]);
  return results.filter(won).length;
}

export function runStoreContract(engine: string, open: OpenStore): void {
  describe(`store contract (billing): ${engine}`, () => {
    test('invoices: orders, numbered invoices, filters and pages, voiding, refunded totals, paid orders of pending services', (t) => withStore(t, open, async (store, clock) => {
      const { product, customer, services: [service] } = await seed(store, clock);
      const invoices = new InvoiceQueries(store, clock);
      const order = await invoices.createOrder({ customer_uuid: customer, product_uuid: product, service_uuid: service, billing_cycle: 'monthly' });
      const first = await invoices.createInvoice({ ...invoiceOf(customer, service), order_uuid: order.uuid });
      assert.match(first.number, /^INV-2026-\d{6}$/);
      assert.equal(first.status, 'unpaid');
      assert.equal(first.kind, 'order');
      clock.advance(86_400_000);
      const second = await invoices.createInvoice({ ...invoiceOf(customer, service, 500), kind: 'change', change_product_uuid: product });
      assert.notEqual(second.number, first.number);
      assert.deepEqual(await invoices.invoiceOfOrder(order.uuid), first);
      assert.deepEqual(await invoices.byNumber(first.number), first);
      assert.deepEqual(await invoices.order(order.uuid), order);
      assert.deepEqual((await invoices.listOrders(10, 0)).total, 1);
      const all = await invoices.list({}, 10, 0);
      assert.deepEqual(all.rows.map((r) => r.uuid), [second.uuid, first.uuid]);
      assert.equal(all.total, 2);
      assert.deepEqual((await invoices.list({ to: '2026-11-27' }, 10, 0)).rows.map((r) => r.uuid), [first.uuid]);
      assert.deepEqual((await invoices.list({ from: '2026-11-28', customer }, 10, 0)).rows.map((r) => r.uuid), [second.uuid]);
      assert.equal((await invoices.list({ status: 'paid' }, 10, 0)).total, 0);
      assert.deepEqual((await invoices.list({ service }, 1, 1)).rows.map((r) => r.uuid), [first.uuid]);
      assert.deepEqual((await invoices.openOfService(service, ['change'])).map((r) => r.uuid), [second.uuid]);
      assert.equal(await invoices.applyCredit(second.uuid, 600), false);
      assert.equal(await invoices.applyCredit(second.uuid, 200), true);
      assert.deepEqual([(await invoices.get(second.uuid))!.amount_minor, (await invoices.get(second.uuid))!.credit_minor], [300, 200]);
      assert.deepEqual(await invoices.voidOpen(service, ['change'], '2026-12-05'), []);
      assert.deepEqual(await invoices.voidOpen(service, ['change']), [second.uuid]);
      assert.equal(await invoices.setStatus(first.uuid, 'paid', ['unpaid', 'failed']), true);
      assert.equal((await invoices.get(first.uuid))!.paid_at, clock.now().toISOString());
      assert.deepEqual((await invoices.paidOrdersOfPendingServices()).map((r) => r.uuid), []);
      await store.db.updateTable('services').set({ provision_status: 'pending' }).where('uuid', '=', service).execute();
      assert.deepEqual((await invoices.paidOrdersOfPendingServices()).map((r) => r.uuid), [first.uuid]);
      await invoices.addRefunded(first.uuid, 250);
      assert.equal((await invoices.get(first.uuid))!.refunded_minor, 250);
      assert.equal(await invoices.count(), 2);
      assert.equal(await invoices.get(randomUUID()), null);
    }));

    test('invoices: two concurrent payments of one invoice: one marks it paid', (t) => withStore(t, open, async (store, clock) => {
      const { customer, services: [service] } = await seed(store, clock);
      const row = await new InvoiceQueries(store, clock).createInvoice(invoiceOf(customer, service));
      const pay = () => store.transaction(async (tx) => new InvoiceQueries(tx, clock).setStatus(row.uuid, 'paid', ['unpaid', 'failed']));
      assert.equal(await race(pay, pay, (won) => won), 1);
    }));

    test('transactions: payments, failures and refunds in order; refunded total bounded; gateway events claimed once, also concurrently', (t) => withStore(t, open, async (store, clock) => {
      const { customer, services: [service] } = await seed(store, clock);
      const invoice = await new InvoiceQueries(store, clock).createInvoice(invoiceOf(customer, service));
      const transactions = new TransactionQueries(store, clock);
      const base = { invoice_uuid: invoice.uuid, gateway: 'Stripe', gateway_uuid: 'gw', amount_minor: 1000, currency: 'EUR' };
      const payment = await transactions.insert({ ...base, kind: 'payment', external_id: 'pi_1' });
      const refund = await transactions.insert({ ...base, kind: 'refund', parent_uuid: payment.uuid, amount_minor: 400 });
      const failure = await transactions.insert({ ...base, kind: 'failure', note: 'declined' });
      assert.deepEqual((await transactions.forInvoice(invoice.uuid)).map((r) => r.uuid), [failure.uuid, payment.uuid, refund.uuid]);
      assert.deepEqual(await transactions.get(payment.uuid), payment);
      assert.equal(await transactions.addRefunded(payment.uuid, 400), true);
      assert.equal(await transactions.addRefunded(payment.uuid, 601), false);
      assert.equal((await transactions.get(payment.uuid))!.refunded_minor, 400);
      assert.equal(await transactions.claimEvent('gw', 'evt_1', 'payment_intent.succeeded'), true);
      assert.equal(await transactions.claimEvent('gw', 'evt_1', 'payment_intent.succeeded'), false);
      assert.equal(await transactions.claimEvent('other', 'evt_1', 'payment_intent.succeeded'), true);
      await transactions.settleEvent('gw', 'evt_1', 'paid', invoice.uuid);
      assert.deepEqual((await transactions.events('gw')).map((e) => [e.event_id, e.outcome, e.invoice_uuid]), [['evt_1', 'paid', invoice.uuid]]);
      const claim = () => store.transaction(async (tx) => new TransactionQueries(tx, clock).claimEvent('gw', 'evt_2', 'payment_intent.succeeded'));
      assert.equal(await race(claim, claim, (won) => won), 1);
    }));

    test('payments: claiming the event, marking the invoice paid and recording the payment is all or nothing', (t) => withStore(t, open, async (store, clock) => {
      const { customer, services: [service] } = await seed(store, clock);
      const invoice = await new InvoiceQueries(store, clock).createInvoice(invoiceOf(customer, service));
      await assert.rejects(store.transaction(async (tx) => {
        assert.equal(await new TransactionQueries(tx, clock).claimEvent('gw', 'evt_1', 'payment_intent.succeeded'), true);
        assert.equal(await new InvoiceQueries(tx, clock).setStatus(invoice.uuid, 'paid', ['unpaid']), true);
        await new TransactionQueries(tx, clock).insert({ invoice_uuid: invoice.uuid, kind: 'payment', gateway: 'Stripe', amount_minor: 1000, currency: 'EUR' });
        throw new Error('crash before commit');
      }), /crash before commit/);
      assert.equal((await new InvoiceQueries(store, clock).get(invoice.uuid))!.status, 'unpaid');
      assert.deepEqual(await new TransactionQueries(store, clock).forInvoice(invoice.uuid), []);
      assert.equal(await new TransactionQueries(store, clock).claimEvent('gw', 'evt_1', 'payment_intent.succeeded'), true);
    }));

    test('service billing: pending → active once, extended from the previous due date once, states, cancellations', (t) => withStore(t, open, async (store, clock) => {
      const { product, customer, services: [a, b] } = await seed(store, clock, 2);
      const periods = new ServiceBillingQueries(store, clock);
      await periods.create({ service_uuid: a, billing_cycle: 'monthly', recurring_minor: 1000, currency: 'EUR' });
      await periods.create({ service_uuid: b, billing_cycle: 'annually', recurring_minor: 9000, currency: 'EUR' });
      assert.equal((await periods.get(a))!.state, 'pending');
      const start = () => store.transaction(async (tx) => new ServiceBillingQueries(tx, clock)
        .startFirstPeriod(a, { anchor_day: 27, paid_on: '2026-11-27', next_due_date: '2026-12-27', next_period_end: '2027-01-27' }));
      assert.equal(await race(start, start, (won) => won), 1);
      const billed = (await periods.billed(a))!;
      assert.deepEqual([billed.state, billed.anchor_day, billed.next_due_date, billed.product_uuid, billed.customer_uuid], ['active', 27, '2026-12-27', product, customer]);
      const extend = () => store.transaction(async (tx) => new ServiceBillingQueries(tx, clock).extend(a, '2026-12-27', '2027-01-27', '2027-02-27'));
      assert.equal(await race(extend, extend, (won) => won), 1);
      assert.equal((await periods.get(a))!.next_due_date, '2027-01-27');
      assert.equal(await periods.setState(a, 'overdue', ['active']), true);
      assert.equal(await periods.setState(a, 'overdue', ['active']), false);
      await periods.setRecurring(a, 1200);
      await periods.moveDue(a, '2027-01-30', '2027-02-28');
      await periods.setCancellation(a, '2027-01-30', 'customer');
      assert.deepEqual([(await periods.get(a))!.recurring_minor, (await periods.get(a))!.cancel_by], [1200, 'customer']);
      assert.deepEqual((await periods.dueCancellations('2027-01-29', 10)).map((r) => r.service_uuid), []);
      assert.deepEqual((await periods.dueCancellations('2027-01-30', 10)).map((r) => r.service_uuid), [a]);
      await periods.setCancellation(a, null, null);
      assert.equal((await periods.get(a))!.cancel_requested_at, null);
      await store.db.updateTable('services').set({ provision_status: 'terminated' }).where('uuid', '=', b).execute();
      assert.deepEqual((await periods.terminatedElsewhere(10)).map((r) => r.service_uuid), [b]);
      assert.equal(await periods.setState(b, 'terminated', ['pending']), true);
      assert.equal((await periods.get(b))!.ended_at, clock.now().toISOString());
      assert.deepEqual(await periods.countByState(), { overdue: 1, terminated: 1 });
      assert.equal(await periods.get(randomUUID()), null);
    }));

    test('billing settings: defaults, the global row, product overrides', (t) => withStore(t, open, async (store, clock) => {
      const { product } = await seed(store, clock, 0);
      const settings = new BillingSettingsQueries(store, clock);
      assert.deepEqual(await settings.global(), { ...DEFAULT_BILLING_SETTINGS });
      await settings.setGlobal({ ...DEFAULT_BILLING_SETTINGS, lead_days: 10 });
      await settings.setGlobal({ ...DEFAULT_BILLING_SETTINGS, lead_days: 12 });
      assert.equal((await settings.global()).lead_days, 12);
      assert.deepEqual(await settings.overrides(product), {});
      await settings.setOverrides(product, { lead_days: 3 });
      assert.deepEqual(await settings.overrides(product), { lead_days: 3 });
      assert.deepEqual([...(await settings.allOverrides()).entries()], [[product, { lead_days: 3 }]]);
    }));

    test('billing runs: a schedule slot is claimed once by concurrent callers; manual runs, tasks, progress', (t) => withStore(t, open, async (store, clock) => {
      const runs = new BillingRunQueries(store, clock);
      const claim = () => store.transaction(async (tx) => new BillingRunQueries(tx, clock).claimSlot('2026-11-27T10:00:00.000Z'));
      assert.equal(await race(claim, claim, (id) => id !== null), 1);
      const manual = await runs.createManual();
      await runs.setTask(manual, 'task-1');
      clock.advance(1000);
      await runs.started(manual);
      await runs.started(manual);
      await runs.record(manual, { renewals: 3 }, false);
      assert.deepEqual((await runs.unfinished('2026-11-27T00:00:00.000Z', '2026-11-28T00:00:00.000Z')).map((r) => r.id).includes(manual), true);
      await runs.record(manual, { renewals: 4 }, true);
      const row = (await runs.get(manual))!;
      assert.deepEqual([row.trigger, row.task_id, row.summary, row.started_at, row.finished_at], ['admin', 'task-1', { renewals: 4 }, '2026-11-27T10:00:01.000Z', '2026-11-27T10:00:01.000Z']);
      assert.equal((await runs.list(1))[0].id, manual);
      assert.equal(await runs.get(99_999), null);
    }));

    test('dunning: open renewals by keyset, steps claimed once also concurrently', (t) => withStore(t, open, async (store, clock) => {
      const { customer, services } = await seed(store, clock, 3);
      for (const service of services) await activePeriod(store, clock, service);
      const invoices = new InvoiceQueries(store, clock);
      const rows: InvoiceRow[] = [];
      for (const [i, service] of services.entries()) {
        rows.push(await invoices.createInvoice({ ...invoiceOf(customer, service), kind: 'renewal', period_start: '2026-12-01', period_end: '2027-01-01', due_date: `2026-12-0${i + 1}` }));
      }
      await new PaymentMethodQueries(store, clock).save({
        customer_uuid: customer, gateway_uuid: 'gw', gateway: 'Stripe', external_customer: 'cus_1', external_id: 'pm_1', label: 'visa •••• 4242', brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2030,
      });
      const dunning = new DunningQueries(store, clock);
      const first = await dunning.openRenewals('2026-12-02', { due: '', id: 0 }, 1);
      assert.deepEqual(first.map((r) => [r.invoice_uuid, r.has_method, r.billing_state]), [[rows[0].uuid, true, 'active']]);
      const next = await dunning.openRenewals('2026-12-02', { due: first[0].due_date, id: first[0].invoice_id }, 10);
      assert.deepEqual(next.map((r) => r.invoice_uuid), [rows[1].uuid]);
      const claim = () => store.transaction(async (tx) => new DunningQueries(tx, clock).claim(rows[0].uuid, 'reminder_before:3'));
      assert.equal(await race(claim, claim, (won) => won), 1);
      assert.equal(await dunning.claim(rows[0].uuid, 'overdue', 'passed over'), true);
      const done = await dunning.done([rows[0].uuid, rows[1].uuid]);
      assert.deepEqual([...done.get(rows[0].uuid)!].sort(), ['overdue', 'reminder_before:3']);
      assert.equal(done.get(rows[1].uuid)!.size, 0);
      assert.deepEqual((await dunning.steps(rows[0].uuid)).map((s) => [s.step, s.outcome]), [['overdue', 'passed over'], ['reminder_before:3', '']]);
      // A page's steps claimed by one statement: a step taken before is not answered; two concurrent callers share
      // the steps out, each taken once.
      const page = rows.flatMap((r) => ['reminder_before:3', 'suspend:3'].map((step) => ({ invoice_uuid: r.uuid, step, outcome: 'page' })));
      const many = () => store.transaction(async (tx) => new DunningQueries(tx, clock).claimMany(page));
      const [a, b] = await Promise.all([many(), many()]);
      assert.equal(a.size + b.size, page.length - 1);
      assert.equal([...a].filter((key) => b.has(key)).length, 0);
      assert.equal(a.has(stepKey(rows[0].uuid, 'reminder_before:3')) || b.has(stepKey(rows[0].uuid, 'reminder_before:3')), false, 'claimed before');
      assert.ok(a.has(stepKey(rows[2].uuid, 'suspend:3')) !== b.has(stepKey(rows[2].uuid, 'suspend:3')));
      assert.equal((await dunning.claimMany(page)).size, 0);
      assert.deepEqual((await dunning.steps(rows[2].uuid)).map((s) => [s.step, s.outcome]), [['reminder_before:3', 'page'], ['suspend:3', 'page']]);
    }));

    test('outbox: once per key; concurrent claims take each row once; leases, failures and completion', (t) => withStore(t, open, async (store) => {
      const outbox = new BillingOutboxQueries(store);
      const at = '2026-11-27T10:00:00.000Z';
      assert.equal(await outbox.add('event', 'invoice.paid', { invoice_uuid: 'a' }, 'invoice.paid:a', at), true);
      assert.equal(await outbox.add('event', 'invoice.paid', { invoice_uuid: 'a' }, 'invoice.paid:a', at), false);
      for (let i = 0; i < 9; i++) await outbox.add('action', 'charge', { invoice_uuid: `i${i}` }, `action:charge:i${i}`, at);
      assert.equal(await outbox.pending(), 10);
      const now = Date.parse(at);
      const claim = () => store.transaction(async (tx) => new BillingOutboxQueries(tx).claim(10, now, 15_000));
      const [a, b] = await Promise.all([claim(), claim()]);
      const ids = [...a, ...b].map((r) => r.id);
      assert.equal(ids.length, 10);
      assert.equal(new Set(ids).size, 10);
      const rows = [...a, ...b].sort((x, y) => x.id - y.id);
      assert.deepEqual(rows[0].payload, { invoice_uuid: 'a' });
      assert.equal(rows[0].attempts, 1);
      assert.deepEqual(await outbox.claim(10, now + 1000, 15_000), []);
      await outbox.failed(rows[0].id, 'smtp down', now + 20_000, false, at);
      await outbox.done(rows.slice(1).map((r) => r.id), at);
      assert.equal(await outbox.pending(), 1);
      assert.deepEqual((await outbox.claim(10, now + 21_000, 15_000)).map((r) => [r.id, r.attempts]), [[rows[0].id, 2]]);
      await outbox.failed(rows[0].id, 'smtp down', now + 60_000, true, at);
      assert.equal(await outbox.pending(), 0);
      // Many rows at once keep their order; a once-key already stored is skipped, also by a concurrent writer.
      const batch = ['b', 'a', 'c'].map((k) => ({ kind: 'event' as const, name: 'invoice.paid', payload: { invoice_uuid: k }, once_key: `invoice.paid:${k}`, created_at: at }));
      const write = () => store.transaction(async (tx) => new BillingOutboxQueries(tx).addMany(batch));
      assert.deepEqual((await Promise.all([write(), write()])).sort(), [0, 2]);
      assert.deepEqual((await outbox.claim(10, now + 100_000, 15_000)).map((r) => r.payload.invoice_uuid), ['b', 'c']);
    }));

    test('customer credit: balance per currency; one use per invoice; concurrent uses never spend more than the balance', (t) => withStore(t, open, async (store, clock) => {
      const { customer, services: [service] } = await seed(store, clock);
      const credits = new CustomerCreditQueries(store, clock);
      assert.equal(await credits.add({ customer_uuid: customer, currency: 'EUR', amount_minor: 700, reason: 'plan_change', service_uuid: service, invoice_uuid: null }), true);
      await credits.add({ customer_uuid: customer, currency: 'USD', amount_minor: 50, reason: 'plan_change', service_uuid: service, invoice_uuid: null });
      assert.equal(await credits.balance(customer, 'EUR'), 700);
      const invoices = new InvoiceQueries(store, clock);
      const one = await invoices.createInvoice(invoiceOf(customer, service));
      const two = await invoices.createInvoice(invoiceOf(customer, service));
      const use = (invoice: string) => () => store.transaction(async (tx) => new CustomerCreditQueries(tx, clock).use(customer, 'EUR', 500, invoice, service));
      const [a, b] = await Promise.all([use(one.uuid)(), use(two.uuid)()]);
      assert.deepEqual([a, b].sort(), [200, 500]);
      assert.equal(await credits.balance(customer, 'EUR'), 0);
      assert.equal(await credits.use(customer, 'EUR', 500, one.uuid, service), 0);
      const of = await credits.of(customer);
      assert.deepEqual(of.balances, { EUR: 0, USD: 50 });
      assert.equal(of.entries.length, 4);
      assert.equal(of.entries[0].reason, 'applied');
    }));

    test('payment methods: one per customer and gateway, replaced together; gateway customers keep the first', (t) => withStore(t, open, async (store, clock) => {
      const { customer } = await seed(store, clock, 0);
      const methods = new PaymentMethodQueries(store, clock);
      const card = { customer_uuid: customer, gateway_uuid: 'gw', gateway: 'Stripe', external_customer: 'cus_1', external_id: 'pm_1', label: 'visa •••• 4242', brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2030 };
      const first = await methods.save(card);
      assert.equal(first.changed, true);
      assert.equal((await methods.save(card)).changed, false);
      clock.advance(1000);
      const second = await store.transaction(async (tx) => new PaymentMethodQueries(tx, clock).save({ ...card, external_id: 'pm_2', last4: '1111' }));
      assert.equal(second.replaced?.uuid, first.method.uuid);
      assert.deepEqual((await methods.ofCustomer(customer)).map((m) => m.external_id), ['pm_2']);
      await assert.rejects(store.transaction(async (tx) => {
        await new PaymentMethodQueries(tx, clock).save({ ...card, external_id: 'pm_3' });
        throw new Error('undo');
      }), /undo/);
      assert.equal((await methods.forGateway(customer, 'gw'))!.external_id, 'pm_2');
      assert.equal(await methods.remove(second.method.uuid), true);
      assert.equal(await methods.remove(second.method.uuid), false);
      assert.equal(await methods.get(second.method.uuid), null);
      assert.equal(await methods.gatewayCustomer('gw', customer), null);
      const [x, y] = await Promise.all([
        store.transaction(async (tx) => new PaymentMethodQueries(tx, clock).setGatewayCustomer('gw', customer, 'cus_a')),
        store.transaction(async (tx) => new PaymentMethodQueries(tx, clock).setGatewayCustomer('gw', customer, 'cus_b')),
      ]);
      assert.equal(x, y);
      assert.equal(await methods.gatewayCustomer('gw', customer), x);
    }));

    test('revenue: money per month and currency, recurring amounts, services new and ended, overdue', (t) => withStore(t, open, async (store, clock) => {
      const { customer, services: [a, b] } = await seed(store, clock, 2);
      await activePeriod(store, clock, a);
      await activePeriod(store, clock, b);
      await new ServiceBillingQueries(store, clock).setState(b, 'cancelled', ['active']);
      const invoice = await new InvoiceQueries(store, clock).createInvoice({ ...invoiceOf(customer, a), due_date: '2026-11-01' });
      const transactions = new TransactionQueries(store, clock);
      await transactions.insert({ invoice_uuid: invoice.uuid, kind: 'payment', gateway: 'manual', amount_minor: 1000, currency: 'EUR' });
      await transactions.insert({ invoice_uuid: invoice.uuid, kind: 'refund', gateway: 'manual', amount_minor: 300, currency: 'EUR' });
      const revenue = new RevenueQueries(store);
      assert.deepEqual(await revenue.money('2026-11-01T00:00:00.000Z'), [{ month: '2026-11', currency: 'EUR', paid_minor: 1000, refunded_minor: 300 }]);
      assert.deepEqual(await revenue.recurring(), [{ billing_cycle: 'monthly', currency: 'EUR', minor: 1000, n: 1 }]);
      assert.deepEqual(await revenue.created('2026-11-01T00:00:00.000Z'), [{ month: '2026-11', n: 2 }]);
      assert.deepEqual(await revenue.ended('2026-11-01T00:00:00.000Z'), [{ month: '2026-11', n: 1 }]);
      assert.deepEqual(await revenue.overdue('2026-11-27'), [{ currency: 'EUR', minor: 1000, n: 1 }]);
    }));

    test('renewals: a batch per keyset, numbered, events queued once, credit noticed; concurrent batches make one invoice per period', (t) => withStore(t, open, async (store, clock) => {
      const { product, customer, services } = await seed(store, clock, 3);
      for (const service of services) await activePeriod(store, clock, service);
      await new ServiceBillingQueries(store, clock).moveDue(services[2], '2026-12-20', '2027-01-20');
      await new CustomerCreditQueries(store, clock).add({ customer_uuid: customer, currency: 'EUR', amount_minor: 100, reason: 'plan_change', service_uuid: null, invoice_uuid: null });
      const renewals = new RenewalInvoiceQueries(store);
      assert.deepEqual((await renewals.dueRenewals(WINDOW, 10)).map((r) => [r.period_start, r.amount_minor]), [['2026-12-01', 1000], ['2026-12-01', 1000]]);
      const sorted = [...services.slice(0, 2)].sort();
      const first = await store.transaction((tx) => new RenewalInvoiceQueries(tx).makeBatch(WINDOW, 1));
      assert.deepEqual([first.made, first.next], [1, { due: '2026-12-01', service: sorted[0] }]);
      assert.equal(first.credited.length, 1);
      const [x, y] = await Promise.all([
        store.transaction((tx) => new RenewalInvoiceQueries(tx).makeBatch(WINDOW, 10, first.next)),
        store.transaction((tx) => new RenewalInvoiceQueries(tx).makeBatch(WINDOW, 10, first.next)),
      ]);
      assert.equal(x.made + y.made, 1);
      const made = (await new InvoiceQueries(store, clock).list({}, 10, 0)).rows;
      assert.equal(made.length, 2);
      for (const row of made) {
        assert.match(row.number, /^INV-2026-\d{6}$/);
        assert.equal(row.description, 'Basic (monthly), 2026-12-01 to 2027-01-01');
        assert.deepEqual([row.kind, row.period_start, row.period_end, row.due_date, row.amount_minor, row.customer_uuid], ['renewal', '2026-12-01', '2027-01-01', '2026-12-01', 1000, customer]);
      }
      const events = await store.db.selectFrom('billing_outbox').select(['name', 'payload', 'once_key']).orderBy('id').execute();
      assert.deepEqual(events.map((e) => e.once_key).sort(), made.map((r) => `invoice.renewal_created:${r.uuid}`).sort());
      assert.deepEqual(JSON.parse(events[0].payload), { invoice_uuid: events[0].once_key.split(':')[1], period_start: '2026-12-01', period_end: '2027-01-01', at: WINDOW.at });
      assert.equal((await renewals.makeBatch(WINDOW, 10)).made, 0);
      // A product's own lead time reaches further; one service is made on its own.
      await new BillingSettingsQueries(store, clock).setOverrides(product, { lead_days: 30 });
      const far = { ...WINDOW, horizon: '2026-12-27' };
      assert.equal((await renewals.makeFor(far, services[0])).made, 0);
      assert.equal((await renewals.makeFor(far, services[2])).made, 1);
    }));

    test('renewals: a batch whose transaction fails leaves no invoice, number or event behind', (t) => withStore(t, open, async (store, clock) => {
      const { services } = await seed(store, clock, 2);
      for (const service of services) await activePeriod(store, clock, service);
      await assert.rejects(store.transaction(async (tx) => {
        assert.equal((await new RenewalInvoiceQueries(tx).makeBatch(WINDOW, 10)).made, 2);
        throw new Error('crash mid-run');
      }), /crash mid-run/);
      assert.equal(await new InvoiceQueries(store, clock).count(), 0);
      assert.equal(await new BillingOutboxQueries(store).pending(), 0);
      assert.equal((await store.transaction((tx) => new RenewalInvoiceQueries(tx).makeBatch(WINDOW, 10))).made, 2);
    }));
  });
}
