// The host's read API for modules (module/contract/platform-reads.ts) over the platform's SQLite tables: the only place
// module-facing reads of services, customers, products and invoices name those tables.
import type { CustomerView, InvoiceView, PlatformReads, ProductView, ServiceListMatch, ServiceMatch, ServiceView } from '../contract/platform-reads.ts';
import { SECRET_KEY_PATTERN } from '../contract/redact.ts';
import type { Db } from './store/db.ts';
import { statement } from './store/statement-cache.ts';

/** A JSON member path for json_extract; only plain member names are accepted (they become part of the SQL text). */
const MEMBER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Reads of the platform database handed to modules (`ExtensionEnv.platform`). */
export class SqlitePlatformReads implements PlatformReads {
  constructor(private readonly db: Db) {}

  service(uuid: string): ServiceView | null {
    const row = statement(this.db, `SELECT s.uuid, s.module, s.product_uuid, s.customer_uuid, s.provision_status, s.service_data,
        s.provision_data, b.state AS billing_state, b.next_due_date, b.anchor_day
      FROM services s LEFT JOIN service_billing b ON b.service_uuid = s.uuid WHERE s.uuid = ?`).get(uuid) as
      (Omit<ServiceView, 'service_data' | 'provision_data'> & { service_data: string; provision_data: string }) | undefined;
    if (!row) return null;
    return { ...row, customer_uuid: row.customer_uuid ?? null, billing_state: row.billing_state ?? null,
      next_due_date: row.next_due_date ?? null, anchor_day: row.anchor_day ?? null,
      service_data: withoutSecrets(parse(row.service_data)), provision_data: withoutSecrets(parse(row.provision_data)) };
  }

  customer(uuid: string): CustomerView | null {
    const row = statement(this.db, `SELECT uuid, email, name,
        EXISTS (SELECT 1 FROM payment_methods m WHERE m.customer_uuid = customers.uuid) AS has_payment_method
      FROM customers WHERE uuid = ?`).get(uuid) as (Omit<CustomerView, 'has_payment_method'> & { has_payment_method: number }) | undefined;
    return row ? { ...row, has_payment_method: row.has_payment_method === 1 } : null;
  }

  product(uuid: string): ProductView | null {
    const row = statement(this.db, 'SELECT uuid, module, product_data FROM products WHERE uuid = ?').get(uuid) as
      { uuid: string; module: string; product_data: string } | undefined;
    return row ? { ...row, product_data: parse(row.product_data) } : null;
  }

  invoice(uuid: string): InvoiceView | null {
    const row = statement(this.db, `SELECT uuid, number, customer_uuid, service_uuid, description, amount_minor, currency, due_date,
        status, paid_at FROM invoices WHERE uuid = ?`).get(uuid) as InvoiceView | undefined;
    return row ?? null;
  }

  findService(match: ServiceMatch): string | null {
    const where = ['s.module = ?'];
    const args: unknown[] = [match.module];
    if (match.live) where.push("s.provision_status <> 'terminated'");
    for (const [column, members] of [['p.product_data', match.productData], ['s.service_data', match.serviceData]] as const) {
      for (const [member, value] of Object.entries(members ?? {})) {
        if (!MEMBER.test(member)) throw new Error(`not a plain member name: ${member}`);
        where.push(`json_extract(${column}, '$.${member}') = ?`);
        args.push(value);
      }
    }
    if (match.except) {
      where.push('s.uuid <> ?');
      args.push(match.except);
    }
    const row = statement(this.db, `SELECT s.uuid FROM services s JOIN products p ON p.uuid = s.product_uuid WHERE ${where.join(' AND ')} LIMIT 1`)
      .get(...args) as { uuid: string } | undefined;
    return row?.uuid ?? null;
  }

  serviceUuids(match: ServiceListMatch): string[] {
    const where = ['s.module = ?'];
    const args: unknown[] = [match.module];
    if (match.statuses) {
      where.push(`s.provision_status IN (${match.statuses.map(() => '?').join(', ') || 'NULL'})`);
      args.push(...match.statuses);
    }
    for (const [member, above] of Object.entries(match.productNumberAbove ?? {})) {
      if (!MEMBER.test(member)) throw new Error(`not a plain member name: ${member}`);
      where.push(`CAST(COALESCE(NULLIF(json_extract(p.product_data, '$.${member}'), ''), 0) AS REAL) > ?`);
      args.push(above);
    }
    return (statement(this.db, `SELECT s.uuid FROM services s JOIN products p ON p.uuid = s.product_uuid WHERE ${where.join(' AND ')}
      ORDER BY s.created_at, s.uuid`).all(...args) as Array<{ uuid: string }>).map((r) => r.uuid);
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
