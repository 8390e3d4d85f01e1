// `prices` and `billing_products` over the query layer (either engine).
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import type { BillingCycle, RefundAction } from '../../../services/billing/schema.ts';
import type { QueryStore } from '../query-store.ts';

/** A price of one product for one billing cycle, in minor units. */
export interface PriceRow {
  product_uuid: string;
  billing_cycle: BillingCycle;
  amount_minor: number;
  currency: string;
  created_at: string;
  updated_at: string;
}

/** Repository of `prices` (per product and billing cycle, minor units) and of the refund policy per product. */
export class PriceQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  /** Sets (creates or replaces) the price of `product` for `cycle`. */
  async set(product: string, cycle: BillingCycle, amountMinor: number, currency: string): Promise<PriceRow> {
    const now = this.clock.now().toISOString();
    await this.store.db.insertInto('prices')
      .values({ product_uuid: product, billing_cycle: cycle, amount_minor: amountMinor, currency, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['product_uuid', 'billing_cycle']).doUpdateSet((eb) => ({
        amount_minor: eb.ref('excluded.amount_minor'), currency: eb.ref('excluded.currency'), updated_at: eb.ref('excluded.updated_at'),
      }))).execute();
    return (await this.get(product, cycle))!;
  }

  async get(product: string, cycle: string): Promise<PriceRow | null> {
    const row = await this.store.db.selectFrom('prices').selectAll().where('product_uuid', '=', product).where('billing_cycle', '=', cycle).executeTakeFirst();
    return (row as PriceRow | undefined) ?? null;
  }

  /** Prices of one product, or of every product, by product then cycle. */
  async list(product?: string): Promise<PriceRow[]> {
    let query = this.store.db.selectFrom('prices').selectAll();
    if (product !== undefined) query = query.where('product_uuid', '=', product);
    return (await query.orderBy('product_uuid').orderBy('billing_cycle').execute()) as PriceRow[];
  }

  async delete(product: string, cycle: string): Promise<boolean> {
    const result = await this.store.db.deleteFrom('prices').where('product_uuid', '=', product).where('billing_cycle', '=', cycle).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** What a full refund does to the product's services (default `terminate`). */
  async refundAction(product: string): Promise<RefundAction> {
    const row = await this.store.db.selectFrom('billing_products').select('refund_action').where('product_uuid', '=', product).executeTakeFirst();
    return (row?.refund_action as RefundAction | undefined) ?? 'terminate';
  }

  async setRefundAction(product: string, action: RefundAction): Promise<void> {
    await this.store.db.insertInto('billing_products').values({ product_uuid: product, refund_action: action, updated_at: this.clock.now().toISOString() })
      .onConflict((oc) => oc.column('product_uuid').doUpdateSet((eb) => ({ refund_action: eb.ref('excluded.refund_action'), updated_at: eb.ref('excluded.updated_at') })))
      .execute();
  }
}
