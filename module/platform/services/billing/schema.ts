// Platform migration 5 `orders-invoices`: prices per product and billing cycle, the refund policy per product, orders,
// invoices, transactions (payments, failures, refunds) and the gateway events handled once.
import type { Migration } from '../../store/migrator.ts';

export const BILLING_CYCLES = ['monthly', 'quarterly', 'semiannually', 'annually'] as const;
export type BillingCycle = (typeof BILLING_CYCLES)[number];

/** `void`: cancelled before payment (the service ended, or a plan change replaced it); never payable again. */
export const INVOICE_STATUSES = ['unpaid', 'paid', 'failed', 'refunded', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** What a full refund of a paid invoice does to its service (per product). */
export const REFUND_ACTIONS = ['terminate', 'suspend'] as const;
export type RefundAction = (typeof REFUND_ACTIONS)[number];

const TRANSACTION_KINDS = ['payment', 'failure', 'refund'] as const;
export type TransactionKind = (typeof TRANSACTION_KINDS)[number];

/** Version 5 of scope `platform`. Amounts are integers in the currency's minor unit. */
export const ORDERS_INVOICES_MIGRATION: Migration = {
  version: 5,
  name: 'orders-invoices',
  up: `
    CREATE TABLE billing_products (
      product_uuid TEXT PRIMARY KEY REFERENCES products(uuid),
      refund_action TEXT NOT NULL DEFAULT 'terminate' CHECK (refund_action IN ('terminate', 'suspend')),
      updated_at TEXT NOT NULL
    );
    CREATE TABLE prices (
      product_uuid TEXT NOT NULL REFERENCES products(uuid),
      billing_cycle TEXT NOT NULL CHECK (billing_cycle IN ('monthly', 'quarterly', 'semiannually', 'annually')),
      amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0),
      currency TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (product_uuid, billing_cycle)
    );
    CREATE TABLE orders (
      uuid TEXT PRIMARY KEY,
      customer_uuid TEXT NOT NULL REFERENCES customers(uuid),
      product_uuid TEXT NOT NULL REFERENCES products(uuid),
      service_uuid TEXT NOT NULL REFERENCES services(uuid),
      billing_cycle TEXT NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE INDEX orders_customer ON orders(customer_uuid, created_at);
    CREATE TABLE invoices (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      uuid TEXT NOT NULL UNIQUE,
      number TEXT NOT NULL UNIQUE,
      order_uuid TEXT REFERENCES orders(uuid),
      customer_uuid TEXT REFERENCES customers(uuid),
      service_uuid TEXT REFERENCES services(uuid),
      description TEXT NOT NULL,
      amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0),
      currency TEXT NOT NULL,
      due_date TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('unpaid', 'paid', 'failed', 'refunded')),
      refunded_minor INTEGER NOT NULL DEFAULT 0,
      paid_at TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE INDEX invoices_customer ON invoices(customer_uuid, created_at);
    CREATE INDEX invoices_status ON invoices(status, created_at);
    CREATE TABLE transactions (
      uuid TEXT PRIMARY KEY,
      invoice_uuid TEXT NOT NULL REFERENCES invoices(uuid),
      kind TEXT NOT NULL CHECK (kind IN ('payment', 'failure', 'refund')),
      gateway TEXT NOT NULL,
      gateway_uuid TEXT,
      external_id TEXT,
      parent_uuid TEXT REFERENCES transactions(uuid),
      amount_minor INTEGER NOT NULL,
      currency TEXT NOT NULL,
      refunded_minor INTEGER NOT NULL DEFAULT 0,
      note TEXT NOT NULL DEFAULT '',
      created_at TEXT NOT NULL
    );
    CREATE INDEX transactions_invoice ON transactions(invoice_uuid, created_at);
    CREATE TABLE payment_events (
      gateway_uuid TEXT NOT NULL,
      event_id TEXT NOT NULL,
      type TEXT NOT NULL,
      outcome TEXT NOT NULL,
      invoice_uuid TEXT,
      created_at TEXT NOT NULL,
      PRIMARY KEY (gateway_uuid, event_id)
    );
  `,
};
