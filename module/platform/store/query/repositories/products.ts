// `products` over the query layer (either engine): the asynchronous twin of ../../repositories/products.ts.
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../../../panel/shared/clock.ts';
import { DEFAULT_LISTING, type ProductListing, type ProductRecord } from '../../repositories/products.ts';
import type { QueryStore } from '../query-store.ts';
import type { Selectable } from 'kysely';
import type { ProductsTable } from '../tables.ts';

const toRecord = (row: Selectable<ProductsTable>): ProductRecord =>
  ({ ...row, visible: row.visible === 1, product_data: JSON.parse(row.product_data) as Record<string, unknown> });

/** Repository of the `products` table. */
export class ProductQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  async create(module: string, productData: Record<string, unknown>, uuid: string = randomUUID(), listing: Partial<ProductListing> = {}): Promise<ProductRecord> {
    const now = this.clock.now().toISOString();
    const l = { ...DEFAULT_LISTING, ...listing };
    await this.store.db.insertInto('products')
      .values({
        uuid, module, product_data: JSON.stringify(productData), name: l.name, description: l.description, position: l.position,
        visible: l.visible ? 1 : 0, created_at: now, updated_at: now,
      }).execute();
    return (await this.get(uuid))!;
  }

  async get(uuid: string): Promise<ProductRecord | null> {
    const row = await this.store.db.selectFrom('products').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Every product in order page order (position, then creation; ties by uuid). */
  async list(): Promise<ProductRecord[]> {
    return (await this.store.db.selectFrom('products').selectAll().orderBy('position').orderBy('created_at').orderBy('uuid').execute()).map(toRecord);
  }

  /** Products whose `product_data.server_location` is `location`. */
  async listAt(location: string): Promise<ProductRecord[]> {
    const rows = await this.store.db.selectFrom('products').selectAll()
      .where(this.store.jsonText('product_data', 'server_location'), '=', location).orderBy('created_at').orderBy('uuid').execute();
    return rows.map(toRecord);
  }

  /** Replaces the product data; false when there is no such product. */
  async update(uuid: string, productData: Record<string, unknown>): Promise<boolean> {
    const result = await this.store.db.updateTable('products')
      .set({ product_data: JSON.stringify(productData), updated_at: this.clock.now().toISOString() }).where('uuid', '=', uuid).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Replaces the customer-facing fields of a product; false when there is no such product. */
  async updateListing(uuid: string, listing: ProductListing): Promise<boolean> {
    const result = await this.store.db.updateTable('products')
      .set({ ...listing, visible: listing.visible ? 1 : 0, updated_at: this.clock.now().toISOString() }).where('uuid', '=', uuid).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
