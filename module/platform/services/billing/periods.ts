// Billing periods of services: made with the order, started by the first paid invoice (anchored on its day),
// extended by each paid renewal from the previous due date, brought back from overdue/suspended when every overdue
// invoice is paid (unsuspend() only for a service billing suspended), cancelled at the period end or at once.
import { formatMinor } from './money.ts';
import { HttpError } from '../../errors.ts';
import { transaction } from '../../store/transaction.ts';
import type { InvoiceRow } from '../../store/repositories/invoices.ts';
import type { ServiceBillingRow } from '../../store/repositories/service-billing.ts';
import { nextDue, parseDate, today } from './calendar.ts';
import { applyCredit, renewalWindow, type RecurringDeps } from './recurring-deps.ts';
import type { BillingState } from './recurring-schema.ts';
import type { BillingCycle } from './schema.ts';

export const NO_BILLING = (uuid: string) => `service ${uuid} has no billing period (it was not ordered with a price)`;
export const SERVICE_ENDED = (uuid: string, state: string) => `service ${uuid} is ${state}`;
export const NO_PENDING_CANCELLATION = (uuid: string) => `service ${uuid} has no pending cancellation`;
export const SERVICE_NOT_RUNNING = (uuid: string, state: string) => `service ${uuid} is ${state}: it has no running period`;

const RUNNING: readonly BillingState[] = ['active', 'overdue', 'suspended'];

/** A service's billing as the API and the pages show it. */
export interface ServiceBillingView extends ServiceBillingRow {
  recurring: string;
  /** Open invoices of the service (unpaid or failed), oldest due first. */
  open_invoices: Array<{ uuid: string; number: string; kind: string; due_date: string; amount: string; status: string }>;
}

/** What a plan change applies (set by plan-change.ts, called when a change invoice is paid). */
export type ChangeApplier = (row: InvoiceRow, billing: ServiceBillingRow) => void;

export class BillingPeriods {
  private applyChange: ChangeApplier = () => undefined;

  constructor(private readonly deps: RecurringDeps) {}

  /** Plan changes apply themselves through this hook when their invoice is paid. */
  onChangePaid(applier: ChangeApplier): void {
    this.applyChange = applier;
  }

  /** The billing of a newly ordered service (inside the order's transaction). */
  onOrder(serviceUuid: string, cycle: BillingCycle, amountMinor: number, currency: string): void {
    this.deps.periods.create({ service_uuid: serviceUuid, billing_cycle: cycle, recurring_minor: amountMinor, currency });
  }

  view(serviceUuid: string): ServiceBillingView | null {
    const row = this.deps.periods.get(serviceUuid);
    if (!row) return null;
    return {
      ...row,
      recurring: formatMinor(row.recurring_minor, row.currency),
      open_invoices: this.deps.invoices.openOfService(serviceUuid).map((i) => ({
        uuid: i.uuid, number: i.number, kind: i.kind, due_date: i.due_date, amount: formatMinor(i.amount_minor, i.currency), status: i.status,
      })),
    };
  }

  /**
   * A paid invoice's effect on its service's period (inside the transaction that marked it paid): the first paid
   * invoice starts the period on its day, a paid renewal extends it from the previous due date, a paid plan change
   * applies the change.
   */
  settlePaid(row: InvoiceRow): void {
    if (!row.service_uuid) return;
    const billing = this.deps.periods.get(row.service_uuid);
    if (!billing) return;
    if (row.kind === 'order') this.startPeriod(billing);
    else if (row.kind === 'renewal') this.renewed(row, billing);
    else if (row.kind === 'change' && RUNNING.includes(billing.state)) this.applyChange(row, billing);
  }

