// Products: which module serves them, their normalized product data, and what customers read of them (name,
// description, order position, visible on the order page).
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import type { Db } from '../db.ts';
import { statement } from '../statement-cache.ts';

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

interface ProductRow extends Omit<ProductRecord, 'product_data' | 'visible'> {
  product_data: string;
  visible: number;
}

export const DEFAULT_LISTING: ProductListing = { name: '', description: '', position: 0, visible: true };

function toRecord(row: ProductRow): ProductRecord {
  return { ...row, visible: row.visible === 1, product_data: JSON.parse(row.product_data) as Record<string, unknown> };
}

/** Repository of the `products` table. */
export class ProductRepository {
  private readonly getStmt;

  constructor(private readonly db: Db, private readonly clock: Clock = systemClock) {
    this.getStmt = db.prepare('SELECT * FROM products WHERE uuid = ?');
  }

  create(module: string, productData: Record<string, unknown>, uuid: string = randomUUID(), listing: Partial<ProductListing> = {}): ProductRecord {
    const now = this.clock.now().toISOString();
    const l = { ...DEFAULT_LISTING, ...listing };
    statement(this.db, `INSERT INTO products (uuid, module, product_data, name, description, position, visible, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(uuid, module, JSON.stringify(productData), l.name, l.description, l.position, l.visible ? 1 : 0, now, now);
    return this.get(uuid)!;
  }

  get(uuid: string): ProductRecord | null {
    const row = this.getStmt.get(uuid) as ProductRow | undefined;
    return row ? toRecord(row) : null;
  }

  /** Every product in order page order (position, then creation). */
  list(): ProductRecord[] {
    return (statement(this.db, 'SELECT * FROM products ORDER BY position, created_at').all() as ProductRow[]).map(toRecord);
  }

  update(uuid: string, productData: Record<string, unknown>): void {
    statement(this.db, 'UPDATE products SET product_data = ?, updated_at = ? WHERE uuid = ?')
      .run(JSON.stringify(productData), this.clock.now().toISOString(), uuid);
  }

  /** Replaces the customer-facing fields of a product. */
  updateListing(uuid: string, listing: ProductListing): void {
    statement(this.db, 'UPDATE products SET name = ?, description = ?, position = ?, visible = ?, updated_at = ? WHERE uuid = ?')
      .run(listing.name, listing.description, listing.position, listing.visible ? 1 : 0, this.clock.now().toISOString(), uuid);
  }
}
