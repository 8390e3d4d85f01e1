// `customers` (and the `services.customer_uuid` link) over the query layer: the asynchronous twin of
// ../../repositories/customers.ts. E-mail addresses are unique and compared case-insensitively on both engines.
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import type { QueryStore } from '../query-store.ts';

/** One customer as stored; `password_hash` is never part of an API answer. */
export interface CustomerRow {
  uuid: string;
  email: string;
  name: string;
  password_hash: string | null;
  created_at: string;
  updated_at: string;
}

/** A customer as APIs show it (no password hash). */
export type Customer = Omit<CustomerRow, 'password_hash'>;

const SUMMARY = ['uuid', 'email', 'name', 'created_at', 'updated_at'] as const;

/** Repository of `customers`. */
export class CustomerQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  /** Creates a customer; rejects with the engine's unique violation when the address is taken (any case). */
  async create(input: { email: string; name?: string; password_hash?: string | null }): Promise<Customer> {
    const now = this.clock.now().toISOString();
    const uuid = randomUUID();
    const name = input.name ?? '';
    await this.store.db.insertInto('customers')
      .values({ uuid, email: input.email, name, password_hash: input.password_hash ?? null, created_at: now, updated_at: now }).execute();
    return { uuid, email: input.email, name, created_at: now, updated_at: now };
  }

  /**
   * Creates a customer unless the address is taken (any case): null then. The unique address decides between two
   * processes creating the same customer at once, so exactly one of them gets the row.
   */
  async createIfFree(input: { email: string; name?: string; password_hash?: string | null }): Promise<Customer | null> {
    const now = this.clock.now().toISOString();
    const uuid = randomUUID();
    const name = input.name ?? '';
    const row = await this.store.db.insertInto('customers')
      .values({ uuid, email: input.email, name, password_hash: input.password_hash ?? null, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('email').doNothing()).returning('uuid').executeTakeFirst();
    return row ? { uuid, email: input.email, name, created_at: now, updated_at: now } : null;
  }

  async get(uuid: string): Promise<CustomerRow | undefined> {
    return this.store.db.selectFrom('customers').select([...SUMMARY, 'password_hash']).where('uuid', '=', uuid).executeTakeFirst();
  }

  async findByEmail(email: string): Promise<CustomerRow | undefined> {
    return this.store.db.selectFrom('customers').select([...SUMMARY, 'password_hash']).where('email', '=', email).executeTakeFirst();
  }

  /** How many customers there are. */
  async count(): Promise<number> {
    const { n } = await this.store.db.selectFrom('customers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(n);
  }

  /** A page of customers ordered by creation (newest last). */
  async list(limit = 100, offset = 0): Promise<Customer[]> {
    return this.store.db.selectFrom('customers').select(SUMMARY).orderBy('created_at').orderBy('uuid').limit(limit).offset(offset).execute();
  }

  async update(uuid: string, fields: { email?: string; name?: string; password_hash?: string | null }): Promise<boolean> {
    const row = await this.get(uuid);
    if (!row) return false;
    await this.store.db.updateTable('customers').set({
      email: fields.email ?? row.email, name: fields.name ?? row.name,
      password_hash: fields.password_hash === undefined ? row.password_hash : fields.password_hash, updated_at: this.clock.now().toISOString(),
    }).where('uuid', '=', uuid).execute();
    return true;
  }

  /** Links a service to its owner (or unlinks it with null). */
  async assignService(serviceUuid: string, customerUuid: string | null): Promise<boolean> {
    const result = await this.store.db.updateTable('services').set({ customer_uuid: customerUuid }).where('uuid', '=', serviceUuid).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The uuid of the service's owner, or null. */
  async ownerOf(serviceUuid: string): Promise<string | null> {
    const row = await this.store.db.selectFrom('services').select('customer_uuid').where('uuid', '=', serviceUuid).executeTakeFirst();
    return row?.customer_uuid ?? null;
  }

  /** The uuids of a customer's services, oldest first. */
  async serviceUuids(customerUuid: string): Promise<string[]> {
    const rows = await this.store.db.selectFrom('services').select('uuid').where('customer_uuid', '=', customerUuid).orderBy('created_at').orderBy('uuid').execute();
    return rows.map((r) => r.uuid);
  }
}
