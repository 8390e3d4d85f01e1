// The billing run's set-based writes: a batch of renewal invoices made by one INSERT … SELECT (the UNIQUE index on
// (service, period) makes a second, concurrent or repeated attempt insert nothing), numbered, with their
// `invoice.renewal_created` rows in the billing outbox — all in the caller's transaction.
import type { Db } from '../db.ts';

/** A random UUID v4 in SQL (one per row). */
const UUID_SQL = `lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-'
  || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))`;

/**
 * Services whose next period is due for its renewal invoice on `@today`: renewing (active, overdue or suspended, no
 * cancellation), next due date within the lead time (the product's `lead_days`, else `@lead`; `@horizon` is the
 * largest lead, for the index), and no live renewal invoice for that period yet.
 */
const DUE_FROM = `FROM service_billing b
  JOIN services s ON s.uuid = b.service_uuid
  JOIN products p ON p.uuid = s.product_uuid
  LEFT JOIN billing_products bp ON bp.product_uuid = s.product_uuid
  WHERE b.state IN ('active', 'overdue', 'suspended') AND b.cancel_at IS NULL AND b.next_due_date <= @horizon
    AND b.next_due_date <= date(@today, '+' || coalesce(json_extract(bp.dunning, '$.lead_days'), @lead) || ' days')
    AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.service_uuid = b.service_uuid AND i.kind = 'renewal'
      AND i.period_start = b.next_due_date AND i.status <> 'void')`;

const COLUMNS = `SELECT ${UUID_SQL}, 'tmp:' || b.service_uuid || ':' || b.next_due_date, s.customer_uuid, b.service_uuid, 'renewal',
    b.next_due_date, b.next_period_end,
    CASE WHEN p.name <> '' THEN p.name ELSE s.module || ' ' || coalesce(json_extract(p.product_data, '$.plan_type'), p.uuid) END
      || ' (' || b.billing_cycle || '), '
      || b.next_due_date || ' to ' || b.next_period_end,
    b.recurring_minor, b.currency, b.next_due_date, 'unpaid', @at, @at`;

const INSERT = `INSERT INTO invoices (uuid, number, customer_uuid, service_uuid, kind, period_start, period_end, description, amount_minor,
    currency, due_date, status, created_at, updated_at)`;

/** What selects a batch: the day, the lead times, the time stamp written, the invoice number prefix. */
export interface RenewalWindow {
  today: string;
  /** The global lead time (days) and the largest of every product's. */
  lead: number;
  horizon: string;
  at: string;
}

/** Where a batch of the run starts: after this (next due date, service). */
export interface RenewalCursor {
  due: string;
  service: string;
}

const START: RenewalCursor = { due: '', service: '' };

/** A renewal the run would make (dry run). */
export interface DueRenewal {
  service_uuid: string;
  customer_uuid: string | null;
  period_start: string;
  period_end: string;
  amount_minor: number;
  currency: string;
}

/** Repository of the renewal invoices the billing run makes. */
export class RenewalInvoiceRepository {
  private readonly insertBatch;
  private readonly insertOne;
  private readonly number;
  private readonly outbox;
  private readonly maxId;
  private readonly due;
  private readonly credited;

  constructor(private readonly db: Db, private readonly prefix = 'INV-') {
    // Keyset paging: each batch starts after the last (due date, service) the previous one looked at.
    this.insertBatch = db.prepare(`${INSERT} ${COLUMNS} ${DUE_FROM} AND (b.next_due_date, b.service_uuid) > (@after_due, @after_service)
      ORDER BY b.next_due_date, b.service_uuid LIMIT @limit ON CONFLICT DO NOTHING RETURNING period_start, service_uuid`);
    this.insertOne = db.prepare(`${INSERT} ${COLUMNS} ${DUE_FROM} AND b.service_uuid = @service ON CONFLICT DO NOTHING`);
    this.number = db.prepare(`UPDATE invoices SET number = @prefix || substr(created_at, 1, 4) || '-' || printf('%06d', id)
      WHERE id > @after AND number LIKE 'tmp:%'`);
    this.outbox = db.prepare(`INSERT INTO billing_outbox (kind, name, payload, once_key, created_at)
      SELECT 'event', 'invoice.renewal_created', json_object('invoice_uuid', uuid, 'period_start', period_start, 'period_end', period_end, 'at', @at),
        'invoice.renewal_created:' || uuid, @at
      FROM invoices WHERE id > @after AND kind = 'renewal' ON CONFLICT DO NOTHING`);
    this.maxId = db.prepare('SELECT coalesce(max(id), 0) AS id FROM invoices');
    this.due = db.prepare(`SELECT b.service_uuid, s.customer_uuid, b.next_due_date AS period_start, b.next_period_end AS period_end,
      b.recurring_minor AS amount_minor, b.currency ${DUE_FROM} ORDER BY b.next_due_date, b.service_uuid LIMIT @limit`);
    this.credited = db.prepare(`SELECT i.uuid FROM invoices i WHERE i.id > @after AND i.kind = 'renewal' AND i.amount_minor > 0
      AND (SELECT coalesce(sum(c.amount_minor), 0) FROM customer_credits c WHERE c.customer_uuid = i.customer_uuid AND c.currency = i.currency) > 0`);
  }

  /**
   * Makes up to `limit` renewal invoices (one statement) of the services after `after` in (due date, service) order,
   * numbers them and queues their `invoice.renewal_created` events; call inside a transaction. Answers how many were
   * made, the new invoices a customer credit may pay, and where the next batch starts.
   */
  makeBatch(window: RenewalWindow, limit: number, after: RenewalCursor = START): { made: number; credited: string[]; next: RenewalCursor } {
    let next = after;
    const out = this.make(window, () => {
      const rows = this.insertBatch.all({ ...window, limit, after_due: after.due, after_service: after.service }) as Array<{ period_start: string; service_uuid: string }>;
      for (const row of rows) if (row.period_start > next.due || (row.period_start === next.due && row.service_uuid > next.service)) next = { due: row.period_start, service: row.service_uuid };
      return rows.length;
    });
    return { ...out, next };
  }

  /** The same for one service (a plan change or an undone cancellation re-makes its renewal at once). */
  makeFor(window: RenewalWindow, serviceUuid: string): { made: number; credited: string[] } {
    return this.make(window, () => this.insertOne.run({ ...window, service: serviceUuid }).changes);
  }

  /** The renewals a run would make now (dry run), at most `limit`. */
  dueRenewals(window: RenewalWindow, limit: number): DueRenewal[] {
    return this.due.all({ ...window, limit }) as DueRenewal[];
  }

  private make(window: RenewalWindow, insert: () => number): { made: number; credited: string[] } {
    const after = (this.maxId.get() as { id: number }).id;
    const made = insert();
    if (made === 0) return { made, credited: [] };
    this.number.run({ prefix: this.prefix, after });
    this.outbox.run({ after, at: window.at });
    return { made, credited: (this.credited.all({ after }) as Array<{ uuid: string }>).map((r) => r.uuid) };
  }
}
