// Platform migration 6 `recurring-billing`: invoices gain a kind (order, renewal, change), a period, the credit applied
// and the status `void`, with one renewal invoice per (service, period); services gain their billing period and state;
// settings, dunning steps, the billing outbox, saved payment methods, customer credit and billing runs. Services sold
// before get their due date here (see `backfillServiceBilling`).
import type Database from 'better-sqlite3';
import type { Clock } from '../../../../shared/clock.ts';
import type { Migration } from '../../store/migrator.ts';
import { dateOf, nextDue, parseDate } from './calendar.ts';
import type { BillingCycle } from './schema.ts';

const INVOICE_KINDS = ['order', 'renewal', 'change'] as const;
export type InvoiceKind = (typeof INVOICE_KINDS)[number];

export const BILLING_STATES = ['pending', 'active', 'overdue', 'suspended', 'cancelled', 'terminated'] as const;
export type BillingState = (typeof BILLING_STATES)[number];

const TABLES = `
  CREATE TABLE invoices_v6 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid TEXT NOT NULL UNIQUE,
    number TEXT NOT NULL UNIQUE,
    order_uuid TEXT REFERENCES orders(uuid),
    customer_uuid TEXT REFERENCES customers(uuid),
    service_uuid TEXT REFERENCES services(uuid),
    kind TEXT NOT NULL DEFAULT 'order' CHECK (kind IN ('order', 'renewal', 'change')),
    period_start TEXT,
    period_end TEXT,
    change_product_uuid TEXT REFERENCES products(uuid),
    description TEXT NOT NULL,
    credit_minor INTEGER NOT NULL DEFAULT 0 CHECK (credit_minor >= 0),
    amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0),
    currency TEXT NOT NULL,
    due_date TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('unpaid', 'paid', 'failed', 'refunded', 'void')),
    refunded_minor INTEGER NOT NULL DEFAULT 0,
    paid_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  INSERT INTO invoices_v6 (id, uuid, number, order_uuid, customer_uuid, service_uuid, kind, description, amount_minor, currency, due_date,
      status, refunded_minor, paid_at, created_at, updated_at)
    SELECT id, uuid, number, order_uuid, customer_uuid, service_uuid, 'order', description, amount_minor, currency, due_date,
      status, refunded_minor, paid_at, created_at, updated_at FROM invoices;
  DROP TABLE invoices;
  ALTER TABLE invoices_v6 RENAME TO invoices;
  CREATE INDEX invoices_customer ON invoices(customer_uuid, created_at);
  CREATE INDEX invoices_status ON invoices(status, created_at);
  CREATE INDEX invoices_service ON invoices(service_uuid, created_at);
  -- The guard of the billing run: one renewal invoice per service and period (a voided one may be made again).
  CREATE UNIQUE INDEX invoices_renewal_period ON invoices(service_uuid, period_start) WHERE kind = 'renewal' AND status <> 'void';
  CREATE INDEX invoices_open_due ON invoices(due_date) WHERE status IN ('unpaid', 'failed');

  CREATE TABLE service_billing (
    service_uuid TEXT PRIMARY KEY REFERENCES services(uuid),
    billing_cycle TEXT NOT NULL CHECK (billing_cycle IN ('monthly', 'quarterly', 'semiannually', 'annually')),
    recurring_minor INTEGER NOT NULL CHECK (recurring_minor >= 0),
    currency TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'active', 'overdue', 'suspended', 'cancelled', 'terminated')),
    anchor_day INTEGER CHECK (anchor_day BETWEEN 1 AND 31),
    first_paid_at TEXT,
    next_due_date TEXT,
    next_period_end TEXT,
    cancel_at TEXT,
    cancel_requested_at TEXT,
    cancel_by TEXT,
    ended_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX service_billing_due ON service_billing(next_due_date, service_uuid) WHERE state IN ('active', 'overdue', 'suspended');
  CREATE INDEX service_billing_cancel ON service_billing(cancel_at) WHERE cancel_at IS NOT NULL;

  CREATE TABLE billing_settings (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    settings TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  ALTER TABLE billing_products ADD COLUMN dunning TEXT;

  CREATE TABLE billing_steps (
    invoice_uuid TEXT NOT NULL REFERENCES invoices(uuid),
    step TEXT NOT NULL,
    outcome TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    PRIMARY KEY (invoice_uuid, step)
  ) WITHOUT ROWID;

  CREATE TABLE billing_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('event', 'action')),
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    once_key TEXT NOT NULL UNIQUE,
    attempts INTEGER NOT NULL DEFAULT 0,
    claimed_until INTEGER,
    last_error TEXT,
    created_at TEXT NOT NULL,
    done_at TEXT
  );
  CREATE INDEX billing_outbox_open ON billing_outbox(id) WHERE done_at IS NULL;

  CREATE TABLE gateway_customers (
    gateway_uuid TEXT NOT NULL,
    customer_uuid TEXT NOT NULL REFERENCES customers(uuid),
    external_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (gateway_uuid, customer_uuid)
  ) WITHOUT ROWID;
  CREATE TABLE payment_methods (
    uuid TEXT PRIMARY KEY,
    customer_uuid TEXT NOT NULL REFERENCES customers(uuid),
    gateway_uuid TEXT NOT NULL,
    gateway TEXT NOT NULL,
    external_customer TEXT NOT NULL,
    external_id TEXT NOT NULL,
    label TEXT NOT NULL,
    brand TEXT,
    last4 TEXT,
    exp_month INTEGER,
    exp_year INTEGER,
    created_at TEXT NOT NULL,
    UNIQUE (customer_uuid, gateway_uuid)
  );

  CREATE TABLE customer_credits (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_uuid TEXT NOT NULL REFERENCES customers(uuid),
    currency TEXT NOT NULL,
    amount_minor INTEGER NOT NULL,
    reason TEXT NOT NULL,
    service_uuid TEXT,
    invoice_uuid TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (invoice_uuid, reason)
  );
  CREATE INDEX customer_credits_customer ON customer_credits(customer_uuid, currency);

  CREATE TABLE billing_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    slot TEXT UNIQUE,
    trigger TEXT NOT NULL CHECK (trigger IN ('schedule', 'admin')),
    task_id TEXT,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    summary TEXT
  );
`;

