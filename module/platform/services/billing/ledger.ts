// The invoice ledger: records payments, failed attempts and refunds atomically (a gateway event id claimed in the same
// transaction), then queues the service's create() on payment and applies the product's refund policy on a full refund.
import type { Logger } from 'pino';
import type { HookEvents, Hooks, InvoiceEvent, InvoiceEventName } from '../../../../hooks.ts';
import type { Clock } from '../../../../shared/clock.ts';
import type {
  GatewayFailure, GatewayPayment, GatewayRefund, LedgerAnswer, LedgerInvoice, LedgerTransaction, PaymentLedger, RefundAnswer, SavedMethod,
} from '../../../contract/payment.ts';
import type { JobResult } from '../../../contract/result.ts';
import type { InvoiceRow } from '../../store/query/repositories/invoices.ts';
import type { TransactionRow } from '../../store/query/repositories/transactions.ts';
import type { BillingRepos, ReposOf } from './billing-repos.ts';
import { formatMinor, normalizeCurrency } from './money.ts';
import type { BillingPeriods } from './periods.ts';

export const REFUND_TOO_LARGE = (left: number, currency: string) => `refund exceeds what is left to refund (${formatMinor(left, currency)} ${currency})`;
export const NOT_A_PAYMENT = (uuid: string) => `transaction ${uuid} is not a payment`;
export const UNKNOWN_TRANSACTION = (uuid: string) => `transaction not found: ${uuid}`;
/** Note of money received for an invoice paid before: recorded (so it can be refunded) but not applied to it. */
const NOT_APPLIED = (status: string) => `not applied: invoice already ${status}`;
const isApplied = (payment: TransactionRow) => !payment.note.startsWith('not applied:');

/** Runs a lifecycle action on a service (the platform's ServiceAdmin.runAction: queued through the lifecycle). */
export type ServiceActionRunner = (serviceUuid: string, action: 'create' | 'suspend' | 'termination') => Promise<JobResult>;

export interface LedgerDeps {
  /** The repositories on the platform's store (reads, single writes). */
  r: BillingRepos;
  /** The repositories on a transaction's store. */
  repos: ReposOf;
  hooks: Hooks;
  clock: Clock;
  logger: Logger;
  /** Late-bound: the service host is built after the modules, which get this ledger. */
  runAction: ServiceActionRunner;
  /** Recurring billing: a paid invoice's effect on its service's period (called inside the paying transaction). */
  periods: BillingPeriods;
  /** Carries out what the outbox got (after a commit). */
  afterCommit(): void;
}

/** An off-session charge the gateway refused (the charge job's answer, or the gateway's webhook). */
export interface AutoChargeFailure {
  invoice_uuid: string;
  gateway: string;
  code: string;
  reason: string;
}

/** A manual payment (admin): gateway `manual`, the admin's reference. */
export interface ManualPayment {
  invoice_uuid: string;
  reference?: string;
  note?: string;
}

export class BillingLedger implements PaymentLedger {
  constructor(private readonly deps: LedgerDeps) {}

  async invoice(uuid: string): Promise<LedgerInvoice | null> {
    const row = await this.deps.r.invoices.get(uuid);
    return row ? toLedgerInvoice(row) : null;
  }

  async transaction(uuid: string): Promise<LedgerTransaction | null> {
    const row = await this.deps.r.transactions.get(uuid);
    return row ? toLedgerTransaction(row) : null;
  }

  /** Runs `work` in one transaction with the repositories bound to it. */
  private inTransaction<T>(work: (r: BillingRepos) => Promise<T>): Promise<T> {
    return this.deps.r.store.transaction((store) => work(this.deps.repos(store)));
  }

