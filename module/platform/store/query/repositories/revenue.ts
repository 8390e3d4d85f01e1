// Revenue figures over the query layer, straight from the ledger tables: money in and out per month and currency
// (transactions), recurring amounts of running subscriptions (service_billing), services started and ended per month,
// open invoices past due.
import { sql } from 'kysely';
import type { QueryStore } from '../query-store.ts';

export interface MonthMoney {
  month: string;
  currency: string;
  paid_minor: number;
  refunded_minor: number;
}

const month = (column: string) => sql<string>`substr(${sql.ref(column)}, 1, 7)`;

/** Repository of the revenue queries (read only). */
export class RevenueQueries {
  constructor(private readonly store: QueryStore) {}

  /** Payments and refunds per month (`YYYY-MM`) and currency, from `since` (ISO). */
  async money(since: string): Promise<MonthMoney[]> {
    const rows = await this.store.db.selectFrom('transactions')
      .select([
        month('created_at').as('month'), 'currency',
        sql<number>`SUM(CASE WHEN kind = 'payment' THEN amount_minor ELSE 0 END)`.as('paid_minor'),
        sql<number>`SUM(CASE WHEN kind = 'refund' THEN amount_minor ELSE 0 END)`.as('refunded_minor'),
      ])
      .where('kind', 'in', ['payment', 'refund']).where('created_at', '>=', since)
      .groupBy([month('created_at'), 'currency']).orderBy(month('created_at')).orderBy('currency').execute();
    return rows.map((r) => ({ ...r, paid_minor: Number(r.paid_minor), refunded_minor: Number(r.refunded_minor) }));
  }

  /** Recurring amounts of running (active or overdue) subscriptions per cycle and currency. */
  async recurring(): Promise<Array<{ billing_cycle: string; currency: string; minor: number; n: number }>> {
    const rows = await this.store.db.selectFrom('service_billing')
      .select(['billing_cycle', 'currency', (eb) => eb.fn.sum<number>('recurring_minor').as('minor'), (eb) => eb.fn.countAll<number>().as('n')])
      .where('state', 'in', ['active', 'overdue']).groupBy(['billing_cycle', 'currency']).orderBy('billing_cycle').orderBy('currency').execute();
    return rows.map((r) => ({ ...r, minor: Number(r.minor), n: Number(r.n) }));
  }

  /** Services created per month from `since`. */
  async created(since: string): Promise<Array<{ month: string; n: number }>> {
    const rows = await this.store.db.selectFrom('services').select([month('created_at').as('month'), (eb) => eb.fn.countAll<number>().as('n')])
      .where('created_at', '>=', since).groupBy(month('created_at')).execute();
    return rows.map((r) => ({ month: r.month, n: Number(r.n) }));
  }

  /** Subscriptions ended (cancelled or terminated) per month from `since`. */
  async ended(since: string): Promise<Array<{ month: string; n: number }>> {
    const endedAt = sql<string>`coalesce(ended_at, cancel_at)`;
    const rows = await this.store.db.selectFrom('service_billing')
      .select([sql<string>`substr(coalesce(ended_at, cancel_at), 1, 7)`.as('month'), (eb) => eb.fn.countAll<number>().as('n')])
      .where('state', 'in', ['cancelled', 'terminated']).where(endedAt, '>=', since).groupBy(sql`substr(coalesce(ended_at, cancel_at), 1, 7)`).execute();
    return rows.map((r) => ({ month: r.month, n: Number(r.n) }));
  }

  /** Open invoices due before `today` (YYYY-MM-DD) per currency. */
  async overdue(today: string): Promise<Array<{ currency: string; minor: number; n: number }>> {
    const rows = await this.store.db.selectFrom('invoices').select(['currency', (eb) => eb.fn.sum<number>('amount_minor').as('minor'), (eb) => eb.fn.countAll<number>().as('n')])
      .where('status', 'in', ['unpaid', 'failed']).where('due_date', '<', today).groupBy('currency').orderBy('currency').execute();
    return rows.map((r) => ({ currency: r.currency, minor: Number(r.minor), n: Number(r.n) }));
  }
}
