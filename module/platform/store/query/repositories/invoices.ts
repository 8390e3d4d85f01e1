// Orders and invoices over the query layer: an order links customer, product, cycle and service; an invoice carries
// number, amount (minor units), currency, due date and status unpaid/paid/failed/refunded/void. Moving an invoice's
// status is a conditional write (the one caller whose UPDATE matched wins), so a payment lands once across processes.
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import type { InvoiceKind } from '../../../services/billing/recurring-schema.ts';
import type { BillingCycle, InvoiceStatus } from '../../../services/billing/schema.ts';
import type { QueryStore } from '../query-store.ts';

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

/** The columns of an invoice row (the id stays internal). */
const INVOICE_COLUMNS = [
  'uuid', 'number', 'order_uuid', 'customer_uuid', 'service_uuid', 'kind', 'period_start', 'period_end', 'change_product_uuid', 'description',
  'credit_minor', 'amount_minor', 'currency', 'due_date', 'status', 'refunded_minor', 'paid_at', 'created_at', 'updated_at',
] as const;

/** A new invoice: an order's by default; renewals and plan changes name their kind and period or product. */
export type NewInvoice = Pick<InvoiceRow, 'order_uuid' | 'customer_uuid' | 'service_uuid' | 'description' | 'amount_minor' | 'currency' | 'due_date'> &
  Partial<Pick<InvoiceRow, 'kind' | 'period_start' | 'period_end' | 'change_product_uuid'>>;

/** The day after `day` (YYYY-MM-DD), as the start of that day in ISO form. */
function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString();
}

/** Statuses of an invoice still to be paid. */
export const OPEN = ['unpaid', 'failed'] as const;