  /**
   * Claims the event id and, when the invoice matches (uuid from metadata, amount and currency), marks it paid with a
   * payment transaction — all in one transaction; then queues the service's create(). A replay answers `duplicate`.
   */
  async recordPayment(p: GatewayPayment): Promise<LedgerAnswer> {
    const answer = await this.inTransaction(async (r): Promise<LedgerAnswer & { row: InvoiceRow | null }> => {
      const { invoices, transactions } = r;
      if (!(await transactions.claimEvent(p.gateway_uuid, p.event_id, p.event_type))) return { outcome: 'duplicate', invoice_uuid: null, transaction_uuid: null, row: null };
      const settle = async (a: LedgerAnswer, row: InvoiceRow | null) => {
        await transactions.settleEvent(p.gateway_uuid, p.event_id, a.outcome, a.invoice_uuid);
        return { ...a, row };
      };
      const row = p.invoice_uuid ? await invoices.get(p.invoice_uuid) : null;
      if (!row) return settle({ outcome: 'unknown_invoice', invoice_uuid: null, transaction_uuid: null }, null);
      const currency = safeCurrency(p.currency);
      const base = { invoice_uuid: row.uuid, gateway: p.gateway, gateway_uuid: p.gateway_uuid, external_id: p.external_id, amount_minor: p.amount_minor, currency: currency ?? p.currency };
      if (!isPayable(row)) {
        // Money for an invoice no longer payable (a late or second payment, matching or not): kept so it can be refunded.
        const tx = await transactions.insert({ ...base, kind: 'payment', note: NOT_APPLIED(row.status) });
        return settle({ outcome: 'already_paid', invoice_uuid: row.uuid, transaction_uuid: tx.uuid }, row);
      }
      if (currency !== row.currency || p.amount_minor !== row.amount_minor) {
        const note = `amount or currency mismatch: received ${p.amount_minor} ${p.currency}, invoice ${row.amount_minor} ${row.currency}`;
        const tx = await transactions.insert({ ...base, kind: 'failure', note });
        await invoices.setStatus(row.uuid, 'failed', ['unpaid']);
        return settle({ outcome: 'mismatch', invoice_uuid: row.uuid, transaction_uuid: tx.uuid }, await invoices.get(row.uuid));
      }
      // The conditional write decides: of two processes paying one invoice at once, one marks it paid.
      if (!(await invoices.setStatus(row.uuid, 'paid', ['unpaid', 'failed']))) {
        const tx = await transactions.insert({ ...base, kind: 'payment', note: NOT_APPLIED(row.status) });
        return settle({ outcome: 'already_paid', invoice_uuid: row.uuid, transaction_uuid: tx.uuid }, row);
      }
      const tx = await transactions.insert({ ...base, kind: 'payment' });
      const paid = (await invoices.get(row.uuid))!;
      await this.deps.periods.settlePaid(r, paid);
      return settle({ outcome: 'paid', invoice_uuid: row.uuid, transaction_uuid: tx.uuid }, paid);
    });
    const { row, ...out } = answer;
    if (row && out.outcome === 'mismatch') this.emit('invoice.payment_failed', await this.event(row, { reason: 'amount or currency mismatch' }));
    if (row && out.outcome === 'paid') await this.afterPaid(row, out.transaction_uuid!, p.gateway);
    if (out.outcome !== 'paid' && out.outcome !== 'duplicate') this.deps.logger.warn({ outcome: out.outcome, invoice_uuid: out.invoice_uuid, event_id: p.event_id, gateway: p.gateway }, 'gateway payment not applied');
    return out;
  }