  /**
   * An invoice credit paid in full (amount due 0): marked paid and settled like a payment, `invoice.paid` (gateway
   * `credit`) through the outbox, and an order's create() queued. Inside the invoice's transaction.
   */
  settleByCredit(row: InvoiceRow): void {
    if (row.status !== 'unpaid' || row.amount_minor !== 0 || !this.deps.invoices.setStatus(row.uuid, 'paid', ['unpaid'])) return;
    const paid = this.deps.invoices.get(row.uuid)!;
    this.settlePaid(paid);
    this.deps.outbox.event('invoice.paid', { invoice_uuid: paid.uuid, transaction_uuid: null, gateway: 'credit' }, paid.uuid);
    if (paid.kind === 'order' && paid.service_uuid) this.deps.outbox.action({ name: 'service_action', payload: { service_uuid: paid.service_uuid, action: 'create' } }, paid.uuid);
  }

  private startPeriod(billing: ServiceBillingRow): void {
    if (billing.state !== 'pending') return;
    const paidOn = today(this.deps.clock);
    const anchor = parseDate(paidOn).day;
    const next = nextDue(paidOn, billing.billing_cycle, anchor);
    this.deps.periods.startFirstPeriod(billing.service_uuid, { anchor_day: anchor, paid_on: paidOn, next_due_date: next, next_period_end: nextDue(next, billing.billing_cycle, anchor) });
  }

  private renewed(row: InvoiceRow, billing: ServiceBillingRow): void {
    if (!row.period_start || !row.period_end || !RUNNING.includes(billing.state) || billing.anchor_day === null) return;
    const end = nextDue(row.period_end, billing.billing_cycle, billing.anchor_day);
    if (!this.deps.periods.extend(billing.service_uuid, row.period_start, row.period_end, end)) return;
    const { outbox } = this.deps;
    const day = today(this.deps.clock);
    const stillOverdue = this.deps.invoices.openOfService(billing.service_uuid, ['renewal']).some((i) => i.due_date < day);
    const state = billing.state !== 'active' && !stillOverdue ? 'active' : billing.state;
    if (state !== billing.state) this.deps.periods.setState(billing.service_uuid, 'active', [billing.state]);
    outbox.event('service.renewed', { invoice_uuid: row.uuid, period_start: row.period_start, period_end: row.period_end, next_due_date: row.period_end, billing_state: state }, row.uuid);
    // Only a suspension billing made is lifted by a payment; one an admin made by hand stays.
    if (billing.state === 'suspended' && state === 'active') {
      outbox.action({ name: 'service_action', payload: { service_uuid: billing.service_uuid, action: 'unsuspend' } }, row.uuid);
      outbox.event('service.unsuspended_payment', { invoice_uuid: row.uuid, billing_state: 'active' }, row.uuid);
    }
  }

  /**
   * Cancels a service: at the end of its paid period (no more renewals; terminate() on that day, the not-yet-due
   * renewal invoice voided) or at once (terminate() now, open invoices voided). A service never paid, or already
   * past its period end, is cancelled at once.
   */
  cancel(serviceUuid: string, when: 'period_end' | 'immediate', by: 'customer' | 'admin'): ServiceBillingView {
    const { periods, invoices, outbox } = this.deps;
    const day = today(this.deps.clock);
    transaction(this.deps.db, () => {
      const billing = this.require(serviceUuid);
      if (billing.state === 'cancelled' || billing.state === 'terminated') throw new HttpError(409, SERVICE_ENDED(serviceUuid, billing.state));
      const service = this.deps.services.get(serviceUuid);
      const event = { service_uuid: serviceUuid, product_uuid: service?.product_uuid ?? null, module: service?.module_name ?? '', customer_uuid: this.owner(serviceUuid), by };
      const atEnd = when === 'period_end' && billing.state === 'active' && billing.next_due_date !== null && billing.next_due_date > day;
      if (atEnd) {
        periods.setCancellation(serviceUuid, billing.next_due_date, by);
        invoices.voidOpen(serviceUuid, ['renewal', 'change'], billing.next_due_date);
        outbox.event('service.cancelled', { ...event, when: 'period_end', effective_date: billing.next_due_date! }, `${serviceUuid}:${this.deps.clock.now().toISOString()}`);
        return;
      }
      periods.setCancellation(serviceUuid, day, by);
      periods.setState(serviceUuid, 'cancelled', [billing.state]);
      invoices.voidOpen(serviceUuid, ['order', 'renewal', 'change']);
      if (service && service.provision_status !== 'pending') outbox.action({ name: 'service_action', payload: { service_uuid: serviceUuid, action: 'termination' } }, `cancel:${serviceUuid}`);
      outbox.event('service.cancelled', { ...event, when: 'immediate', effective_date: day }, `${serviceUuid}:${this.deps.clock.now().toISOString()}`);
    }, 'immediate');
    return this.view(serviceUuid)!;
  }

