// Stored billing settings over the query layer: the global row (billing_settings) and each product's dunning
// overrides (billing_products).
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import { readOverrides, readSettings, type BillingSettings, type ProductOverrides } from '../../../services/billing/billing-settings.ts';
import type { QueryStore } from '../query-store.ts';

/** Repository of the billing settings; values are checked by the billing service before they are stored. */
export class BillingSettingsQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  /** The global settings (defaults for keys never set). */
  async global(): Promise<BillingSettings> {
    const row = await this.store.db.selectFrom('billing_settings').select('settings').where('id', '=', 1).executeTakeFirst();
    return readSettings(row ? JSON.parse(row.settings) : null);
  }

  async setGlobal(settings: BillingSettings): Promise<void> {
    await this.store.db.insertInto('billing_settings').values({ id: 1, settings: JSON.stringify(settings), updated_at: this.clock.now().toISOString() })
      .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ settings: eb.ref('excluded.settings'), updated_at: eb.ref('excluded.updated_at') }))).execute();
  }

  /** A product's overrides ({} when none). */
  async overrides(productUuid: string): Promise<ProductOverrides> {
    const row = await this.store.db.selectFrom('billing_products').select('dunning').where('product_uuid', '=', productUuid).executeTakeFirst();
    return readOverrides(row?.dunning ? JSON.parse(row.dunning) : null);
  }

  /** Every product's overrides that are not empty. */
  async allOverrides(): Promise<Map<string, ProductOverrides>> {
    const rows = await this.store.db.selectFrom('billing_products').select(['product_uuid', 'dunning'])
      .where('dunning', 'is not', null).where('dunning', '<>', '{}').orderBy('product_uuid').execute();
    return new Map(rows.map((r) => [r.product_uuid, readOverrides(JSON.parse(r.dunning!))]));
  }

  async setOverrides(productUuid: string, overrides: ProductOverrides): Promise<void> {
    await this.store.db.insertInto('billing_products').values({ product_uuid: productUuid, dunning: JSON.stringify(overrides), updated_at: this.clock.now().toISOString() })
      .onConflict((oc) => oc.column('product_uuid').doUpdateSet((eb) => ({ dunning: eb.ref('excluded.dunning'), updated_at: eb.ref('excluded.updated_at') }))).execute();
  }
}