  /**
   * Claims the event id and records the failed attempt (unpaid → failed, `invoice.payment_failed` emitted); for an
   * invoice no longer payable the attempt is recorded as `not_payable` and nothing is emitted. A replay answers `duplicate`.
   */
  async recordFailure(f: GatewayFailure): Promise<LedgerAnswer> {
    const answer = await this.inTransaction(async (r): Promise<LedgerAnswer & { row: InvoiceRow | null }> => {
      const { invoices, transactions } = r;
      if (!(await transactions.claimEvent(f.gateway_uuid, f.event_id, f.event_type))) return { outcome: 'duplicate', invoice_uuid: null, transaction_uuid: null, row: null };
      const row = f.invoice_uuid ? await invoices.get(f.invoice_uuid) : null;
      if (!row) {
        await transactions.settleEvent(f.gateway_uuid, f.event_id, 'unknown_invoice', null);
        return { outcome: 'unknown_invoice', invoice_uuid: null, transaction_uuid: null, row: null };
      }
      const payable = isPayable(row);
      const tx = await transactions.insert({
        invoice_uuid: row.uuid, kind: 'failure', gateway: f.gateway, gateway_uuid: f.gateway_uuid, external_id: f.external_id,
        amount_minor: f.amount_minor, currency: safeCurrency(f.currency) ?? f.currency,
        note: payable ? f.reason.slice(0, 500) : `${NOT_APPLIED(row.status)}: ${f.reason}`.slice(0, 500),
      });
      const outcome = payable ? 'failed' : 'not_payable';
      if (payable) await invoices.setStatus(row.uuid, 'failed', ['unpaid']);
      await transactions.settleEvent(f.gateway_uuid, f.event_id, outcome, row.uuid);
      if (payable && f.auto_charge) await this.autoChargeFailed(r, { invoice_uuid: row.uuid, gateway: f.gateway, code: f.code ?? 'payment_failed', reason: f.reason.slice(0, 500) });
      return { outcome, invoice_uuid: row.uuid, transaction_uuid: tx.uuid, row: payable ? await invoices.get(row.uuid) : null };
    });
    const { row, ...out } = answer;
    // Only a failure of an invoice still to be paid is news for the customer; a late one is recorded, nobody mailed.
    // The failure of an off-session charge is told once as payment.auto_charge_failed (with the pay link), not twice.
    if (row && f.auto_charge) this.deps.afterCommit();
    else if (row) this.emit('invoice.payment_failed', await this.event(row, { reason: f.reason.slice(0, 500) }));
    else if (out.outcome === 'not_payable') this.deps.logger.warn({ outcome: out.outcome, invoice_uuid: out.invoice_uuid, event_id: f.event_id, gateway: f.gateway }, 'gateway failure for an invoice no longer payable: recorded, nobody mailed');
    return out;
  }

  /** Marks an unpaid/failed invoice paid by the admin (gateway `manual`); false when it is already paid or refunded. */
  async recordManualPayment(m: ManualPayment): Promise<{ paid: boolean; transaction_uuid: string | null; invoice: InvoiceRow | null }> {
    const done = await this.inTransaction(async (r) => {
      const { invoices, transactions } = r;
      const row = await invoices.get(m.invoice_uuid);
      if (!row || !(await invoices.setStatus(row.uuid, 'paid', ['unpaid', 'failed']))) return { row, tx: null };
      const tx = await transactions.insert({
        invoice_uuid: row.uuid, kind: 'payment', gateway: 'manual', external_id: m.reference ?? null,
        amount_minor: row.amount_minor, currency: row.currency, note: m.note ?? '',
      });
      const paid = (await invoices.get(row.uuid))!;
      await this.deps.periods.settlePaid(r, paid);
      return { row: paid, tx };
    });
    if (done.tx && done.row) await this.afterPaid(done.row, done.tx.uuid, 'manual');
    return { paid: done.tx !== null, transaction_uuid: done.tx?.uuid ?? null, invoice: done.row };
  }

