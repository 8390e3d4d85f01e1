// Stored billing settings: the global row (billing_settings) and each product's dunning overrides (billing_products).
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import { readOverrides, readSettings, type BillingSettings, type ProductOverrides } from '../../services/billing/billing-settings.ts';
import type { Db } from '../db.ts';

/** Repository of the billing settings; values are checked by the billing service before they are stored. */
export class BillingSettingsRepository {
  constructor(private readonly db: Db, private readonly clock: Clock = systemClock) {}

  /** The global settings (defaults for keys never set). */
  global(): BillingSettings {
    const row = this.db.prepare('SELECT settings FROM billing_settings WHERE id = 1').get() as { settings: string } | undefined;
    return readSettings(row ? JSON.parse(row.settings) : null);
  }

  setGlobal(settings: BillingSettings): void {
    this.db.prepare(`INSERT INTO billing_settings (id, settings, updated_at) VALUES (1, ?, ?)
      ON CONFLICT (id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`).run(JSON.stringify(settings), this.clock.now().toISOString());
  }

  /** A product's overrides ({} when none). */
  overrides(productUuid: string): ProductOverrides {
    const row = this.db.prepare('SELECT dunning FROM billing_products WHERE product_uuid = ?').get(productUuid) as { dunning: string | null } | undefined;
    return readOverrides(row?.dunning ? JSON.parse(row.dunning) : null);
  }

  /** Every product's overrides that are not empty. */
  allOverrides(): Map<string, ProductOverrides> {
    const rows = this.db.prepare("SELECT product_uuid, dunning FROM billing_products WHERE dunning IS NOT NULL AND dunning <> '{}'").all() as Array<{ product_uuid: string; dunning: string }>;
    return new Map(rows.map((r) => [r.product_uuid, readOverrides(JSON.parse(r.dunning))]));
  }

  setOverrides(productUuid: string, overrides: ProductOverrides): void {
    this.db.prepare(`INSERT INTO billing_products (product_uuid, dunning, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (product_uuid) DO UPDATE SET dunning = excluded.dunning, updated_at = excluded.updated_at`)
      .run(productUuid, JSON.stringify(overrides), this.clock.now().toISOString());
  }
}
