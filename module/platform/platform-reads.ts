// The host's read API for modules (module/contract/platform-reads.ts) over the platform's query layer (SQLite or
// PostgreSQL): the only place module-facing reads of services, customers, products and invoices name those tables.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { BillingCalendar, CustomerView, InvoiceView, PlatformReads, ProductView, ServiceListMatch, ServiceMatch, ServiceView } from '../contract/platform-reads.ts';
import { SECRET_KEY_PATTERN } from '../contract/redact.ts';
import { addDays, addMonths, dateOf, periodAround } from './services/billing/calendar.ts';
import type { ModuleHostTables } from './services/module-store.ts';
import type { QueryStore } from './store/query/query-store.ts';
import { CompiledRead } from './store/query/repositories/compiled-read.ts';
import type { StoreTables } from './store/query/tables.ts';

/** A JSON member path; only plain member names are accepted (they become part of the SQL text). */
const MEMBER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The platform's tables (billing's included) and the module host's, as these reads join them. */
interface ReadTables extends StoreTables, ModuleHostTables {}

/** The platform's calendar as modules see it. */
export const billingCalendar: BillingCalendar = {
  dateOf, addDays, addMonths,
  monthAround: (on, paidThrough, anchorDay) => {
    const { start, end } = periodAround(on, paidThrough, 'monthly', anchorDay);
    return { start, end };
  },
};

/** The first Notification instance of module `name` (oldest first). */
function firstChannelNamed(db: Kysely<ReadTables>, name: string) {
  return db.selectFrom('module_instances').select('uuid').where('module_type', '=', 'Notification').where('module_name', '=', name)
    .orderBy('created_at').orderBy('uuid').limit(1);
}

/** Reads of the platform's store handed to modules (`ExtensionEnv.platform`). */
export class QueryPlatformReads implements PlatformReads {
  readonly calendar = billingCalendar;
  private readonly db: Kysely<ReadTables>;

  /** `service`'s read, compiled once (hook listeners read the service of every event). */
  private readonly serviceRead;
  /** `notificationChannel`'s read without a configured channel, compiled once (every mail the platform queues reads it). */
  private readonly firstChannel;

  constructor(private readonly store: QueryStore) {
    const db = (this.db = store.db as unknown as Kysely<ReadTables>);
    this.serviceRead = new CompiledRead(store, (uuid) => db.selectFrom('services as s').leftJoin('service_billing as b', 'b.service_uuid', 's.uuid')
      .select(['s.uuid', 's.module', 's.product_uuid', 's.customer_uuid', 's.provision_status', 's.service_data', 's.provision_data',
        'b.state as billing_state', 'b.next_due_date', 'b.anchor_day'])
      .where('s.uuid', '=', uuid));
    this.firstChannel = new CompiledRead(store, (name) => firstChannelNamed(db, name));
  }

  async service(uuid: string): Promise<ServiceView | null> {
    const [row] = await this.serviceRead.rows(uuid);
    if (!row) return null;
    return {
      ...row, customer_uuid: row.customer_uuid ?? null, billing_state: row.billing_state ?? null,
      next_due_date: row.next_due_date ?? null, anchor_day: row.anchor_day ?? null,
      service_data: withoutSecrets(parse(row.service_data)), provision_data: withoutSecrets(parse(row.provision_data)),
    };
  }

  async customer(uuid: string): Promise<CustomerView | null> {
    const row = await this.db.selectFrom('customers').select(['uuid', 'email', 'name'])
      .select((eb) => eb.exists(eb.selectFrom('payment_methods as m').select('m.customer_uuid').whereRef('m.customer_uuid', '=', 'customers.uuid')).as('has_payment_method'))
      .where('uuid', '=', uuid).executeTakeFirst();
    return row ? { ...row, has_payment_method: Boolean(row.has_payment_method) } : null;
  }

  async product(uuid: string): Promise<ProductView | null> {
    const row = await this.db.selectFrom('products').select(['uuid', 'module', 'product_data']).where('uuid', '=', uuid).executeTakeFirst();
    return row ? { ...row, product_data: parse(row.product_data) } : null;
  }

  async invoice(uuid: string): Promise<InvoiceView | null> {
    const row = await this.db.selectFrom('invoices')
      .select(['uuid', 'number', 'customer_uuid', 'service_uuid', 'description', 'amount_minor', 'currency', 'due_date', 'status', 'paid_at'])
      .where('uuid', '=', uuid).executeTakeFirst();
    return row ?? null;
  }

  async findService(match: ServiceMatch): Promise<string | null> {
    let query = this.db.selectFrom('services as s').innerJoin('products as p', 'p.uuid', 's.product_uuid').select('s.uuid').where('s.module', '=', match.module);
    if (match.live) query = query.where('s.provision_status', '<>', 'terminated');
    for (const [column, members] of [['p.product_data', match.productData], ['s.service_data', match.serviceData]] as const) {
      for (const [member, value] of Object.entries(members ?? {})) query = query.where(this.member(column, member), '=', value);
    }
    if (match.except) query = query.where('s.uuid', '<>', match.except);
    return (await query.limit(1).executeTakeFirst())?.uuid ?? null;
  }

  async serviceUuids(match: ServiceListMatch): Promise<string[]> {
    let query = this.db.selectFrom('services as s').innerJoin('products as p', 'p.uuid', 's.product_uuid').select('s.uuid').where('s.module', '=', match.module);
    if (match.statuses) {
      if (match.statuses.length === 0) return [];
      query = query.where('s.provision_status', 'in', [...match.statuses]);
    }
    for (const [member, above] of Object.entries(match.productNumberAbove ?? {})) {
      query = query.where(sql<number>`CAST(COALESCE(NULLIF(${this.member('p.product_data', member)}, ''), '0') AS REAL)`, '>', above);
    }
    return (await query.orderBy('s.created_at').orderBy('s.uuid').execute()).map((r) => r.uuid);
  }

  async notificationChannel(name: string, configured: string | null = null): Promise<string | null> {
    if (!configured) return (await this.firstChannel.rows(name))[0]?.uuid ?? null;
    const query = firstChannelNamed(this.db, name).where((eb) => eb.or([eb('uuid', '=', configured), eb('label', '=', configured)]));
    return (await query.executeTakeFirst())?.uuid ?? null;
  }

  private member(column: string, member: string): RawBuilder<string | null> {
    if (!MEMBER.test(member)) throw new Error(`not a plain member name: ${member}`);
    return this.store.jsonText(column, member);
  }
}

function parse(text: string | null): Record<string, unknown> {
  try {
    const value = JSON.parse(text ?? '{}') as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Deep copy leaving out secret-named members (their stored values are sealed and never handed to another module). */
function withoutSecrets(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (SECRET_KEY_PATTERN.test(key)) continue;
    out[key] = member !== null && typeof member === 'object' && !Array.isArray(member) ? withoutSecrets(member as Record<string, unknown>) : member;
  }
  return out;
}
