// The billing period of each sold service (service_billing) over the query layer: cycle, recurring amount, anchor day,
// next due date, billing state and a pending cancellation. Written by billing only; provision_status stays the
// lifecycle's. State moves and period extensions are conditional writes (one caller wins).
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import type { BillingState } from '../../../services/billing/recurring-schema.ts';
import type { BillingCycle } from '../../../services/billing/schema.ts';
import type { QueryStore } from '../query-store.ts';

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

/** A service whose billing reads with its product, owner and provision status. */
export interface BilledService extends ServiceBillingRow {
  product_uuid: string;
  customer_uuid: string | null;
  provision_status: string;
}

const RUNNING = ['active', 'overdue', 'suspended'] as const;

/** Repository of `service_billing`. */
export class ServiceBillingQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  private now(): string {
    return this.clock.now().toISOString();
  }

  /** The billing of a newly ordered service: `pending` until its first invoice is paid. */
  async create(input: { service_uuid: string; billing_cycle: BillingCycle; recurring_minor: number; currency: string }): Promise<ServiceBillingRow> {
    const at = this.now();
    await this.store.db.insertInto('service_billing').values({ ...input, state: 'pending', created_at: at, updated_at: at }).execute();
    return (await this.get(input.service_uuid))!;
  }

  async get(serviceUuid: string): Promise<ServiceBillingRow | null> {
    return ((await this.store.db.selectFrom('service_billing').selectAll().where('service_uuid', '=', serviceUuid).executeTakeFirst()) as ServiceBillingRow | undefined) ?? null;
  }

  async billed(serviceUuid: string): Promise<BilledService | null> {
    const row = await this.store.db.selectFrom('service_billing as b').innerJoin('services as s', 's.uuid', 'b.service_uuid')
      .selectAll('b').select(['s.product_uuid', 's.customer_uuid', 's.provision_status']).where('b.service_uuid', '=', serviceUuid).executeTakeFirst();
    return (row as BilledService | undefined) ?? null;
  }

  /** The first payment: the period starts, anchored on its day; false when the service was not `pending`. */
  async startFirstPeriod(serviceUuid: string, p: { anchor_day: number; paid_on: string; next_due_date: string; next_period_end: string }): Promise<boolean> {
    const result = await this.store.db.updateTable('service_billing').set({
      state: 'active', anchor_day: p.anchor_day, first_paid_at: p.paid_on, next_due_date: p.next_due_date, next_period_end: p.next_period_end, updated_at: this.now(),
    }).where('service_uuid', '=', serviceUuid).where('state', '=', 'pending').executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** A paid renewal: paid through `to` (from the previous due date `from`); false when `from` is not the next due date. */
  async extend(serviceUuid: string, from: string, to: string, periodEnd: string): Promise<boolean> {
    const result = await this.store.db.updateTable('service_billing').set({ next_due_date: to, next_period_end: periodEnd, updated_at: this.now() })
      .where('service_uuid', '=', serviceUuid).where('next_due_date', '=', from).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** An admin's correction of the next due date (and the end of the period after it). */
  async moveDue(serviceUuid: string, nextDueDate: string, periodEnd: string): Promise<void> {
    await this.store.db.updateTable('service_billing').set({ next_due_date: nextDueDate, next_period_end: periodEnd, updated_at: this.now() })
      .where('service_uuid', '=', serviceUuid).execute();
  }

  /** Moves the state (from one of `from`); false when it was elsewhere (or another caller moved it first). */
  async setState(serviceUuid: string, state: BillingState, from: readonly BillingState[]): Promise<boolean> {
    const at = this.now();
    const ended = state === 'cancelled' || state === 'terminated';
    const result = await this.store.db.updateTable('service_billing').set({ state, updated_at: at, ...(ended ? { ended_at: at } : {}) })
      .where('service_uuid', '=', serviceUuid).where('state', 'in', [...from]).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The recurring amount after a plan change. */
  async setRecurring(serviceUuid: string, amountMinor: number): Promise<void> {
    await this.store.db.updateTable('service_billing').set({ recurring_minor: amountMinor, updated_at: this.now() }).where('service_uuid', '=', serviceUuid).execute();
  }

  /** Records a cancellation (the day the service ends) or, with null, withdraws it. */
  async setCancellation(serviceUuid: string, cancelAt: string | null, by: string | null): Promise<void> {
    await this.store.db.updateTable('service_billing')
      .set({ cancel_at: cancelAt, cancel_requested_at: cancelAt === null ? null : this.now(), cancel_by: by, updated_at: this.now() })
      .where('service_uuid', '=', serviceUuid).execute();
  }

  /** Services whose cancellation takes effect on or before `today` and that still run. */
  async dueCancellations(today: string, limit: number): Promise<ServiceBillingRow[]> {
    return (await this.store.db.selectFrom('service_billing').selectAll().where('cancel_at', 'is not', null).where('cancel_at', '<=', today)
      .where('state', 'in', [...RUNNING]).orderBy('cancel_at').orderBy('service_uuid').limit(limit).execute()) as ServiceBillingRow[];
  }

  /** Services an admin terminated (provision status `terminated`) whose billing still runs. */
  async terminatedElsewhere(limit: number): Promise<ServiceBillingRow[]> {
    return (await this.store.db.selectFrom('service_billing as b').innerJoin('services as s', 's.uuid', 'b.service_uuid').selectAll('b')
      .where('b.state', 'in', ['pending', ...RUNNING]).where('s.provision_status', '=', 'terminated').orderBy('b.service_uuid').limit(limit).execute()) as ServiceBillingRow[];
  }

  /** Counts per billing state (dashboards, tests). */
  async countByState(): Promise<Record<string, number>> {
    const rows = await this.store.db.selectFrom('service_billing').select(['state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('state').execute();
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  }
}
