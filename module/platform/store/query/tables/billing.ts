// Row types of the tables of billing (orders, invoices, transactions, gateway events, periods, runs, steps, outbox,
// credits, payment methods, settings), as both engines store them.
import type { Generated } from 'kysely';

export interface OrdersTable {
  uuid: string;
  customer_uuid: string;
  product_uuid: string;
  service_uuid: string;
  billing_cycle: string;
  created_at: string;
}

export interface InvoicesTable {
  id: Generated<number>;
  uuid: string;
  number: string;
  order_uuid: string | null;
  customer_uuid: string | null;
  service_uuid: string | null;
  kind: Generated<string>;
  period_start: string | null;
  period_end: string | null;
  change_product_uuid: string | null;
  description: string;
  credit_minor: Generated<number>;
  amount_minor: number;
  currency: string;
  due_date: string;
  status: string;
  refunded_minor: Generated<number>;
  paid_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface TransactionsTable {
  uuid: string;
  invoice_uuid: string;
  kind: string;
  gateway: string;
  gateway_uuid: string | null;
  external_id: string | null;
  parent_uuid: string | null;
  amount_minor: number;
  currency: string;
  refunded_minor: Generated<number>;
  note: Generated<string>;
  created_at: string;
}

export interface PaymentEventsTable {
  gateway_uuid: string;
  event_id: string;
  type: string;
  outcome: string;
  invoice_uuid: string | null;
  created_at: string;
}

export interface ServiceBillingTable {
  service_uuid: string;
  billing_cycle: string;
  recurring_minor: number;
  currency: string;
  state: string;
  anchor_day: number | null;
  first_paid_at: string | null;
  next_due_date: string | null;
  next_period_end: string | null;
  cancel_at: string | null;
  cancel_requested_at: string | null;
  cancel_by: string | null;
  ended_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface BillingSettingsTable {
  id: number;
  settings: string;
  updated_at: string;
}

export interface BillingStepsTable {
  invoice_uuid: string;
  step: string;
  outcome: Generated<string>;
  created_at: string;
}

export interface BillingOutboxTable {
  id: Generated<number>;
  kind: string;
  name: string;
  /** JSON text. */
  payload: string;
  once_key: string;
  attempts: Generated<number>;
  /** Milliseconds since the epoch. */
  claimed_until: number | null;
  last_error: string | null;
  created_at: string;
  done_at: string | null;
}

export interface GatewayCustomersTable {
  gateway_uuid: string;
  customer_uuid: string;
  external_id: string;
  created_at: string;
}

export interface PaymentMethodsTable {
  uuid: string;
  customer_uuid: string;
  gateway_uuid: string;
  gateway: string;
  external_customer: string;
  external_id: string;
  label: string;
  brand: string | null;
  last4: string | null;
  exp_month: number | null;
  exp_year: number | null;
  created_at: string;
}

export interface CustomerCreditsTable {
  id: Generated<number>;
  customer_uuid: string;
  currency: string;
  amount_minor: number;
  reason: string;
  service_uuid: string | null;
  invoice_uuid: string | null;
  created_at: string;
}

export interface BillingRunsTable {
  id: Generated<number>;
  slot: string | null;
  trigger: string;
  task_id: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  summary: string | null;
}

/** The tables of billing by name. */
export interface BillingTables {
  orders: OrdersTable;
  invoices: InvoicesTable;
  transactions: TransactionsTable;
  payment_events: PaymentEventsTable;
  service_billing: ServiceBillingTable;
  billing_settings: BillingSettingsTable;
  billing_steps: BillingStepsTable;
  billing_outbox: BillingOutboxTable;
  gateway_customers: GatewayCustomersTable;
  payment_methods: PaymentMethodsTable;
  customer_credits: CustomerCreditsTable;
  billing_runs: BillingRunsTable;
}
