// Products over the query layer (either engine): which module serves them, their normalized product data, and what
// customers read of them (name, description, order position, visible on the order page).
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import type { QueryStore } from '../query-store.ts';
import { CompiledRead } from './compiled-read.ts';
import type { Selectable } from 'kysely';
import type { ProductsTable } from '../tables.ts';

/** The customer-facing part of a product, edited in the admin web beside the module's own fields. */
export interface ProductListing {
  name: string;
  description: string;
  /** Order page position: lower first, then oldest first. */
  position: number;
  /** Offered on the order page (a hidden product keeps its services and renewals). */
  visible: boolean;
}

export interface ProductRecord extends ProductListing {
  uuid: string;
  module: string;
  product_data: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/** The listing of a product made without one. */
export const DEFAULT_LISTING: ProductListing = { name: '', description: '', position: 0, visible: true };

/** A product as stored → its record. */
export const productRecord = (row: Selectable<ProductsTable>): ProductRecord =>
  ({ ...row, visible: row.visible === 1, product_data: JSON.parse(row.product_data) as Record<string, unknown> });

/** Repository of the `products` table. */
export class ProductQueries {
  /** `get`'s read, compiled once (every provisioning job and admin action reads its product). */
  private readonly byUuid: CompiledRead<Selectable<ProductsTable>>;

  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {
    this.byUuid = new CompiledRead(store, (uuid) => store.db.selectFrom('products').selectAll().where('uuid', '=', uuid));
  }

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
    const [row] = await this.byUuid.rows(uuid);
    return row ? productRecord(row) : null;
  }

  /** Every product in order page order (position, then creation; ties by uuid). */
  async list(): Promise<ProductRecord[]> {
    return (await this.store.db.selectFrom('products').selectAll().orderBy('position').orderBy('created_at').orderBy('uuid').execute()).map(productRecord);
  }

  /** Products whose `product_data.server_location` is `location`. */
  async listAt(location: string): Promise<ProductRecord[]> {
    const rows = await this.store.db.selectFrom('products').selectAll()
      .where(this.store.jsonText('product_data', 'server_location'), '=', location).orderBy('created_at').orderBy('uuid').execute();
    return rows.map(productRecord);
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
