// VpnProduct's own tables (scope `module:Product/VpnProduct`): the panels it provisions onto (several may serve one
// location, each known by its unique `name`), access hashes sealed.
import type { Generated, Kysely } from 'kysely';
import type { Clock } from '../../../../shared/clock.ts';
import type { Sealer } from '../../../platform/extension.ts';
import type { Migration } from '../../../platform/store/migrator.ts';
import type { ModuleStore } from '../../../platform/store/query/module-store.ts';
import { CompiledStatement } from '../../../store-kernel/compiled-statement.ts';
import type { PanelConnectionInfo, PanelDirectory } from './panel-registry.ts';

/**
 * v1 takes over the platform's earlier `panels` table (created by the platform's first migration, rows kept) as
 * `vpn_product_panels`; on a database without it, creates the table.
 */
export const VPN_PRODUCT_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'panels',
    up: (db) => {
      const legacy = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'panels'").get();
      if (legacy) {
        db.exec('ALTER TABLE panels RENAME TO vpn_product_panels');
        return;
      }
      db.exec(`CREATE TABLE vpn_product_panels (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        location TEXT NOT NULL UNIQUE,
        api_url TEXT NOT NULL,
        access_hash_sealed TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )`);
    },
    // The platform's first migration creates `panels` on PostgreSQL too: taken over the same way.
    postgres: 'ALTER TABLE panels RENAME TO vpn_product_panels',
  },
  {
    version: 2,
    name: 'panels-per-location',
    // A location may be served by several panels: `name` (unique; the location for existing rows) identifies a panel.
    up: `CREATE TABLE vpn_product_panels_v2 (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        location TEXT NOT NULL,
        api_url TEXT NOT NULL,
        access_hash_sealed TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      INSERT INTO vpn_product_panels_v2 (id, name, location, api_url, access_hash_sealed, created_at, updated_at)
        SELECT id, location, location, api_url, access_hash_sealed, created_at, updated_at FROM vpn_product_panels;
      DROP TABLE vpn_product_panels;
      ALTER TABLE vpn_product_panels_v2 RENAME TO vpn_product_panels;
      CREATE INDEX vpn_product_panels_location ON vpn_product_panels (location, name);`,
    // The same change in place (the UNIQUE on location is the one the platform's `panels` table was created with).
    postgres: `ALTER TABLE vpn_product_panels ADD COLUMN name text COLLATE "C";
      UPDATE vpn_product_panels SET name = location;
      ALTER TABLE vpn_product_panels ALTER COLUMN name SET NOT NULL;
      ALTER TABLE vpn_product_panels DROP CONSTRAINT panels_location_key;
      ALTER TABLE vpn_product_panels ADD UNIQUE (name);
      CREATE INDEX vpn_product_panels_location ON vpn_product_panels (location, name);`,
  },
];

/** A panel as listed to admins: no access hash. */
export interface PanelSummary {
  id: number;
  /** Unique name of the panel (its location unless given at registration). */
  name: string;
  location: string;
  api_url: string;
  created_at: string;
}

/** A panel with its opened access hash, for the panel client only. */
export interface PanelConnection extends PanelSummary {
  access_hash: string;
}

interface PanelRow extends PanelSummary {
  access_hash_sealed: string;
}

/** The `vpn_product_panels` table as the module store types it. */
export interface PanelTables {
  vpn_product_panels: Omit<PanelRow, 'id'> & { id: Generated<number>; updated_at: string };
}

/** The panels of a location (every placement reads them: compiled once). */
const PANELS_AT = new CompiledStatement<{ location: string }, { name: string }>((store, v) =>
  (store.db as Kysely<PanelTables>).selectFrom('vpn_product_panels').select('name').where('location', '=', v.location).orderBy('name'));

/** The `vpn_product_panels` table (the PanelDirectory of the platform process). */
export class PanelStore implements PanelDirectory {
  constructor(private readonly store: ModuleStore<PanelTables>, private readonly sealer: Sealer, private readonly clock: Clock) {}

  /** Registers a panel, or replaces location, URL and hash of the panel named `name` (default: the location). */
  async upsert(input: { name?: string; location: string; api_url: string; access_hash: string }): Promise<PanelSummary> {
    const now = this.clock.now().toISOString();
    const name = input.name ?? input.location;
    const sealed = this.sealer.seal(input.access_hash);
    await this.store.db.insertInto('vpn_product_panels')
      .values({ name, location: input.location, api_url: input.api_url, access_hash_sealed: sealed, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('name').doUpdateSet({ location: input.location, api_url: input.api_url, access_hash_sealed: sealed, updated_at: now }))
      .execute();
    return summary((await this.row(name))!);
  }

  async list(): Promise<PanelSummary[]> {
    return (await this.store.db.selectFrom('vpn_product_panels').selectAll().orderBy('location').orderBy('name').execute()).map(summary);
  }

  /** Distinct locations served by at least one panel. */
  async locations(): Promise<string[]> {
    return [...new Set((await this.list()).map((p) => p.location))];
  }

  /** Names of the panels serving `location`, sorted. */
  async panelsAt(location: string): Promise<string[]> {
    return (await PANELS_AT.execute(this.store, { location })).rows.map((r) => r.name);
  }

  /** The panel named `name` with its access hash opened, or null. */
  async connection(name: string): Promise<PanelConnection | null> {
    const row = await this.row(name);
    return row ? { ...summary(row), access_hash: this.sealer.open(row.access_hash_sealed) } : null;
  }

  private async row(name: string): Promise<PanelRow | undefined> {
    return this.store.db.selectFrom('vpn_product_panels').selectAll().where('name', '=', name).executeTakeFirst();
  }
}

function summary(row: PanelRow): PanelSummary {
  return { id: row.id, name: row.name, location: row.location, api_url: row.api_url, created_at: row.created_at };
}

/** Only the connection (URL and opened hash), as the worker route answers it. */
export function connectionInfo(panel: PanelConnection): PanelConnectionInfo {
  return { api_url: panel.api_url, access_hash: panel.access_hash };
}
