// Products: which module serves them and their normalized product data.
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import type { Db } from '../db.ts';

export interface ProductRecord {
  uuid: string;
  module: string;
  product_data: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

interface ProductRow extends Omit<ProductRecord, 'product_data'> {
  product_data: string;
}

/** Repository of the `products` table. */
export class ProductRepository {
  private readonly getStmt;

  constructor(private readonly db: Db, private readonly clock: Clock = systemClock) {
    this.getStmt = db.prepare('SELECT * FROM products WHERE uuid = ?');
  }

  create(module: string, productData: Record<string, unknown>, uuid: string = randomUUID()): ProductRecord {
    const now = this.clock.now().toISOString();
    this.db
      .prepare('INSERT INTO products (uuid, module, product_data, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
      .run(uuid, module, JSON.stringify(productData), now, now);
    return this.get(uuid)!;
  }

  get(uuid: string): ProductRecord | null {
    const row = this.getStmt.get(uuid) as ProductRow | undefined;
    return row ? { ...row, product_data: JSON.parse(row.product_data) as Record<string, unknown> } : null;
  }

  list(): ProductRecord[] {
    return (this.db.prepare('SELECT * FROM products ORDER BY created_at').all() as ProductRow[]).map((row) => ({
      ...row,
      product_data: JSON.parse(row.product_data) as Record<string, unknown>,
    }));
  }

  update(uuid: string, productData: Record<string, unknown>): void {
    this.db
      .prepare('UPDATE products SET product_data = ?, updated_at = ? WHERE uuid = ?')
      .run(JSON.stringify(productData), this.clock.now().toISOString(), uuid);
  }
}
