// Row types of the core tables (catalogue, customers, services, tokens, prices, versions) as both engines store them.
import type { Generated } from 'kysely';

export interface ProductsTable {
  uuid: string;
  module: string;
  product_data: string;
  name: Generated<string>;
  description: Generated<string>;
  position: Generated<number>;
  /** 1 = offered on the order page. */
  visible: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface CustomersTable {
  uuid: string;
  /** Case-insensitive on both engines (SQLite NOCASE; PostgreSQL the `vpnhost_nocase` collation). */
  email: string;
  name: Generated<string>;
  password_hash: string | null;
  created_at: string;
  updated_at: string;
}

export interface ServicesTable {
  uuid: string;
  product_uuid: string;
  module: string;
  service_data: string;
  provision_status: string;
  status_reason: string | null;
  provision_data: Generated<string>;
  customer_uuid: string | null;
  created_at: string;
  updated_at: string;
}

export interface AdminTokensTable {
  id: Generated<number>;
  digest: string;
  comment: Generated<string>;
  scope: Generated<'admin' | 'worker'>;
  created_at: string;
  last_used_at: string | null;
}

export interface PricesTable {
  product_uuid: string;
  billing_cycle: string;
  amount_minor: number;
  currency: string;
  created_at: string;
  updated_at: string;
}

export interface BillingProductsTable {
  product_uuid: string;
  refund_action: Generated<string>;
  dunning: string | null;
  updated_at: string;
}

export interface ModuleVersionsTable {
  module_type: string;
  module_name: string;
  version: string;
  updated_at: string;
}

/** The core tables by name. */
export interface CoreTables {
  products: ProductsTable;
  customers: CustomersTable;
  services: ServicesTable;
  admin_tokens: AdminTokensTable;
  prices: PricesTable;
  billing_products: BillingProductsTable;
  module_versions: ModuleVersionsTable;
}
