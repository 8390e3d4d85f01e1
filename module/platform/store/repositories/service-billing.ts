// The billing period of each sold service (service_billing): cycle, recurring amount, anchor day, next due date,
// billing state and a pending cancellation. Written by billing only; provision_status stays the lifecycle's.
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import type { BillingState } from '../../services/billing/recurring-schema.ts';
import type { BillingCycle } from '../../services/billing/schema.ts';
import type { Db } from '../db.ts';
import { statement } from '../statement-cache.ts';

export interface ServiceBillingRow {
  service_uuid: string;
  billing_cycle: BillingCycle;
  recurring_minor: number;
  currency: string;
  state: BillingState;
  /** Day of month the periods are anchored on (the first paid day); null before the first payment. */
  anchor_day: number | null;
  first_paid_at: string | null;
  /** End of the paid time = start of the next period (ISO date); null before the first payment. */
  next_due_date: string | null;
  /** End of the next period (one cycle after next_due_date). */
  next_period_end: string | null;
  /** A cancellation: the day the service ends (its period end, or the day of an immediate one). */
  cancel_at: string | null;
  cancel_requested_at: string | null;
  /** `customer` or `admin`. */
  cancel_by: string | null;
  ended_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A service whose billing reads with its product, owner and provision status (the run's dunning pass). */
export interface BilledService extends ServiceBillingRow {
  product_uuid: string;
  customer_uuid: string | null;
  provision_status: string;
}

/** Repository of `service_billing`. */
export class ServiceBillingRepository {
  private readonly getStmt;
  private readonly billedStmt;

  constructor(private readonly db: Db, private readonly clock: Clock = systemClock) {
    this.getStmt = db.prepare('SELECT * FROM service_billing WHERE service_uuid = ?');
    this.billedStmt = db.prepare(`SELECT b.*, s.product_uuid, s.customer_uuid, s.provision_status FROM service_billing b
      JOIN services s ON s.uuid = b.service_uuid WHERE b.service_uuid = ?`);
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  /** The billing of a newly ordered service: `pending` until its first invoice is paid. */
  create(input: { service_uuid: string; billing_cycle: BillingCycle; recurring_minor: number; currency: string }): ServiceBillingRow {
    const at = this.now();
    statement(this.db, `INSERT INTO service_billing (service_uuid, billing_cycle, recurring_minor, currency, state, created_at, updated_at)
      VALUES (@service_uuid, @billing_cycle, @recurring_minor, @currency, 'pending', @at, @at)`).run({ ...input, at });
    return this.get(input.service_uuid)!;
  }

  get(serviceUuid: string): ServiceBillingRow | null {
    return (this.getStmt.get(serviceUuid) as ServiceBillingRow | undefined) ?? null;
  }

  billed(serviceUuid: string): BilledService | null {
    return (this.billedStmt.get(serviceUuid) as BilledService | undefined) ?? null;
  }

  /** The first payment: the period starts, anchored on its day; false when the service was not `pending`. */
  startFirstPeriod(serviceUuid: string, p: { anchor_day: number; paid_on: string; next_due_date: string; next_period_end: string }): boolean {
    return statement(this.db, `UPDATE service_billing SET state = 'active', anchor_day = @anchor_day, first_paid_at = @paid_on,
        next_due_date = @next_due_date, next_period_end = @next_period_end, updated_at = @at
      WHERE service_uuid = @service AND state = 'pending'`).run({ ...p, service: serviceUuid, at: this.now() }).changes === 1;
  }

  /** A paid renewal: paid through `to` (from the previous due date `from`); false when `from` is not the next due date. */
  extend(serviceUuid: string, from: string, to: string, periodEnd: string): boolean {
    return statement(this.db, `UPDATE service_billing SET next_due_date = @to, next_period_end = @end, updated_at = @at
      WHERE service_uuid = @service AND next_due_date = @from`).run({ service: serviceUuid, from, to, end: periodEnd, at: this.now() }).changes === 1;
  }

  /** An admin's correction of the next due date (and the end of the period after it). */
  moveDue(serviceUuid: string, nextDueDate: string, periodEnd: string): void {
    statement(this.db, 'UPDATE service_billing SET next_due_date = ?, next_period_end = ?, updated_at = ? WHERE service_uuid = ?')
      .run(nextDueDate, periodEnd, this.now(), serviceUuid);
  }

  /** Moves the state (from one of `from`); false when it was elsewhere. */
  setState(serviceUuid: string, state: BillingState, from: readonly BillingState[]): boolean {
    const ended = state === 'cancelled' || state === 'terminated';
    return statement(this.db, `UPDATE service_billing SET state = ?, ended_at = CASE WHEN ? THEN ? ELSE ended_at END, updated_at = ?
      WHERE service_uuid = ? AND state IN (${from.map(() => '?').join(', ')})`)
      .run(state, ended ? 1 : 0, this.now(), this.now(), serviceUuid, ...from).changes === 1;
  }

  /** The recurring amount after a plan change. */
  setRecurring(serviceUuid: string, amountMinor: number): void {
    statement(this.db, 'UPDATE service_billing SET recurring_minor = ?, updated_at = ? WHERE service_uuid = ?').run(amountMinor, this.now(), serviceUuid);
  }

  /** Records a cancellation (the day the service ends) or, with null, withdraws it. */
  setCancellation(serviceUuid: string, cancelAt: string | null, by: string | null): void {
    statement(this.db, `UPDATE service_billing SET cancel_at = ?, cancel_requested_at = ?, cancel_by = ?, updated_at = ? WHERE service_uuid = ?`)
      .run(cancelAt, cancelAt === null ? null : this.now(), by, this.now(), serviceUuid);
  }

  /** Services whose cancellation takes effect on or before `today` and that still run. */
  dueCancellations(today: string, limit: number): ServiceBillingRow[] {
    return statement(this.db, `SELECT * FROM service_billing WHERE cancel_at IS NOT NULL AND cancel_at <= ? AND state IN ('active', 'overdue', 'suspended')
      ORDER BY cancel_at LIMIT ?`).all(today, limit) as ServiceBillingRow[];
  }

  /** Services an admin terminated (provision status `terminated`) whose billing still runs. */
  terminatedElsewhere(limit: number): ServiceBillingRow[] {
    return statement(this.db, `SELECT b.* FROM service_billing b JOIN services s ON s.uuid = b.service_uuid
      WHERE b.state IN ('pending', 'active', 'overdue', 'suspended') AND s.provision_status = 'terminated' LIMIT ?`).all(limit) as ServiceBillingRow[];
  }

  /** Counts per billing state (dashboards, tests). */
  countByState(): Record<string, number> {
    const rows = statement(this.db, 'SELECT state, COUNT(*) AS n FROM service_billing GROUP BY state').all() as Array<{ state: string; n: number }>;
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }
}