/** Repository of `orders` and `invoices`. Invoice numbers are `<prefix><year>-<id, 6 digits>`, unique. */
export class InvoiceQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock, private readonly prefix = 'INV-') {}

  async createOrder(input: Omit<OrderRow, 'uuid' | 'created_at'>): Promise<OrderRow> {
    const row: OrderRow = { uuid: randomUUID(), ...input, created_at: this.clock.now().toISOString() };
    await this.store.db.insertInto('orders').values(row).execute();
    return row;
  }

  /** A page of orders (newest first, ties by uuid) and their total. */
  async listOrders(limit: number, offset: number): Promise<{ rows: OrderRow[]; total: number }> {
    const rows = await this.store.db.selectFrom('orders').selectAll().orderBy('created_at', 'desc').orderBy('uuid', 'desc').limit(limit).offset(offset).execute();
    const { n } = await this.store.db.selectFrom('orders').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows: rows as OrderRow[], total: Number(n) };
  }

  /** The first invoice of an order. */
  async invoiceOfOrder(orderUuid: string): Promise<InvoiceRow | null> {
    const row = await this.store.db.selectFrom('invoices').select(INVOICE_COLUMNS).where('order_uuid', '=', orderUuid).orderBy('id').limit(1).executeTakeFirst();
    return (row as InvoiceRow | undefined) ?? null;
  }

  async order(uuid: string): Promise<OrderRow | null> {
    return ((await this.store.db.selectFrom('orders').selectAll().where('uuid', '=', uuid).executeTakeFirst()) as OrderRow | undefined) ?? null;
  }

  /** Inserts an unpaid invoice and gives it its number (call inside a transaction with the order). */
  async createInvoice(input: NewInvoice): Promise<InvoiceRow> {
    const now = this.clock.now();
    const at = now.toISOString();
    const uuid = randomUUID();
    const { id } = await this.store.db.insertInto('invoices').values({
      kind: 'order', period_start: null, period_end: null, change_product_uuid: null, ...input,
      uuid, number: uuid, status: 'unpaid', created_at: at, updated_at: at,
    }).returning('id').executeTakeFirstOrThrow();
    const number = `${this.prefix}${now.getUTCFullYear()}-${String(id).padStart(6, '0')}`;
    await this.store.db.updateTable('invoices').set({ number }).where('uuid', '=', uuid).execute();
    return (await this.get(uuid))!;
  }

  async get(uuid: string): Promise<InvoiceRow | null> {
    return ((await this.store.db.selectFrom('invoices').select(INVOICE_COLUMNS).where('uuid', '=', uuid).executeTakeFirst()) as InvoiceRow | undefined) ?? null;
  }

  async byNumber(number: string): Promise<InvoiceRow | null> {
    return ((await this.store.db.selectFrom('invoices').select(INVOICE_COLUMNS).where('number', '=', number).executeTakeFirst()) as InvoiceRow | undefined) ?? null;
  }

  /** A page of invoices (newest first) and the total under the filter. */
  async list(filter: InvoiceFilter, limit: number, offset: number): Promise<{ rows: InvoiceRow[]; total: number }> {
    let from = this.store.db.selectFrom('invoices');
    if (filter.status !== undefined) from = from.where('status', '=', filter.status);
    if (filter.customer !== undefined) from = from.where('customer_uuid', '=', filter.customer);
    if (filter.service !== undefined) from = from.where('service_uuid', '=', filter.service);
    if (filter.from !== undefined) from = from.where('created_at', '>=', filter.from);
    if (filter.to !== undefined) from = from.where('created_at', '<', nextDay(filter.to));
    const rows = await from.select(INVOICE_COLUMNS).orderBy('id', 'desc').limit(limit).offset(offset).execute();
    const { n } = await from.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows: rows as InvoiceRow[], total: Number(n) };
  }

  /** Moves the invoice to `status` from one of `from`; `paid` stamps paid_at. False when another caller moved it first. */
  async setStatus(uuid: string, status: InvoiceStatus, from: readonly InvoiceStatus[]): Promise<boolean> {
    const at = this.clock.now().toISOString();
    const result = await this.store.db.updateTable('invoices')
      .set({ status, updated_at: at, ...(status === 'paid' ? { paid_at: at } : {}) })
      .where('uuid', '=', uuid).where('status', 'in', [...from]).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Takes `credit` (minor units) off what is left to pay of an unpaid invoice; false when it was not unpaid or owed less. */
  async applyCredit(uuid: string, credit: number): Promise<boolean> {
    const result = await this.store.db.updateTable('invoices')
      .set((eb) => ({ credit_minor: eb('credit_minor', '+', credit), amount_minor: eb('amount_minor', '-', credit), updated_at: this.clock.now().toISOString() }))
      .where('uuid', '=', uuid).where('status', '=', 'unpaid').where('amount_minor', '>=', credit).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Open (unpaid or failed) invoices of a service, oldest due first; `kinds` narrows them. */
  async openOfService(serviceUuid: string, kinds: readonly InvoiceKind[] = ['order', 'renewal', 'change']): Promise<InvoiceRow[]> {
    return (await this.store.db.selectFrom('invoices').select(INVOICE_COLUMNS).where('service_uuid', '=', serviceUuid)
      .where('status', 'in', [...OPEN]).where('kind', 'in', [...kinds]).orderBy('due_date').orderBy('id').execute()) as InvoiceRow[];
  }

  /** Voids the open invoices of a service (of `kinds`, due on or after `dueFrom` when given); returns their uuids. */
  async voidOpen(serviceUuid: string, kinds: readonly InvoiceKind[], dueFrom: string | null = null): Promise<string[]> {
    let query = this.store.db.updateTable('invoices').set({ status: 'void', updated_at: this.clock.now().toISOString() })
      .where('service_uuid', '=', serviceUuid).where('status', 'in', [...OPEN]).where('kind', 'in', [...kinds]);
    if (dueFrom !== null) query = query.where('due_date', '>=', dueFrom);
    return (await query.returning('uuid').execute()).map((r) => r.uuid);
  }

  /** Paid order invoices whose service is still `pending` (a process stopped before queueing its create()). */
  async paidOrdersOfPendingServices(): Promise<InvoiceRow[]> {
    return (await this.store.db.selectFrom('invoices as i').innerJoin('services as s', 's.uuid', 'i.service_uuid')
      .select(INVOICE_COLUMNS.map((c) => `i.${c}` as const))
      .where('i.status', '=', 'paid').where('i.kind', '=', 'order').where('s.provision_status', '=', 'pending').orderBy('i.id').execute()) as InvoiceRow[];
  }

  async addRefunded(uuid: string, amountMinor: number): Promise<void> {
    await this.store.db.updateTable('invoices').set((eb) => ({ refunded_minor: eb('refunded_minor', '+', amountMinor), updated_at: this.clock.now().toISOString() }))
      .where('uuid', '=', uuid).execute();
  }

  /** The number of invoices (tests, benches). */
  async count(): Promise<number> {
    const { n } = await this.store.db.selectFrom('invoices').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(n);
  }
}

