// The client area's per-request reads, each one joined query compiled once per store (either engine): the session of a
// cookie with its customer (kept while the store is unchanged), and a service page's service, product, billing period
// and open invoices.
import type { SecretBox } from '../../../../../shared/secret-box.ts';
import type { InvoiceKind } from '../../../services/billing/recurring-schema.ts';
import type { QueryStore } from '../query-store.ts';
import { MarkedCache, markedRead } from '../marked-cache.ts';
import { CompiledRead } from './compiled-read.ts';
import { OPEN } from './invoices.ts';
import type { ServiceBillingRow } from './service-billing.ts';
import { openServiceData } from './services.ts';

/** A `web_sessions` row with the customer its subject names (null when the kind is not `customer` or the account is gone). */
export interface SessionWithCustomer {
  kind: 'admin' | 'customer';
  subject: string;
  seen_at: number;
  expires_at: number;
  customer: { uuid: string; email: string; name: string } | null;
}

/** What a service page shows of its service (service data opened; provision data is not read). */
export interface PageService {
  uuid: string;
  product_uuid: string;
  module_name: string;
  service_data: Record<string, unknown>;
  provision_status: string;
  status_reason: string | null;
  customer_uuid: string | null;
  created_at: string;
  updated_at: string;
}

/** An open invoice of the service (unpaid or failed), as stored. */
export interface PageInvoice {
  uuid: string;
  number: string;
  kind: string;
  due_date: string;
  amount_minor: number;
  currency: string;
  status: string;
}

/** A service page's read: the service, its product, its billing period and open invoices (oldest due first). */
export interface ServicePageRead {
  service: PageService;
  product: { uuid: string; module: string; name: string; product_data: Record<string, unknown> } | null;
  billing: ServiceBillingRow | null;
  open_invoices: PageInvoice[];
}

/** The invoice kinds a billing view lists as open (BillingPeriods.view, InvoiceQueries.openOfService's default). */
const OPEN_KINDS: readonly InvoiceKind[] = ['order', 'renewal', 'change'];

const BILLING_COLUMNS = [
  'service_uuid', 'billing_cycle', 'recurring_minor', 'currency', 'state', 'anchor_day', 'first_paid_at', 'next_due_date', 'next_period_end',
  'cancel_at', 'cancel_requested_at', 'cancel_by', 'ended_at', 'created_at', 'updated_at',
] as const;

/** Each billing column with its alias in the page's read (`b_<column>`), built once. */
const BILLING_ALIASES = BILLING_COLUMNS.map((column) => [column, `b_${column}`] as const);

type Row = Record<string, unknown>;

/** The client area's joined reads on one store. */
export class ClientPageQueries {
  private readonly session: CompiledRead<Row>;
  private readonly page: CompiledRead<Row>;
  /** Sessions with their customer as read, per digest, while the store is unchanged (`QueryStore.changeMark`). */
  private readonly sessions = new MarkedCache<SessionWithCustomer>();

  constructor(private readonly store: QueryStore, private readonly box: SecretBox) {
    const { db } = store;
    this.session = new CompiledRead(store, (digest) => db.selectFrom('web_sessions as w')
      .leftJoin('customers as c', (join) => join.onRef('c.uuid', '=', 'w.subject').on('w.kind', '=', 'customer'))
      .select(['w.kind', 'w.subject', 'w.seen_at', 'w.expires_at', 'c.uuid as c_uuid', 'c.email as c_email', 'c.name as c_name'])
      .where('w.digest', '=', digest));
    this.page = new CompiledRead(store, (uuid) => db.selectFrom('services as s')
      .leftJoin('products as p', 'p.uuid', 's.product_uuid')
      .leftJoin('service_billing as b', 'b.service_uuid', 's.uuid')
      .leftJoin('invoices as i', (join) => join.onRef('i.service_uuid', '=', 's.uuid').on('i.status', 'in', [...OPEN]).on('i.kind', 'in', [...OPEN_KINDS]))
      .select([
        's.uuid', 's.product_uuid', 's.module', 's.service_data', 's.provision_status', 's.status_reason', 's.customer_uuid', 's.created_at', 's.updated_at',
        'p.uuid as p_uuid', 'p.module as p_module', 'p.name as p_name', 'p.product_data as p_product_data',
        'i.uuid as i_uuid', 'i.number as i_number', 'i.kind as i_kind', 'i.due_date as i_due_date', 'i.amount_minor as i_amount_minor',
        'i.currency as i_currency', 'i.status as i_status',
      ])
      .select(BILLING_COLUMNS.map((column) => `b.${column} as b_${column}` as const))
      .where('s.uuid', '=', uuid).orderBy('i.due_date').orderBy('i.id') as never);
  }

  /** The store's change mark (`QueryStore.changeMark`): what the client area's page cache is valid for. */
  changeMark(): string | undefined {
    return this.store.changeMark();
  }

  /**
   * The session row of `digest` with its customer, or null when there is none. A row read while the store has not
   * changed since is answered again without reading (frozen: it is shared by the requests that get it); any write to
   * the store — a logout, a touch, another process's commit — makes the next call read. `mark`: the store's change mark
   * if the caller took it just before (else it is taken here).
   */
  async sessionWithCustomer(digest: string, mark = this.store.changeMark()): Promise<SessionWithCustomer | null> {
    return markedRead(mark, this.sessions, digest, async () => {
      const [row] = await this.session.rows(digest);
      if (!row) return null;
      return Object.freeze({
        kind: row.kind as SessionWithCustomer['kind'], subject: row.subject as string, seen_at: Number(row.seen_at), expires_at: Number(row.expires_at),
        customer: row.c_uuid ? Object.freeze({ uuid: row.c_uuid as string, email: row.c_email as string, name: row.c_name as string }) : null,
      });
    });
  }

  /** The service page's read of service `uuid`, or null when there is no such service. */
  async servicePage(uuid: string): Promise<ServicePageRead | null> {
    const rows = await this.page.rows(uuid);
    const first = rows[0];
    if (!first) return null;
    return {
      service: {
        uuid: first.uuid as string, product_uuid: first.product_uuid as string, module_name: first.module as string,
        service_data: openServiceData(this.box, first.service_data as string), provision_status: first.provision_status as string,
        status_reason: first.status_reason as string | null, customer_uuid: first.customer_uuid as string | null,
        created_at: first.created_at as string, updated_at: first.updated_at as string,
      },
      product: first.p_uuid ? {
        uuid: first.p_uuid as string, module: first.p_module as string, name: first.p_name as string,
        product_data: JSON.parse(first.p_product_data as string) as Record<string, unknown>,
      } : null,
      billing: first.b_service_uuid ? Object.fromEntries(BILLING_ALIASES.map(([column, alias]) => [column, first[alias]])) as unknown as ServiceBillingRow : null,
      open_invoices: rows.filter((row) => row.i_uuid).map((row) => ({
        uuid: row.i_uuid as string, number: row.i_number as string, kind: row.i_kind as string, due_date: row.i_due_date as string,
        amount_minor: Number(row.i_amount_minor), currency: row.i_currency as string, status: row.i_status as string,
      })),
    };
  }
}
