// Panel usernames in use: a service's username is unique per panel location (the panel refuses a second one), so
// VpnProduct refuses it at saveServiceData instead of failing five job tries later.
import type Database from 'better-sqlite3';

/** Error text of the `username` field when another live service on the same panel holds it. */
export const USERNAME_TAKEN = 'The username has already been taken on this server location.';

/** Which usernames are held by live (not terminated) services per panel location. */
export interface UsernameDirectory {
  /** True when a live VpnProduct service other than `exceptService` has `username` at `location`. */
  taken(location: string, username: string, exceptService?: string | null): boolean;
}

/** Reads the platform's services and products (JSON members `server_location` and `username`); platform process only. */
export class SqliteUsernameDirectory implements UsernameDirectory {
  private readonly stmt;

  constructor(db: Database.Database) {
    this.stmt = db.prepare(`SELECT 1 FROM services s JOIN products p ON p.uuid = s.product_uuid
      WHERE s.module = 'VpnProduct' AND s.provision_status <> 'terminated'
        AND json_extract(p.product_data, '$.server_location') = ? AND json_extract(s.service_data, '$.username') = ?
        AND s.uuid <> ? LIMIT 1`);
  }

  taken(location: string, username: string, exceptService: string | null = null): boolean {
    return this.stmt.get(location, username, exceptService ?? '') !== undefined;
  }
}
