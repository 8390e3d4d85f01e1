// Billing periods of services: made with the order, started by the first paid invoice (anchored on its day),
// extended by each paid renewal from the previous due date, brought back from overdue/suspended when every overdue
// invoice is paid (unsuspend() only for a service billing suspended), cancelled at the period end or at once.
import { formatMinor } from './money.ts';
import { HttpError } from '../../errors.ts';
import type { InvoiceRow } from '../../store/query/repositories/invoices.ts';
import type { ServiceBillingRow } from '../../store/query/repositories/service-billing.ts';
import type { BillingRepos } from './billing-repos.ts';
import { nextDue, parseDate, today } from './calendar.ts';
import { applyCredit, renewalWindow, type RecurringDeps } from './recurring-deps.ts';
import type { BillingState } from './recurring-schema.ts';
import type { BillingCycle } from './schema.ts';

const NO_BILLING = (uuid: string) => `service ${uuid} has no billing period (it was not ordered with a price)`;
const SERVICE_ENDED = (uuid: string, state: string) => `service ${uuid} is ${state}`;
const NO_PENDING_CANCELLATION = (uuid: string) => `service ${uuid} has no pending cancellation`;
const SERVICE_NOT_RUNNING = (uuid: string, state: string) => `service ${uuid} is ${state}: it has no running period`;

const RUNNING: readonly BillingState[] = ['active', 'overdue', 'suspended'];

/** A service's billing as the API and the pages show it. */
export interface ServiceBillingView extends ServiceBillingRow {
  recurring: string;
  /** Open invoices of the service (unpaid or failed), oldest due first. */
  open_invoices: Array<{ uuid: string; number: string; kind: string; due_date: string; amount: string; status: string }>;
}

/** The fields of an open invoice that the billing view shows. */
interface OpenInvoiceFields { uuid: string; number: string; kind: string; due_date: string; amount_minor: number; currency: string; status: string }

/** A billing row and its open invoices as the API and the pages show them (amounts formatted). */
export function billingViewOf(row: ServiceBillingRow, openInvoices: readonly OpenInvoiceFields[]): ServiceBillingView {
  return {
    ...row,
    recurring: formatMinor(row.recurring_minor, row.currency),
    open_invoices: openInvoices.map((i) => ({
      uuid: i.uuid, number: i.number, kind: i.kind, due_date: i.due_date, amount: formatMinor(i.amount_minor, i.currency), status: i.status,
    })),
  };
}

/** What a plan change applies (set by plan-change.ts, called when a change invoice is paid). */
export type ChangeApplier = (r: BillingRepos, row: InvoiceRow, billing: ServiceBillingRow) => Promise<void>;

export class BillingPeriods {
  private applyChange: ChangeApplier = async () => undefined;

  constructor(private readonly deps: RecurringDeps) {}

  /** Plan changes apply themselves through this hook when their invoice is paid. */
  onChangePaid(applier: ChangeApplier): void {
    this.applyChange = applier;
  }

  /** The billing of a newly ordered service (inside the order's transaction). */
  async onOrder(r: BillingRepos, serviceUuid: string, cycle: BillingCycle, amountMinor: number, currency: string): Promise<void> {
    await r.periods.create({ service_uuid: serviceUuid, billing_cycle: cycle, recurring_minor: amountMinor, currency });
  }

  async view(serviceUuid: string): Promise<ServiceBillingView | null> {
    const row = await this.deps.r.periods.get(serviceUuid);
    if (!row) return null;
    return billingViewOf(row, await this.deps.r.invoices.openOfService(serviceUuid));
  }

  /**
   * A paid invoice's effect on its service's period (inside the transaction that marked it paid): the first paid
   * invoice starts the period on its day, a paid renewal extends it from the previous due date, a paid plan change
   * applies the change.
   */
  async settlePaid(r: BillingRepos, row: InvoiceRow): Promise<void> {
    if (!row.service_uuid) return;
    const billing = await r.periods.get(row.service_uuid);
    if (!billing) return;
    if (row.kind === 'order') await this.startPeriod(r, billing);
    else if (row.kind === 'renewal') await this.renewed(r, row, billing);
    else if (row.kind === 'change' && RUNNING.includes(billing.state)) await this.applyChange(r, row, billing);
  }