  /**
   * Records a refund of a payment (after the gateway accepted it, or a manual one): the refund transaction, the
   * payment's and the invoice's refunded totals; a full refund of a paid invoice makes it `refunded` and applies the
   * product's refund policy (terminate or suspend the service).
   */
  async recordRefund(r: GatewayRefund): Promise<RefundAnswer> {
    const done = await this.inTransaction(async ({ invoices, transactions }) => {
      const payment = await transactions.get(r.transaction_uuid);
      if (!payment) throw new RangeError(UNKNOWN_TRANSACTION(r.transaction_uuid));
      if (payment.kind !== 'payment') throw new RangeError(NOT_A_PAYMENT(r.transaction_uuid));
      const left = payment.amount_minor - payment.refunded_minor;
      if (!Number.isSafeInteger(r.amount_minor) || r.amount_minor <= 0 || r.amount_minor > left) throw new RangeError(REFUND_TOO_LARGE(left, payment.currency));
      // The refunded total moves only within what was paid: of two refunds racing for the rest, one is recorded.
      if (!(await transactions.addRefunded(payment.uuid, r.amount_minor))) throw new RangeError(REFUND_TOO_LARGE(left, payment.currency));
      const refund = await transactions.insert({
        invoice_uuid: payment.invoice_uuid, kind: 'refund', gateway: payment.gateway, gateway_uuid: payment.gateway_uuid,
        external_id: r.external_id, parent_uuid: payment.uuid, amount_minor: r.amount_minor, currency: payment.currency,
      });
      // Money an invoice never took (a second payment of a paid invoice) goes back without touching the invoice.
      if (isApplied(payment)) await invoices.addRefunded(payment.invoice_uuid, r.amount_minor);
      const row = (await invoices.get(payment.invoice_uuid))!;
      const full = isApplied(payment) && row.refunded_minor >= row.amount_minor && (await invoices.setStatus(row.uuid, 'refunded', ['paid']));
      return { refund, row: (await invoices.get(row.uuid))!, full };
    });
    let serviceAction: 'termination' | 'suspend' | null = null;
    const serviceUuid = done.row.service_uuid;
    if (done.full && serviceUuid) {
      const service = await this.deps.r.services.get(serviceUuid);
      const policy = service ? await this.deps.r.prices.refundAction(service.product_uuid) : 'terminate';
      serviceAction = policy === 'suspend' ? 'suspend' : 'termination';
      await this.queue(serviceUuid, serviceAction, done.row);
    }
    this.emit('invoice.refunded', { ...(await this.event(done.row)), refunded_minor: done.row.refunded_minor, full: done.full });
    return { invoice_uuid: done.row.uuid, refund_uuid: done.refund.uuid, refunded_minor: done.row.refunded_minor, full: done.full, service_action: serviceAction };
  }

  /**
   * Queues create() for services of paid invoices still `pending` (the process stopped between recording a payment
   * and queueing); run by the serving process at start. Resolves with the services queued.
   */
  async resumePaid(): Promise<string[]> {
    const queued: string[] = [];
    for (const row of await this.deps.r.invoices.paidOrdersOfPendingServices()) {
      if (!row.service_uuid) continue;
      await this.queue(row.service_uuid, 'create', row);
      queued.push(row.service_uuid);
    }
    if (queued.length) this.deps.logger.warn({ services: queued }, 'paid invoices whose service was still pending: create() queued');
    return queued;
  }

  /** The invoice event payload of a row. */
  async event(row: InvoiceRow, extra: Partial<InvoiceEvent> = {}): Promise<InvoiceEvent> {
    const service = row.service_uuid ? await this.deps.r.services.productOf(row.service_uuid) : null;
    return {
      invoice_uuid: row.uuid, invoice_number: row.number, customer_uuid: row.customer_uuid, service_uuid: row.service_uuid,
      product_uuid: service?.product_uuid ?? null, module: service?.module_name ?? null,
      amount: formatMinor(row.amount_minor, row.currency), amount_minor: row.amount_minor, currency: row.currency,
      due_date: row.due_date, at: this.deps.clock.now().toISOString(), ...extra,
    };
  }

  /** Emits after the write; a failing listener is logged by the bus. */
  emit<E extends InvoiceEventName>(name: E, payload: HookEvents[E]): void {
    this.deps.hooks.emit(name, payload).catch((err: unknown) => this.deps.logger.error({ event: name, err: err instanceof Error ? err.message : String(err) }, 'hook listener failed'));
  }

  private async afterPaid(row: InvoiceRow, transactionUuid: string, gateway: string): Promise<void> {
    this.emit('invoice.paid', { ...(await this.event(row)), transaction_uuid: transactionUuid, gateway });
    this.deps.afterCommit();
    // The first invoice provisions the service; renewals and plan changes act through the billing outbox.
    if (row.service_uuid && row.kind === 'order') await this.queue(row.service_uuid, 'create', row);
  }