  /** Withdraws a cancellation at the period end that has not taken effect yet; the service renews again. */
  undoCancel(serviceUuid: string, by: 'customer' | 'admin'): ServiceBillingView {
    const day = today(this.deps.clock);
    transaction(this.deps.db, () => {
      const billing = this.require(serviceUuid);
      if (!billing.cancel_at || !RUNNING.includes(billing.state) || billing.cancel_at <= day) throw new HttpError(409, NO_PENDING_CANCELLATION(serviceUuid));
      this.deps.periods.setCancellation(serviceUuid, null, null);
      const service = this.deps.services.get(serviceUuid);
      this.deps.outbox.event('service.cancellation_undone', {
        service_uuid: serviceUuid, product_uuid: service?.product_uuid ?? null, module: service?.module_name ?? '', customer_uuid: this.owner(serviceUuid),
        when: 'period_end', effective_date: billing.cancel_at, by,
      }, `${serviceUuid}:${this.deps.clock.now().toISOString()}`);
      this.remakeRenewal(serviceUuid);
    }, 'immediate');
    return this.view(serviceUuid)!;
  }

  /**
   * An admin moves the next due date (a correction, extra days granted): an open renewal invoice of the old period is
   * voided and the renewal made again for the new one when it is within the lead time.
   */
  setNextDue(serviceUuid: string, date: string): ServiceBillingView {
    parseDate(date);
    transaction(this.deps.db, () => {
      const billing = this.require(serviceUuid);
      if (!RUNNING.includes(billing.state) || billing.anchor_day === null || billing.next_due_date === null) throw new HttpError(409, SERVICE_NOT_RUNNING(serviceUuid, billing.state));
      if (billing.cancel_at) throw new HttpError(409, `service ${serviceUuid} is cancelled at its period end: withdraw the cancellation first`);
      this.deps.invoices.voidOpen(serviceUuid, ['renewal']);
      this.deps.periods.moveDue(serviceUuid, date, nextDue(date, billing.billing_cycle, billing.anchor_day));
      this.remakeRenewal(serviceUuid);
    }, 'immediate');
    return this.view(serviceUuid)!;
  }

  /** Makes the service's renewal invoice now when it is within the lead time (after a void); inside a transaction. */
  remakeRenewal(serviceUuid: string): void {
    this.creditNew(this.deps.renewals.makeFor(renewalWindow(this.deps), serviceUuid).credited);
  }

  /** New invoices whose customer has credit: the credit applied, and one it pays in full settled (inside the transaction). */
  creditNew(uuids: readonly string[]): void {
    for (const uuid of uuids) {
      const row = this.deps.invoices.get(uuid);
      if (!row) continue;
      const after = applyCredit(this.deps, row);
      if (after.amount_minor === 0) this.settleByCredit(after);
    }
  }

  require(serviceUuid: string): ServiceBillingRow {
    const billing = this.deps.periods.get(serviceUuid);
    if (!billing) throw new HttpError(this.deps.services.get(serviceUuid) ? 409 : 404, NO_BILLING(serviceUuid));
    return billing;
  }

  private owner(serviceUuid: string): string | null {
    return this.deps.periods.billed(serviceUuid)?.customer_uuid ?? null;
  }
}
