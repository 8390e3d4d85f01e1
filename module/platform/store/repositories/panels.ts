// Panels the platform provisions onto: location, API URL and the access hash (sealed, never listed).
import type { SecretBox } from '../../../../panel/security/secret-box.ts';
import type { Db } from '../db.ts';

/** A panel as listed to admins: no access hash. */
export interface PanelSummary {
  id: number;
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

/** Repository of the `panels` table. */
export class PanelRepository {
  constructor(private readonly db: Db, private readonly box: SecretBox) {}

  /** Registers a panel, or replaces URL and hash of the panel already at `location`. */
  upsert(input: { location: string; api_url: string; access_hash: string }): PanelSummary {
    const now = new Date().toISOString();
    this.db
      .prepare(`INSERT INTO panels (location, api_url, access_hash_sealed, created_at, updated_at)
        VALUES (@location, @api_url, @sealed, @now, @now)
        ON CONFLICT(location) DO UPDATE SET api_url = excluded.api_url,
          access_hash_sealed = excluded.access_hash_sealed, updated_at = excluded.updated_at`)
      .run({ location: input.location, api_url: input.api_url, sealed: this.box.seal(input.access_hash), now });
    return this.summary(this.row(input.location)!);
  }

  list(): PanelSummary[] {
    return (this.db.prepare('SELECT * FROM panels ORDER BY location').all() as PanelRow[]).map((row) => this.summary(row));
  }

  locations(): string[] {
    return (this.db.prepare('SELECT location FROM panels ORDER BY location').all() as Array<{ location: string }>).map((r) => r.location);
  }

  /** The panel at `location` with its access hash opened, or null. */
  connection(location: string): PanelConnection | null {
    const row = this.row(location);
    return row ? { ...this.summary(row), access_hash: this.box.open(row.access_hash_sealed) } : null;
  }

  private row(location: string): PanelRow | undefined {
    return this.db.prepare('SELECT * FROM panels WHERE location = ?').get(location) as PanelRow | undefined;
  }

  private summary(row: PanelRow): PanelSummary {
    return { id: row.id, location: row.location, api_url: row.api_url, created_at: row.created_at };
  }
}