interface SoldService {
  service_uuid: string;
  billing_cycle: BillingCycle;
  amount_minor: number;
  currency: string;
  status: string;
  paid_at: string | null;
  provision_status: string;
}

/**
 * The due date of a service sold before recurring billing (the rule docs/billing.md documents): a service whose order
 * invoice was paid keeps its period anchored on the day of that payment, and its next due date is the first cycle
 * boundary on or after the day of the migration — so nobody is overdue because of the upgrade, and its first renewal
 * invoice comes with the lead time. An unpaid order stays `pending` (its payment starts the first period); a
 * terminated or refunded service is `terminated`. Services without an order (made by an admin, unpriced) get no
 * billing period.
 */
function backfillServiceBilling(db: Database.Database, clock: Clock): void {
  const now = clock.now().toISOString();
  const today = dateOf(clock.now());
  const sold = db.prepare(`SELECT o.service_uuid, o.billing_cycle, i.amount_minor, i.currency, i.status, i.paid_at, s.provision_status
    FROM orders o JOIN services s ON s.uuid = o.service_uuid
    JOIN invoices i ON i.id = (SELECT min(id) FROM invoices WHERE order_uuid = o.uuid)
    WHERE o.created_at = (SELECT max(created_at) FROM orders WHERE service_uuid = o.service_uuid)`).all() as SoldService[];
  const insert = db.prepare(`INSERT OR IGNORE INTO service_billing (service_uuid, billing_cycle, recurring_minor, currency, state, anchor_day,
      first_paid_at, next_due_date, next_period_end, created_at, updated_at)
    VALUES (@service_uuid, @billing_cycle, @amount_minor, @currency, @state, @anchor, @paid_at, @next, @end, @now, @now)`);
  for (const s of sold) {
    const base = { ...s, anchor: null as number | null, next: null as string | null, end: null as string | null, now };
    if (s.provision_status === 'terminated' || s.status === 'refunded') {
      insert.run({ ...base, state: 'terminated' });
    } else if (s.status === 'paid' && s.paid_at) {
      const start = s.paid_at.slice(0, 10);
      const anchor = parseDate(start).day;
      let next = nextDue(start, s.billing_cycle, anchor);
      while (next < today) next = nextDue(next, s.billing_cycle, anchor);
      insert.run({ ...base, state: 'active', anchor, next, end: nextDue(next, s.billing_cycle, anchor) });
    } else {
      insert.run({ ...base, state: 'pending', paid_at: null });
    }
  }
}

/** Version 6 of scope `platform`. */
export const RECURRING_BILLING_MIGRATION: Migration = {
  version: 6,
  name: 'recurring-billing',
  rebuildsTables: true,
  up: (db, clock) => {
    db.exec(TABLES);
    backfillServiceBilling(db, clock);
  },
};
