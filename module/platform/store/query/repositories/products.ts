// `products` over the query layer (either engine): the asynchronous twin of ../../repositories/products.ts.
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../../../panel/shared/clock.ts';
import type { ProductRecord } from '../../repositories/products.ts';
import type { QueryStore } from '../query-store.ts';
import type { ProductsTable } from '../tables.ts';

const toRecord = (row: ProductsTable): ProductRecord => ({ ...row, product_data: JSON.parse(row.product_data) as Record<string, unknown> });

/** Repository of the `products` table. */
export class ProductQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  async create(module: string, productData: Record<string, unknown>, uuid: string = randomUUID()): Promise<ProductRecord> {
    const now = this.clock.now().toISOString();
    await this.store.db.insertInto('products')
      .values({ uuid, module, product_data: JSON.stringify(productData), created_at: now, updated_at: now }).execute();
    return (await this.get(uuid))!;
  }

  async get(uuid: string): Promise<ProductRecord | null> {
    const row = await this.store.db.selectFrom('products').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Every product, oldest first (ties by uuid). */
  async list(): Promise<ProductRecord[]> {
    return (await this.store.db.selectFrom('products').selectAll().orderBy('created_at').orderBy('uuid').execute()).map(toRecord);
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
}