  /**
   * An invoice credit paid in full (amount due 0): marked paid and settled like a payment, `invoice.paid` (gateway
   * `credit`) through the outbox, and an order's create() queued. Inside the invoice's transaction.
   */
  async settleByCredit(r: BillingRepos, row: InvoiceRow): Promise<void> {
    if (row.status !== 'unpaid' || row.amount_minor !== 0 || !(await r.invoices.setStatus(row.uuid, 'paid', ['unpaid']))) return;
    const paid = (await r.invoices.get(row.uuid))!;
    await this.settlePaid(r, paid);
    await r.outbox.event('invoice.paid', { invoice_uuid: paid.uuid, transaction_uuid: null, gateway: 'credit' }, paid.uuid);
    if (paid.kind === 'order' && paid.service_uuid) await r.outbox.action({ name: 'service_action', payload: { service_uuid: paid.service_uuid, action: 'create' } }, paid.uuid);
  }

  private async startPeriod(r: BillingRepos, billing: ServiceBillingRow): Promise<void> {
    if (billing.state !== 'pending') return;
    const paidOn = today(this.deps.clock);
    const anchor = parseDate(paidOn).day;
    const next = nextDue(paidOn, billing.billing_cycle, anchor);
    await r.periods.startFirstPeriod(billing.service_uuid, { anchor_day: anchor, paid_on: paidOn, next_due_date: next, next_period_end: nextDue(next, billing.billing_cycle, anchor) });
  }

  private async renewed(r: BillingRepos, row: InvoiceRow, billing: ServiceBillingRow): Promise<void> {
    if (!row.period_start || !row.period_end || !RUNNING.includes(billing.state) || billing.anchor_day === null) return;
    const end = nextDue(row.period_end, billing.billing_cycle, billing.anchor_day);
    if (!(await r.periods.extend(billing.service_uuid, row.period_start, row.period_end, end))) return;
    const { outbox } = r;
    const day = today(this.deps.clock);
    const stillOverdue = (await r.invoices.openOfService(billing.service_uuid, ['renewal'])).some((i) => i.due_date < day);
    const state = billing.state !== 'active' && !stillOverdue ? 'active' : billing.state;
    if (state !== billing.state) await r.periods.setState(billing.service_uuid, 'active', [billing.state]);
    await outbox.event('service.renewed', { invoice_uuid: row.uuid, period_start: row.period_start, period_end: row.period_end, next_due_date: row.period_end, billing_state: state }, row.uuid);
    // Only a suspension billing made is lifted by a payment; one an admin made by hand stays.
    if (billing.state === 'suspended' && state === 'active') {
      await outbox.action({ name: 'service_action', payload: { service_uuid: billing.service_uuid, action: 'unsuspend' } }, row.uuid);
      await outbox.event('service.unsuspended_payment', { invoice_uuid: row.uuid, billing_state: 'active' }, row.uuid);
    }
  }

  /**
   * Cancels a service: at the end of its paid period (no more renewals; terminate() on that day, the not-yet-due
   * renewal invoice voided) or at once (terminate() now, open invoices voided). A service never paid, or already
   * past its period end, is cancelled at once.
   */
  async cancel(serviceUuid: string, when: 'period_end' | 'immediate', by: 'customer' | 'admin'): Promise<ServiceBillingView> {
    const day = today(this.deps.clock);
    await this.deps.r.store.transaction(async (store) => {
      const r = this.deps.repos(store);
      const billing = await this.require(r, serviceUuid);
      if (billing.state === 'cancelled' || billing.state === 'terminated') throw new HttpError(409, SERVICE_ENDED(serviceUuid, billing.state));
      const service = await r.services.get(serviceUuid);
      const event = { service_uuid: serviceUuid, product_uuid: service?.product_uuid ?? null, module: service?.module_name ?? '', customer_uuid: await this.owner(r, serviceUuid), by };
      const atEnd = when === 'period_end' && billing.state === 'active' && billing.next_due_date !== null && billing.next_due_date > day;
      if (atEnd) {
        await r.periods.setCancellation(serviceUuid, billing.next_due_date, by);
        await r.invoices.voidOpen(serviceUuid, ['renewal', 'change'], billing.next_due_date);
        await r.outbox.event('service.cancelled', { ...event, when: 'period_end', effective_date: billing.next_due_date! }, `${serviceUuid}:${this.deps.clock.now().toISOString()}`);
        return;
      }
      await r.periods.setCancellation(serviceUuid, day, by);
      // Another caller that cancelled first wins; this one answers as the first did.
      if (!(await r.periods.setState(serviceUuid, 'cancelled', [billing.state]))) return;
      await r.invoices.voidOpen(serviceUuid, ['order', 'renewal', 'change']);
      if (service && service.provision_status !== 'pending') await r.outbox.action({ name: 'service_action', payload: { service_uuid: serviceUuid, action: 'termination' } }, `cancel:${serviceUuid}`);
      await r.outbox.event('service.cancelled', { ...event, when: 'immediate', effective_date: day }, `${serviceUuid}:${this.deps.clock.now().toISOString()}`);
    });
    return (await this.view(serviceUuid))!;
  }

