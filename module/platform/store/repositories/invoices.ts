// Orders and invoices: an order links customer, product, cycle and service; an invoice carries number, amount (minor
// units), currency, due date and status unpaid/paid/failed/refunded.
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import type { InvoiceKind } from '../../services/billing/recurring-schema.ts';
import type { BillingCycle, InvoiceStatus } from '../../services/billing/schema.ts';
import type { Db } from '../db.ts';
import { statement } from '../statement-cache.ts';

export interface OrderRow {
  uuid: string;
  customer_uuid: string;
  product_uuid: string;
  service_uuid: string;
  billing_cycle: BillingCycle;
  created_at: string;
}

export interface InvoiceRow {
  uuid: string;
  number: string;
  order_uuid: string | null;
  customer_uuid: string | null;
  service_uuid: string | null;
  /** `order` (the first invoice of a service), `renewal` (one period) or `change` (a prorated plan change). */
  kind: InvoiceKind;
  /** The period a renewal pays for, `[period_start, period_end)`; null for other kinds. */
  period_start: string | null;
  period_end: string | null;
  /** The product a `change` invoice moves the service to once paid. */
  change_product_uuid: string | null;
  description: string;
  /** Customer credit applied (minor units); `amount_minor` is what is left to pay. */
  credit_minor: number;
  amount_minor: number;
  currency: string;
  due_date: string;
  status: InvoiceStatus;
  refunded_minor: number;
  paid_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface InvoiceFilter {
  status?: InvoiceStatus;
  customer?: string;
  service?: string;
  /** Created on or after this day (YYYY-MM-DD, UTC). */
  from?: string;
  /** Created on or before this day (YYYY-MM-DD, UTC). */
  to?: string;
}

const INVOICE_COLUMNS = `uuid, number, order_uuid, customer_uuid, service_uuid, kind, period_start, period_end, change_product_uuid, description,
  credit_minor, amount_minor, currency, due_date, status, refunded_minor, paid_at, created_at, updated_at`;

/** A new invoice: an order's by default; renewals and plan changes name their kind and period or product. */
export type NewInvoice = Pick<InvoiceRow, 'order_uuid' | 'customer_uuid' | 'service_uuid' | 'description' | 'amount_minor' | 'currency' | 'due_date'> &
  Partial<Pick<InvoiceRow, 'kind' | 'period_start' | 'period_end' | 'change_product_uuid'>>;

/** The day after `day` (YYYY-MM-DD), as the start of that day in ISO form. */
function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString();
}

/** Repository of `orders` and `invoices`. Invoice numbers are `<prefix><year>-<id, 6 digits>`, unique. */
export class InvoiceRepository {
  private readonly getStmt;

  constructor(private readonly db: Db, private readonly clock: Clock = systemClock, private readonly prefix = 'INV-') {
    this.getStmt = db.prepare(`SELECT ${INVOICE_COLUMNS} FROM invoices WHERE uuid = ?`);
  }

  createOrder(input: Omit<OrderRow, 'uuid' | 'created_at'>): OrderRow {
    const row: OrderRow = { uuid: randomUUID(), ...input, created_at: this.clock.now().toISOString() };
    statement(this.db, 'INSERT INTO orders (uuid, customer_uuid, product_uuid, service_uuid, billing_cycle, created_at) VALUES (@uuid, @customer_uuid, @product_uuid, @service_uuid, @billing_cycle, @created_at)')
      .run(row);
    return row;
  }

  /** A page of orders (newest first) and their total. */
  listOrders(limit: number, offset: number): { rows: OrderRow[]; total: number } {
    const rows = statement(this.db, 'SELECT * FROM orders ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?').all(limit, offset) as OrderRow[];
    const { n } = statement(this.db, 'SELECT COUNT(*) AS n FROM orders').get() as { n: number };
    return { rows, total: n };
  }

  /** The first invoice of an order. */
  invoiceOfOrder(orderUuid: string): InvoiceRow | null {
    return (statement(this.db, `SELECT ${INVOICE_COLUMNS} FROM invoices WHERE order_uuid = ? ORDER BY id LIMIT 1`).get(orderUuid) as InvoiceRow | undefined) ?? null;
  }

  order(uuid: string): OrderRow | null {
    return (statement(this.db, 'SELECT * FROM orders WHERE uuid = ?').get(uuid) as OrderRow | undefined) ?? null;
  }

  /** Inserts an unpaid invoice and gives it its number (call inside a transaction with the order). */
  createInvoice(input: NewInvoice): InvoiceRow {
    const now = this.clock.now();
    const at = now.toISOString();
    const uuid = randomUUID();
    const { lastInsertRowid } = statement(this.db, `INSERT INTO invoices (uuid, number, order_uuid, customer_uuid, service_uuid, kind, period_start, period_end, change_product_uuid,
          description, amount_minor, currency, due_date, status, created_at, updated_at)
        VALUES (@uuid, @uuid, @order_uuid, @customer_uuid, @service_uuid, @kind, @period_start, @period_end, @change_product_uuid,
          @description, @amount_minor, @currency, @due_date, 'unpaid', @at, @at)`)
      .run({ kind: 'order', period_start: null, period_end: null, change_product_uuid: null, ...input, uuid, at });
    const number = `${this.prefix}${now.getUTCFullYear()}-${String(lastInsertRowid).padStart(6, '0')}`;
    statement(this.db, 'UPDATE invoices SET number = ? WHERE uuid = ?').run(number, uuid);
    return this.get(uuid)!;
  }

