// Dunning reads and claims over the query layer: the open renewal invoices a run looks at, and the steps taken per
// invoice (billing_steps, primary key (invoice, step), INSERT … ON CONFLICT DO NOTHING: a step is claimed by exactly
// one run however many run at once, in one process or several).
import { sql } from 'kysely';
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import type { BillingState } from '../../../services/billing/recurring-schema.ts';
import type { QueryStore } from '../query-store.ts';

/** An open renewal invoice with what dunning needs of its service. */
export interface OpenRenewal {
  invoice_uuid: string;
  invoice_id: number;
  service_uuid: string;
  customer_uuid: string | null;
  product_uuid: string;
  due_date: string;
  amount_minor: number;
  currency: string;
  billing_state: BillingState;
  provision_status: string;
  /** True when the customer has a saved payment method. */
  has_method: boolean;
}

const PART = 500;

/** The key of one invoice's step in `claimMany`'s answer. */
export function stepKey(invoiceUuid: string, step: string): string {
  return `${invoiceUuid} ${step}`;
}

/** Repository of `billing_steps` and the dunning pass's reads. */
export class DunningQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  /**
   * Open renewal invoices due on or before `until` of services still billed, in (due date, id) order after `after`
   * (keyset paging over the partial index of open invoices).
   */
  async openRenewals(until: string, after: { due: string; id: number }, limit: number): Promise<OpenRenewal[]> {
    const rows = await this.store.db.selectFrom('invoices as i')
      .innerJoin('service_billing as b', 'b.service_uuid', 'i.service_uuid')
      .innerJoin('services as s', 's.uuid', 'i.service_uuid')
      .select([
        'i.uuid as invoice_uuid', 'i.id as invoice_id', 'i.service_uuid', 'i.customer_uuid', 's.product_uuid', 'i.due_date', 'i.amount_minor', 'i.currency',
        'b.state as billing_state', 's.provision_status',
        (eb) => eb.exists(eb.selectFrom('payment_methods as m').select(sql.lit(1).as('one')).whereRef('m.customer_uuid', '=', 'i.customer_uuid')).as('has_method'),
      ])
      .where('i.status', 'in', ['unpaid', 'failed']).where('i.kind', '=', 'renewal').where('i.due_date', '<=', until)
      .where(sql<boolean>`(i.due_date, i.id) > (${after.due}, ${after.id})`)
      .where('b.state', 'in', ['active', 'overdue', 'suspended'])
      .orderBy('i.due_date').orderBy('i.id').limit(limit).execute();
    return rows.map((r) => ({ ...r, service_uuid: r.service_uuid!, has_method: Boolean(r.has_method), billing_state: r.billing_state as BillingState }));
  }

  /** The steps taken for each of `invoices`. */
  async done(invoices: readonly string[]): Promise<Map<string, Set<string>>> {
    const out = new Map<string, Set<string>>(invoices.map((uuid) => [uuid, new Set<string>()]));
    for (let i = 0; i < invoices.length; i += PART) {
      const rows = await this.store.db.selectFrom('billing_steps').select(['invoice_uuid', 'step']).where('invoice_uuid', 'in', invoices.slice(i, i + PART)).execute();
      for (const row of rows) out.get(row.invoice_uuid)!.add(row.step);
    }
    return out;
  }

  /** Claims a step: true for the one caller that took it, false when it was taken before. */
  async claim(invoiceUuid: string, step: string, outcome = ''): Promise<boolean> {
    return (await this.claimMany([{ invoice_uuid: invoiceUuid, step, outcome }])).size === 1;
  }

  /**
   * Claims many steps at once (one INSERT … ON CONFLICT DO NOTHING RETURNING per 500): answers the keys
   * (`stepKey(invoice, step)`) this caller took; a step claimed before, or by a concurrent caller, is not among them.
   */
  async claimMany(steps: ReadonlyArray<{ invoice_uuid: string; step: string; outcome?: string }>): Promise<Set<string>> {
    const created_at = this.clock.now().toISOString();
    const taken = new Set<string>();
    for (let i = 0; i < steps.length; i += PART) {
      const rows = await this.store.db.insertInto('billing_steps')
        .values(steps.slice(i, i + PART).map((s) => ({ invoice_uuid: s.invoice_uuid, step: s.step, outcome: s.outcome ?? '', created_at })))
        .onConflict((oc) => oc.columns(['invoice_uuid', 'step']).doNothing())
        .returning(['invoice_uuid', 'step']).execute();
      for (const row of rows) taken.add(stepKey(row.invoice_uuid, row.step));
    }
    return taken;
  }

  /** The steps of one invoice with their outcome (API, tests). */
  async steps(invoiceUuid: string): Promise<Array<{ step: string; outcome: string; created_at: string }>> {
    return this.store.db.selectFrom('billing_steps').select(['step', 'outcome', 'created_at']).where('invoice_uuid', '=', invoiceUuid).orderBy('created_at').orderBy('step').execute();
  }
}