  /** Withdraws a cancellation at the period end that has not taken effect yet; the service renews again. */
  async undoCancel(serviceUuid: string, by: 'customer' | 'admin'): Promise<ServiceBillingView> {
    const day = today(this.deps.clock);
    await this.deps.r.store.transaction(async (store) => {
      const r = this.deps.repos(store);
      const billing = await this.require(r, serviceUuid);
      if (!billing.cancel_at || !RUNNING.includes(billing.state) || billing.cancel_at <= day) throw new HttpError(409, NO_PENDING_CANCELLATION(serviceUuid));
      await r.periods.setCancellation(serviceUuid, null, null);
      const service = await r.services.get(serviceUuid);
      await r.outbox.event('service.cancellation_undone', {
        service_uuid: serviceUuid, product_uuid: service?.product_uuid ?? null, module: service?.module_name ?? '', customer_uuid: await this.owner(r, serviceUuid),
        when: 'period_end', effective_date: billing.cancel_at, by,
      }, `${serviceUuid}:${this.deps.clock.now().toISOString()}`);
      await this.remakeRenewal(r, serviceUuid);
    });
    return (await this.view(serviceUuid))!;
  }

  /**
   * An admin moves the next due date (a correction, extra days granted): an open renewal invoice of the old period is
   * voided and the renewal made again for the new one when it is within the lead time.
   */
  async setNextDue(serviceUuid: string, date: string): Promise<ServiceBillingView> {
    parseDate(date);
    await this.deps.r.store.transaction(async (store) => {
      const r = this.deps.repos(store);
      const billing = await this.require(r, serviceUuid);
      if (!RUNNING.includes(billing.state) || billing.anchor_day === null || billing.next_due_date === null) throw new HttpError(409, SERVICE_NOT_RUNNING(serviceUuid, billing.state));
      if (billing.cancel_at) throw new HttpError(409, `service ${serviceUuid} is cancelled at its period end: withdraw the cancellation first`);
      await r.invoices.voidOpen(serviceUuid, ['renewal']);
      await r.periods.moveDue(serviceUuid, date, nextDue(date, billing.billing_cycle, billing.anchor_day));
      await this.remakeRenewal(r, serviceUuid);
    });
    return (await this.view(serviceUuid))!;
  }

  /** Makes the service's renewal invoice now when it is within the lead time (after a void); inside a transaction. */
  async remakeRenewal(r: BillingRepos, serviceUuid: string): Promise<void> {
    await this.creditNew(r, (await r.renewals.makeFor(await renewalWindow(r, this.deps.clock), serviceUuid)).credited);
  }

  /** New invoices whose customer has credit: the credit applied, and one it pays in full settled (inside the transaction). */
  async creditNew(r: BillingRepos, uuids: readonly string[]): Promise<void> {
    for (const uuid of uuids) {
      const row = await r.invoices.get(uuid);
      if (!row) continue;
      const after = await applyCredit(r, row);
      if (after.amount_minor === 0) await this.settleByCredit(r, after);
    }
  }

  async require(r: BillingRepos, serviceUuid: string): Promise<ServiceBillingRow> {
    const billing = await r.periods.get(serviceUuid);
    if (!billing) throw new HttpError((await r.services.get(serviceUuid)) ? 409 : 404, NO_BILLING(serviceUuid));
    return billing;
  }

  private async owner(r: BillingRepos, serviceUuid: string): Promise<string | null> {
    return (await r.periods.billed(serviceUuid))?.customer_uuid ?? null;
  }
}
