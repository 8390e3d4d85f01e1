// Saved payment methods over the query layer (one per customer and gateway, for off-session charges) and each
// gateway's customer id of a platform customer. Only references and display data are stored (brand, last 4 digits,
// expiry); never a card number.
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import type { SavedMethod } from '../../../../contract/payment.ts';
import type { QueryStore } from '../query-store.ts';

/** A saved method as stored: the gateway's references and display data (`label`, e.g. `visa •••• 4242`). */
export type PaymentMethodRow = { [K in keyof SavedMethod]-?: Exclude<SavedMethod[K], undefined> } & { uuid: string; created_at: string };

export type NewPaymentMethod = Omit<PaymentMethodRow, 'uuid' | 'created_at'>;

/** Repository of `payment_methods` and `gateway_customers`. */
export class PaymentMethodQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  /**
   * Saves (or replaces) the customer's method on that gateway; answers the row and the method it replaced. Call inside
   * a transaction: the replaced row is deleted and the new one inserted together (UNIQUE (customer, gateway)).
   */
  async save(input: NewPaymentMethod): Promise<{ method: PaymentMethodRow; replaced: PaymentMethodRow | null; changed: boolean }> {
    const replaced = await this.forGateway(input.customer_uuid, input.gateway_uuid);
    if (replaced && replaced.external_id === input.external_id) return { method: replaced, replaced: null, changed: false };
    if (replaced) await this.store.db.deleteFrom('payment_methods').where('uuid', '=', replaced.uuid).execute();
    const row: PaymentMethodRow = { ...input, uuid: randomUUID(), created_at: this.clock.now().toISOString() };
    await this.store.db.insertInto('payment_methods').values(row).execute();
    return { method: row, replaced, changed: true };
  }

  async get(uuid: string): Promise<PaymentMethodRow | null> {
    return ((await this.store.db.selectFrom('payment_methods').selectAll().where('uuid', '=', uuid).executeTakeFirst()) as PaymentMethodRow | undefined) ?? null;
  }

  async forGateway(customerUuid: string, gatewayUuid: string): Promise<PaymentMethodRow | null> {
    const row = await this.store.db.selectFrom('payment_methods').selectAll().where('customer_uuid', '=', customerUuid).where('gateway_uuid', '=', gatewayUuid).executeTakeFirst();
    return (row as PaymentMethodRow | undefined) ?? null;
  }

  /** A customer's saved methods, newest first. */
  async ofCustomer(customerUuid: string): Promise<PaymentMethodRow[]> {
    return (await this.store.db.selectFrom('payment_methods').selectAll().where('customer_uuid', '=', customerUuid)
      .orderBy('created_at', 'desc').orderBy('uuid').execute()) as PaymentMethodRow[];
  }

  async remove(uuid: string): Promise<boolean> {
    const result = await this.store.db.deleteFrom('payment_methods').where('uuid', '=', uuid).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** The gateway's customer id of a platform customer, or null. */
  async gatewayCustomer(gatewayUuid: string, customerUuid: string): Promise<string | null> {
    const row = await this.store.db.selectFrom('gateway_customers').select('external_id').where('gateway_uuid', '=', gatewayUuid).where('customer_uuid', '=', customerUuid).executeTakeFirst();
    return row?.external_id ?? null;
  }

  /** Records it (the first one stays when two requests race) and answers the one recorded. */
  async setGatewayCustomer(gatewayUuid: string, customerUuid: string, externalId: string): Promise<string> {
    await this.store.db.insertInto('gateway_customers').values({ gateway_uuid: gatewayUuid, customer_uuid: customerUuid, external_id: externalId, created_at: this.clock.now().toISOString() })
      .onConflict((oc) => oc.columns(['gateway_uuid', 'customer_uuid']).doNothing()).execute();
    return (await this.gatewayCustomer(gatewayUuid, customerUuid))!;
  }
}
