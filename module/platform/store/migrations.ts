// Numbered schema migrations of the platform store (panels, products, services, admin and worker tokens).

import { RECURRING_BILLING_MIGRATION } from '../services/billing/recurring-schema.ts';
import { ORDERS_INVOICES_MIGRATION } from '../services/billing/schema.ts';
import { PRODUCT_LISTING_MIGRATION } from '../services/catalogue-schema.ts';
import type { Migration } from './migrator.ts';

/** Scope `platform`, applied by `runMigrations` in ascending version order; a step is never edited after release. */

export const PLATFORM_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    up: `
      CREATE TABLE panels (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        location TEXT NOT NULL UNIQUE,
        api_url TEXT NOT NULL,
        access_hash_sealed TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE products (
        uuid TEXT PRIMARY KEY,
        module TEXT NOT NULL,
        product_data TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE services (
        uuid TEXT PRIMARY KEY,
        product_uuid TEXT NOT NULL REFERENCES products(uuid),
        module TEXT NOT NULL,
        service_data TEXT NOT NULL,
        provision_status TEXT NOT NULL,
        status_reason TEXT,
        provision_data TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX services_product ON services(product_uuid);
      CREATE INDEX services_status ON services(provision_status);
      CREATE TABLE admin_tokens (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        digest TEXT NOT NULL UNIQUE,
        comment TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        last_used_at TEXT
      );
    `,
  },
  {
    version: 2,
    name: 'token-scopes',
    // `admin` tokens open /api/admin, `worker` tokens only /api/worker (remote worker processes).
    up: `ALTER TABLE admin_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'admin' CHECK (scope IN ('admin', 'worker'));`,
  },
  {
    version: 3,
    name: 'customers',
    // The people who own services: created by an admin, or by the order flow. A service may have no customer
    // (services created through the admin API before customers existed, or for internal use).
    up: `
      CREATE TABLE customers (
        uuid TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        name TEXT NOT NULL DEFAULT '',
        password_hash TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      ALTER TABLE services ADD COLUMN customer_uuid TEXT REFERENCES customers(uuid);
      CREATE INDEX services_customer ON services(customer_uuid);
    `,
  },
  {
    version: 4,
    name: 'web-users',
    // The web host: admin roles (permission keys, `*` = every key), admin users (scrypt password hashes), customers'
    // session version (bumped on password change / logout everywhere) and the web secrets (sealed with the SecretBox).
    up: `
      CREATE TABLE admin_roles (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        permissions TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      INSERT INTO admin_roles (name, permissions, created_at, updated_at)
        VALUES ('Administrator', '["*"]', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
      CREATE TABLE admin_users (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        name TEXT NOT NULL DEFAULT '',
        password_hash TEXT NOT NULL,
        role_id INTEGER NOT NULL REFERENCES admin_roles(id),
        session_version INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        last_login_at TEXT
      );
      ALTER TABLE customers ADD COLUMN session_version INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE web_secrets (
        name TEXT PRIMARY KEY,
        value_sealed TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
    `,
  },
  ORDERS_INVOICES_MIGRATION,
  RECURRING_BILLING_MIGRATION,
  PRODUCT_LISTING_MIGRATION,
];