  /** Carries out what recurring billing decided in a transaction that just committed (the outbox). */
  flush(): void {
    this.deps.afterCommit();
  }

  gatewayCustomer(gatewayUuid: string, customerUuid: string): Promise<string | null> {
    return this.deps.r.methods.gatewayCustomer(gatewayUuid, customerUuid);
  }

  setGatewayCustomer(gatewayUuid: string, customerUuid: string, externalId: string): Promise<string> {
    return this.deps.r.methods.setGatewayCustomer(gatewayUuid, customerUuid, externalId);
  }

  /** Saves (or replaces) the customer's method on the gateway; `payment.method_saved` when it is new. */
  async saveMethod(m: SavedMethod): Promise<void> {
    const saved = await this.inTransaction(async (r) => {
      const out = await r.methods.save({
        customer_uuid: m.customer_uuid, gateway_uuid: m.gateway_uuid, gateway: m.gateway, external_customer: m.external_customer, external_id: m.external_id,
        label: m.label.slice(0, 100), brand: m.brand ?? null, last4: m.last4 ?? null, exp_month: m.exp_month ?? null, exp_year: m.exp_year ?? null,
      });
      if (out.changed) {
        await r.outbox.event('payment.method_saved', {
          customer_uuid: m.customer_uuid, service_uuid: null, method_uuid: out.method.uuid, gateway: m.gateway, label: out.method.label,
        }, out.method.uuid);
      }
      return out.changed;
    });
    if (saved) this.deps.afterCommit();
  }

  /** An off-session charge was refused: `payment.auto_charge_failed` once per invoice (the job and the webhook both tell). */
  async recordAutoChargeFailure(f: AutoChargeFailure): Promise<void> {
    await this.inTransaction((r) => this.autoChargeFailed(r, f));
    this.deps.afterCommit();
  }

  private async autoChargeFailed(r: BillingRepos, f: AutoChargeFailure): Promise<void> {
    await r.outbox.event('payment.auto_charge_failed', { invoice_uuid: f.invoice_uuid, gateway: f.gateway, code: f.code, reason: f.reason }, f.invoice_uuid);
  }

  /** Queues the service action; a refusal is logged (the invoice stays as recorded; an admin can run it again). */
  private async queue(serviceUuid: string, action: 'create' | 'suspend' | 'termination', row: InvoiceRow): Promise<void> {
    try {
      const result = await this.deps.runAction(serviceUuid, action);
      if (result.status !== 'success') this.deps.logger.error({ service_uuid: serviceUuid, invoice_uuid: row.uuid, action, message: result.message }, 'billing could not queue the service action');
    } catch (error) {
      this.deps.logger.error({ service_uuid: serviceUuid, invoice_uuid: row.uuid, action, err: error instanceof Error ? error.message : String(error) }, 'billing could not queue the service action');
    }
  }
}

/** An invoice a payment may still settle (unpaid, or failed before); paid and refunded ones are not payable. */
function isPayable(row: InvoiceRow): boolean {
  return row.status === 'unpaid' || row.status === 'failed';
}

function safeCurrency(code: string): string | null {
  try {
    return normalizeCurrency(code);
  } catch {
    return null;
  }
}

function toLedgerInvoice(row: InvoiceRow): LedgerInvoice {
  return {
    uuid: row.uuid, number: row.number, description: row.description, customer_uuid: row.customer_uuid,
    amount_minor: row.amount_minor, currency: row.currency, status: row.status, refunded_minor: row.refunded_minor,
    recurring: row.service_uuid !== null,
  };
}

function toLedgerTransaction(row: TransactionRow): LedgerTransaction {
  return {
    uuid: row.uuid, invoice_uuid: row.invoice_uuid, kind: row.kind, gateway: row.gateway, gateway_uuid: row.gateway_uuid,
    external_id: row.external_id, amount_minor: row.amount_minor, currency: row.currency, refunded_minor: row.refunded_minor,
  };
}
