// Who a message goes to and what it may say: the customer owning a service (services.customer_uuid → customers) and the
// service's non-secret facts (plan, location, panel account, address). Reads the platform's tables; platform process only.
import type Database from 'better-sqlite3';

/** The customer a message is addressed to. */
export interface Recipient {
  customer_uuid: string;
  email: string;
  name: string;
}

/** What a service message may show; never a password or key. */
export interface ServiceFacts {
  service_uuid: string;
  module: string;
  provision_status: string;
  plan_type: string | null;
  server_location: string | null;
  /** VpnProduct's provision data: the panel account and where it lives (null before provisioning). */
  account_name: string | null;
  wg_server: string | null;
  address: string | null;
  panel_location: string | null;
  /** Name of the panel holding the account (panels with names), else null: the location names the panel. */
  panel: string | null;
  username: string | null;
  /** The service's billing state (recurring billing: `active`, `suspended` for non-payment, …), null without billing. */
  billing_state: string | null;
}

/** Lookups of recipients and service facts. */
export interface RecipientDirectory {
  ofService(serviceUuid: string): Recipient | null;
  ofCustomer(customerUuid: string): Recipient | null;
  service(serviceUuid: string): ServiceFacts | null;
  /** True when the customer has a saved payment method (renewals are charged to it). */
  hasSavedMethod(customerUuid: string): boolean;
}

/** Over the platform database (customers, services, products). Secret-named members are never read. */
export class SqliteRecipientDirectory implements RecipientDirectory {
  private readonly byService;
  private readonly byCustomer;
  private readonly facts;
  private readonly methods;

  constructor(db: Database.Database) {
    this.byService = db.prepare(`SELECT c.uuid AS customer_uuid, c.email, c.name FROM services s JOIN customers c ON c.uuid = s.customer_uuid WHERE s.uuid = ?`);
    this.byCustomer = db.prepare('SELECT uuid AS customer_uuid, email, name FROM customers WHERE uuid = ?');
    this.facts = db.prepare(`SELECT s.uuid AS service_uuid, s.module, s.provision_status,
        json_extract(p.product_data, '$.plan_type') AS plan_type, json_extract(p.product_data, '$.server_location') AS server_location,
        json_extract(s.provision_data, '$.account_name') AS account_name, json_extract(s.provision_data, '$.wg_server') AS wg_server,
        json_extract(s.provision_data, '$.address') AS address, json_extract(s.provision_data, '$.panel_location') AS panel_location,
        json_extract(s.provision_data, '$.panel') AS panel, json_extract(s.service_data, '$.username') AS username, b.state AS billing_state
      FROM services s LEFT JOIN products p ON p.uuid = s.product_uuid LEFT JOIN service_billing b ON b.service_uuid = s.uuid WHERE s.uuid = ?`);
    this.methods = db.prepare('SELECT 1 FROM payment_methods WHERE customer_uuid = ? LIMIT 1');
  }

  ofService(serviceUuid: string): Recipient | null {
    return (this.byService.get(serviceUuid) as Recipient | undefined) ?? null;
  }

  ofCustomer(customerUuid: string): Recipient | null {
    return (this.byCustomer.get(customerUuid) as Recipient | undefined) ?? null;
  }

  service(serviceUuid: string): ServiceFacts | null {
    const row = this.facts.get(serviceUuid) as Record<string, unknown> | undefined;
    if (!row) return null;
    const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);
    return {
      service_uuid: String(row.service_uuid), module: String(row.module), provision_status: String(row.provision_status),
      plan_type: text(row.plan_type), server_location: text(row.server_location), account_name: text(row.account_name),
      wg_server: text(row.wg_server), address: text(row.address), panel_location: text(row.panel_location), panel: text(row.panel),
      username: text(row.username), billing_state: text(row.billing_state),
    };
  }

  hasSavedMethod(customerUuid: string): boolean {
    return this.methods.get(customerUuid) !== undefined;
  }
}
