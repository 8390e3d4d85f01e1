// Saved payment methods (one per customer and gateway, for off-session charges) and each gateway's customer id of a
// platform customer. Only references and display data are stored (brand, last 4 digits, expiry); never a card number.
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import type { SavedMethod } from '../../../contract/payment.ts';
import type { Db } from '../db.ts';
import { statement } from '../statement-cache.ts';

/** A saved method as stored: the gateway's references and display data (`label`, e.g. `visa •••• 4242`). */
export type PaymentMethodRow = { [K in keyof SavedMethod]-?: Exclude<SavedMethod[K], undefined> } & { uuid: string; created_at: string };

export type NewPaymentMethod = Omit<PaymentMethodRow, 'uuid' | 'created_at'>;

/** Repository of `payment_methods` and `gateway_customers`. */
export class PaymentMethodRepository {
  constructor(private readonly db: Db, private readonly clock: Clock = systemClock) {}

  /** Saves (or replaces) the customer's method on that gateway; answers the row and the method it replaced. */
  save(input: NewPaymentMethod): { method: PaymentMethodRow; replaced: PaymentMethodRow | null; changed: boolean } {
    const replaced = this.forGateway(input.customer_uuid, input.gateway_uuid);
    if (replaced && replaced.external_id === input.external_id) return { method: replaced, replaced: null, changed: false };
    if (replaced) statement(this.db, 'DELETE FROM payment_methods WHERE uuid = ?').run(replaced.uuid);
    const row: PaymentMethodRow = { ...input, uuid: randomUUID(), created_at: this.clock.now().toISOString() };
    statement(this.db, `INSERT INTO payment_methods (uuid, customer_uuid, gateway_uuid, gateway, external_customer, external_id, label, brand, last4,
        exp_month, exp_year, created_at)
      VALUES (@uuid, @customer_uuid, @gateway_uuid, @gateway, @external_customer, @external_id, @label, @brand, @last4, @exp_month, @exp_year, @created_at)`).run(row);
    return { method: row, replaced, changed: true };
  }

  get(uuid: string): PaymentMethodRow | null {
    return (statement(this.db, 'SELECT * FROM payment_methods WHERE uuid = ?').get(uuid) as PaymentMethodRow | undefined) ?? null;
  }

  forGateway(customerUuid: string, gatewayUuid: string): PaymentMethodRow | null {
    return (statement(this.db, 'SELECT * FROM payment_methods WHERE customer_uuid = ? AND gateway_uuid = ?').get(customerUuid, gatewayUuid) as PaymentMethodRow | undefined) ?? null;
  }

  /** A customer's saved methods, newest first. */
  ofCustomer(customerUuid: string): PaymentMethodRow[] {
    return statement(this.db, 'SELECT * FROM payment_methods WHERE customer_uuid = ? ORDER BY created_at DESC, uuid').all(customerUuid) as PaymentMethodRow[];
  }

  remove(uuid: string): boolean {
    return statement(this.db, 'DELETE FROM payment_methods WHERE uuid = ?').run(uuid).changes === 1;
  }

  /** The gateway's customer id of a platform customer, or null. */
  gatewayCustomer(gatewayUuid: string, customerUuid: string): string | null {
    const row = statement(this.db, 'SELECT external_id FROM gateway_customers WHERE gateway_uuid = ? AND customer_uuid = ?').get(gatewayUuid, customerUuid) as { external_id: string } | undefined;
    return row?.external_id ?? null;
  }

  /** Records it (the first one stays when two requests race). */
  setGatewayCustomer(gatewayUuid: string, customerUuid: string, externalId: string): string {
    statement(this.db, `INSERT INTO gateway_customers (gateway_uuid, customer_uuid, external_id, created_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (gateway_uuid, customer_uuid) DO NOTHING`).run(gatewayUuid, customerUuid, externalId, this.clock.now().toISOString());
    return this.gatewayCustomer(gatewayUuid, customerUuid)!;
  }
}
