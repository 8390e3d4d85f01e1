// The `customers` table: the people who own services (login and pages come with the web host, orders with billing).
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import type { Db } from '../db.ts';
import { statement } from '../statement-cache.ts';

import type { Customer, CustomerRow } from '../query/repositories/customers.ts';

export type { Customer, CustomerRow };

/** Repository of `customers` and of the `services.customer_uuid` link. E-mail addresses are unique, case-insensitively. */
export class CustomerRepository {
  constructor(private readonly db: Db, private readonly clock: Clock = systemClock) {}

  /** Creates a customer; throws SQLite's UNIQUE error when the e-mail address is taken (check `findByEmail` first). */
  create(input: { email: string; name?: string; password_hash?: string | null }): Customer {
    const now = this.clock.now().toISOString();
    const uuid = randomUUID();
    statement(this.db, 'INSERT INTO customers (uuid, email, name, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(uuid, input.email, input.name ?? '', input.password_hash ?? null, now, now);
    return { uuid, email: input.email, name: input.name ?? '', created_at: now, updated_at: now };
  }

  get(uuid: string): CustomerRow | undefined {
    return statement(this.db, 'SELECT * FROM customers WHERE uuid = ?').get(uuid) as CustomerRow | undefined;
  }

  findByEmail(email: string): CustomerRow | undefined {
    return statement(this.db, 'SELECT * FROM customers WHERE email = ?').get(email) as CustomerRow | undefined;
  }

  /** A page of customers ordered by creation (newest last). */
  list(limit = 100, offset = 0): Customer[] {
    return statement(this.db, 'SELECT uuid, email, name, created_at, updated_at FROM customers ORDER BY created_at, uuid LIMIT ? OFFSET ?')
      .all(limit, offset) as Customer[];
  }

  update(uuid: string, fields: { email?: string; name?: string; password_hash?: string | null }): boolean {
    const row = this.get(uuid);
    if (!row) return false;
    statement(this.db, 'UPDATE customers SET email = ?, name = ?, password_hash = ?, updated_at = ? WHERE uuid = ?')
      .run(fields.email ?? row.email, fields.name ?? row.name,
        fields.password_hash === undefined ? row.password_hash : fields.password_hash, this.clock.now().toISOString(), uuid);
    return true;
  }

  /** Links a service to its owner (or unlinks it with null). */
  assignService(serviceUuid: string, customerUuid: string | null): boolean {
    return statement(this.db, 'UPDATE services SET customer_uuid = ? WHERE uuid = ?').run(customerUuid, serviceUuid).changes === 1;
  }

  /** The uuid of the service's owner, or null. */
  ownerOf(serviceUuid: string): string | null {
    const row = statement(this.db, 'SELECT customer_uuid FROM services WHERE uuid = ?').get(serviceUuid) as { customer_uuid: string | null } | undefined;
    return row?.customer_uuid ?? null;
  }

  /** The uuids of a customer's services, oldest first. */
  serviceUuids(customerUuid: string): string[] {
    return (statement(this.db, 'SELECT uuid FROM services WHERE customer_uuid = ? ORDER BY created_at, uuid').all(customerUuid) as Array<{ uuid: string }>)
      .map((r) => r.uuid);
  }
}
