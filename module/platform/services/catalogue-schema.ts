// Platform migration 7 `product-listing`: what a customer reads of a product (name, description), where it stands on
// the order page (position) and whether it is on offer (visible); indexes the back office's lists and revenue figures use.
import type { Migration } from '../store/migrator.ts';

/** Version 7 of scope `platform`. Existing products keep their order (position 0, then creation) and stay visible. */
export const PRODUCT_LISTING_MIGRATION: Migration = {
  version: 7,
  name: 'product-listing',
  up: `
    ALTER TABLE products ADD COLUMN name TEXT NOT NULL DEFAULT '';
    ALTER TABLE products ADD COLUMN description TEXT NOT NULL DEFAULT '';
    ALTER TABLE products ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE products ADD COLUMN visible INTEGER NOT NULL DEFAULT 1 CHECK (visible IN (0, 1));
    CREATE INDEX invoices_created ON invoices(created_at);
    CREATE INDEX transactions_kind_created ON transactions(kind, created_at);
    CREATE INDEX services_created ON services(created_at);
  `,
};
