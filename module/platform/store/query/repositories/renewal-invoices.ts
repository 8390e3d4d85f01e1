// The billing run's set-based writes over the query layer: a batch of renewal invoices made by one INSERT … SELECT (the
// UNIQUE index on (service, period) makes a second, concurrent or repeated attempt insert nothing, on either engine and
// across processes), numbered, with their `invoice.renewal_created` rows in the billing outbox — all in the caller's
// transaction.
import { sql, type RawBuilder } from 'kysely';
import type { QueryStore } from '../query-store.ts';

/** What selects a batch: the day, the lead times, the time stamp written. */
export interface RenewalWindow {
  today: string;
  /** The global lead time (days). */
  lead: number;
  /** The largest lead of every product's, as a day (for the index). */
  horizon: string;
  at: string;
}

/** Where a batch of the run starts: after this (next due date, service). */
export interface RenewalCursor {
  due: string;
  service: string;
}

const START: RenewalCursor = { due: '', service: '' };
const PART = 500;

/** A renewal the run would make (dry run). */
export interface DueRenewal {
  service_uuid: string;
  customer_uuid: string | null;
  period_start: string;
  period_end: string;
  amount_minor: number;
  currency: string;
}

const INSERT = sql`INSERT INTO invoices (uuid, number, customer_uuid, service_uuid, kind, period_start, period_end, description, amount_minor,
    currency, due_date, status, created_at, updated_at)`;

/** `id` as text, zero-padded to at least 6 digits. */
const PADDED_ID = sql`CASE WHEN length(cast(id as text)) >= 6 THEN cast(id as text) ELSE substr('00000' || cast(id as text), length(cast(id as text))) END`;

type Made = { id: number; uuid: string; period_start: string; service_uuid: string };

/** Repository of the renewal invoices the billing run makes. */
export class RenewalInvoiceQueries {
  constructor(private readonly store: QueryStore, private readonly prefix = 'INV-') {}

  /**
   * Services whose next period is due for its renewal invoice: renewing (active, overdue or suspended, no
   * cancellation), next due date within the lead time (the product's `lead_days`, else the global one; the horizon
   * is the largest lead, for the index), and no live renewal invoice for that period yet.
   */
  private dueFrom(w: RenewalWindow): RawBuilder<unknown> {
    const { store } = this;
    const lead = sql`coalesce(${store.jsonText('bp.dunning', 'lead_days')}, cast(${String(w.lead)} as text))`;
    return sql`FROM service_billing b
      JOIN services s ON s.uuid = b.service_uuid
      JOIN products p ON p.uuid = s.product_uuid
      LEFT JOIN billing_products bp ON bp.product_uuid = s.product_uuid
      WHERE b.state IN ('active', 'overdue', 'suspended') AND b.cancel_at IS NULL AND b.next_due_date <= ${w.horizon}
        AND b.next_due_date <= ${store.addDays(sql`cast(${w.today} as text)`, lead)}
        AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.service_uuid = b.service_uuid AND i.kind = 'renewal'
          AND i.period_start = b.next_due_date AND i.status <> 'void')`;
  }

  private columns(w: RenewalWindow): RawBuilder<unknown> {
    const at = sql`cast(${w.at} as text)`;
    return sql`SELECT ${this.store.randomUuid()}, 'tmp:' || b.service_uuid || ':' || b.next_due_date, s.customer_uuid, b.service_uuid, 'renewal',
      b.next_due_date, b.next_period_end,
      CASE WHEN p.name <> '' THEN p.name ELSE s.module || ' ' || coalesce(${this.store.jsonText('p.product_data', 'plan_type')}, p.uuid) END
        || ' (' || b.billing_cycle || '), ' || b.next_due_date || ' to ' || b.next_period_end,
      b.recurring_minor, b.currency, b.next_due_date, 'unpaid', ${at}, ${at}`;
  }

