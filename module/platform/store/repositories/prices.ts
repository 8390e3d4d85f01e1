// Prices per product and billing cycle (minor units) and each product's refund policy (billing_products).
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import type { BillingCycle, RefundAction } from '../../services/billing/schema.ts';
import type { Db } from '../db.ts';
import { statement } from '../statement-cache.ts';

export interface PriceRow {
  product_uuid: string;
  billing_cycle: BillingCycle;
  amount_minor: number;
  currency: string;
  created_at: string;
  updated_at: string;
}

/** Repository of `prices` and `billing_products`. */
export class PriceRepository {
  constructor(private readonly db: Db, private readonly clock: Clock = systemClock) {}

  /** Sets (creates or replaces) the price of `product` for `cycle`. */
  set(product: string, cycle: BillingCycle, amountMinor: number, currency: string): PriceRow {
    const now = this.clock.now().toISOString();
    statement(this.db, `INSERT INTO prices (product_uuid, billing_cycle, amount_minor, currency, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (product_uuid, billing_cycle) DO UPDATE SET amount_minor = excluded.amount_minor, currency = excluded.currency,
        updated_at = excluded.updated_at`)
      .run(product, cycle, amountMinor, currency, now, now);
    return this.get(product, cycle)!;
  }

  get(product: string, cycle: string): PriceRow | null {
    return (statement(this.db, 'SELECT * FROM prices WHERE product_uuid = ? AND billing_cycle = ?').get(product, cycle) as PriceRow | undefined) ?? null;
  }

  /** Prices of one product, or of every product, by product then cycle. */
  list(product?: string): PriceRow[] {
    return statement(this.db, 'SELECT * FROM prices WHERE (@p IS NULL OR product_uuid = @p) ORDER BY product_uuid, billing_cycle')
      .all({ p: product ?? null }) as PriceRow[];
  }

  delete(product: string, cycle: string): boolean {
    return statement(this.db, 'DELETE FROM prices WHERE product_uuid = ? AND billing_cycle = ?').run(product, cycle).changes === 1;
  }

  /** What a full refund does to the product's services (default `terminate`). */
  refundAction(product: string): RefundAction {
    const row = statement(this.db, 'SELECT refund_action FROM billing_products WHERE product_uuid = ?').get(product) as { refund_action: RefundAction } | undefined;
    return row?.refund_action ?? 'terminate';
  }

  setRefundAction(product: string, action: RefundAction): void {
    statement(this.db, `INSERT INTO billing_products (product_uuid, refund_action, updated_at) VALUES (?, ?, ?)
        ON CONFLICT (product_uuid) DO UPDATE SET refund_action = excluded.refund_action, updated_at = excluded.updated_at`)
      .run(product, action, this.clock.now().toISOString());
  }
}