  get(uuid: string): InvoiceRow | null {
    return (this.getStmt.get(uuid) as InvoiceRow | undefined) ?? null;
  }

  byNumber(number: string): InvoiceRow | null {
    return (statement(this.db, `SELECT ${INVOICE_COLUMNS} FROM invoices WHERE number = ?`).get(number) as InvoiceRow | undefined) ?? null;
  }

  /** A page of invoices (newest first) and the total under the filter. */
  list(filter: InvoiceFilter, limit: number, offset: number): { rows: InvoiceRow[]; total: number } {
    const where = `WHERE (@status IS NULL OR status = @status) AND (@customer IS NULL OR customer_uuid = @customer)
      AND (@service IS NULL OR service_uuid = @service) AND (@from IS NULL OR created_at >= @from) AND (@to IS NULL OR created_at < @to)`;
    const params = {
      status: filter.status ?? null, customer: filter.customer ?? null, service: filter.service ?? null,
      from: filter.from ?? null, to: filter.to ? nextDay(filter.to) : null,
    };
    const rows = statement(this.db, `SELECT ${INVOICE_COLUMNS} FROM invoices ${where} ORDER BY id DESC LIMIT @limit OFFSET @offset`)
      .all({ ...params, limit, offset }) as InvoiceRow[];
    const { n } = statement(this.db, `SELECT COUNT(*) AS n FROM invoices ${where}`).get(params) as { n: number };
    return { rows, total: n };
  }

  /** Moves the invoice to `status`; `paid` stamps paid_at. Returns false when it was not in one of `from`. */
  setStatus(uuid: string, status: InvoiceStatus, from: readonly InvoiceStatus[]): boolean {
    const at = this.clock.now().toISOString();
    const marks = from.map(() => '?').join(', ');
    return statement(this.db, `UPDATE invoices SET status = ?, paid_at = CASE WHEN ? = 'paid' THEN ? ELSE paid_at END, updated_at = ? WHERE uuid = ? AND status IN (${marks})`)
      .run(status, status, at, at, uuid, ...from).changes === 1;
  }

  /** Takes `credit` (minor units) off what is left to pay of an unpaid invoice. */
  applyCredit(uuid: string, credit: number): void {
    statement(this.db, `UPDATE invoices SET credit_minor = credit_minor + @credit, amount_minor = amount_minor - @credit, updated_at = @at
      WHERE uuid = @uuid AND status = 'unpaid' AND amount_minor >= @credit`).run({ uuid, credit, at: this.clock.now().toISOString() });
  }

  /** Open (unpaid or failed) invoices of a service, oldest due first; `kinds` narrows them. */
  openOfService(serviceUuid: string, kinds: readonly InvoiceKind[] = ['order', 'renewal', 'change']): InvoiceRow[] {
    return statement(this.db, `SELECT ${INVOICE_COLUMNS} FROM invoices WHERE service_uuid = ? AND status IN ('unpaid', 'failed')
      AND kind IN (${kinds.map(() => '?').join(', ')}) ORDER BY due_date, id`).all(serviceUuid, ...kinds) as InvoiceRow[];
  }

  /** Voids the open invoices of a service (of `kinds`, due on or after `dueFrom` when given); returns their uuids. */
  voidOpen(serviceUuid: string, kinds: readonly InvoiceKind[], dueFrom: string | null = null): string[] {
    const rows = statement(this.db, `UPDATE invoices SET status = 'void', updated_at = ? WHERE service_uuid = ? AND status IN ('unpaid', 'failed')
      AND kind IN (${kinds.map(() => '?').join(', ')}) AND (? IS NULL OR due_date >= ?) RETURNING uuid`)
      .all(this.clock.now().toISOString(), serviceUuid, ...kinds, dueFrom, dueFrom) as Array<{ uuid: string }>;
    return rows.map((r) => r.uuid);
  }

  /** Paid order invoices whose service is still `pending` (a process stopped before queueing its create()). */
  paidOrdersOfPendingServices(): InvoiceRow[] {
    return statement(this.db, `SELECT ${INVOICE_COLUMNS.split(',').map((c) => `i.${c.trim()}`).join(', ')} FROM invoices i JOIN services s ON s.uuid = i.service_uuid
      WHERE i.status = 'paid' AND i.kind = 'order' AND s.provision_status = 'pending'`).all() as InvoiceRow[];
  }

  addRefunded(uuid: string, amountMinor: number): void {
    statement(this.db, 'UPDATE invoices SET refunded_minor = refunded_minor + ?, updated_at = ? WHERE uuid = ?').run(amountMinor, this.clock.now().toISOString(), uuid);
  }
}