  /**
   * Makes up to `limit` renewal invoices (one statement) of the services after `after` in (due date, service) order,
   * numbers them and queues their `invoice.renewal_created` events; call inside a transaction. Answers how many were
   * made, the new invoices a customer credit may pay, and where the next batch starts.
   */
  async makeBatch(window: RenewalWindow, limit: number, after: RenewalCursor = START): Promise<{ made: number; credited: string[]; next: RenewalCursor }> {
    const { rows } = await sql<Made>`${INSERT} ${this.columns(window)} ${this.dueFrom(window)}
        AND (b.next_due_date, b.service_uuid) > (${after.due}, ${after.service})
      ORDER BY b.next_due_date, b.service_uuid LIMIT ${limit} ON CONFLICT DO NOTHING RETURNING id, uuid, period_start, service_uuid`.execute(this.store.db);
    let next = after;
    for (const row of rows) if (row.period_start > next.due || (row.period_start === next.due && row.service_uuid > next.service)) next = { due: row.period_start, service: row.service_uuid };
    return { ...(await this.finish(window, rows)), next };
  }

  /** The same for one service (a plan change or an undone cancellation re-makes its renewal at once). */
  async makeFor(window: RenewalWindow, serviceUuid: string): Promise<{ made: number; credited: string[] }> {
    const { rows } = await sql<Made>`${INSERT} ${this.columns(window)} ${this.dueFrom(window)} AND b.service_uuid = ${serviceUuid}
      ON CONFLICT DO NOTHING RETURNING id, uuid, period_start, service_uuid`.execute(this.store.db);
    return this.finish(window, rows);
  }

  /** The renewals a run would make now (dry run), at most `limit`. */
  async dueRenewals(window: RenewalWindow, limit: number): Promise<DueRenewal[]> {
    const { rows } = await sql<DueRenewal>`SELECT b.service_uuid, s.customer_uuid, b.next_due_date AS period_start, b.next_period_end AS period_end,
      b.recurring_minor AS amount_minor, b.currency ${this.dueFrom(window)} ORDER BY b.next_due_date, b.service_uuid LIMIT ${limit}`.execute(this.store.db);
    return rows.map((r) => ({ ...r, amount_minor: Number(r.amount_minor) }));
  }

  /** Numbers the invoices just made, queues their events and answers those a customer credit may pay. */
  private async finish(window: RenewalWindow, made: Made[]): Promise<{ made: number; credited: string[] }> {
    const credited: Array<{ id: number; uuid: string }> = [];
    const at = sql`cast(${window.at} as text)`;
    for (let i = 0; i < made.length; i += PART) {
      const ids = sql.join(made.slice(i, i + PART).map((r) => r.id));
      await sql`UPDATE invoices SET number = cast(${this.prefix} as text) || substr(created_at, 1, 4) || '-' || ${PADDED_ID} WHERE id IN (${ids})`.execute(this.store.db);
      await sql`INSERT INTO billing_outbox (kind, name, payload, once_key, created_at)
        SELECT 'event', 'invoice.renewal_created',
          ${this.store.jsonObject({ invoice_uuid: sql`uuid`, period_start: sql`period_start`, period_end: sql`period_end`, at })},
          'invoice.renewal_created:' || uuid, ${at}
        FROM invoices WHERE id IN (${ids}) ON CONFLICT DO NOTHING`.execute(this.store.db);
      const { rows } = await sql<{ id: number; uuid: string }>`SELECT i.id, i.uuid FROM invoices i WHERE i.id IN (${ids}) AND i.amount_minor > 0
        AND (SELECT coalesce(sum(c.amount_minor), 0) FROM customer_credits c WHERE c.customer_uuid = i.customer_uuid AND c.currency = i.currency) > 0`.execute(this.store.db);
      credited.push(...rows);
    }
    return { made: made.length, credited: credited.sort((a, b) => a.id - b.id).map((r) => r.uuid) };
  }
}
