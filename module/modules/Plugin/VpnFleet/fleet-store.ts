// VpnFleet's own tables (scope `module:Plugin/VpnFleet`): the last refreshed snapshot of every panel and the fleet's
// event log (panel up/down, service events with their panel), both read by the admin pages.
import type Database from 'better-sqlite3';
import type { Migration } from '../../../platform/store/migrator.ts';

export const VPN_FLEET_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'fleet',
    up: `CREATE TABLE vpn_fleet_panels (
        name TEXT PRIMARY KEY,
        location TEXT NOT NULL,
        api_url TEXT NOT NULL,
        up INTEGER NOT NULL,
        status TEXT,
        version TEXT,
        license TEXT,
        license_valid INTEGER,
        accounts INTEGER,
        accounts_available INTEGER,
        servers INTEGER,
        online_peers INTEGER,
        error TEXT,
        refreshed_at TEXT NOT NULL
      );
      CREATE TABLE vpn_fleet_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        event TEXT NOT NULL,
        panel TEXT,
        service_uuid TEXT,
        detail TEXT
      );`,
  },
];

/** One panel as the last refresh saw it; the numbers are null while it is down. */
export interface PanelSnapshot {
  name: string;
  location: string;
  api_url: string;
  up: boolean;
  status: string | null;
  version: string | null;
  license: string | null;
  license_valid: boolean | null;
  accounts: number | null;
  accounts_available: number | null;
  servers: number | null;
  online_peers: number | null;
  /** Why the panel counts as down. */
  error: string | null;
  refreshed_at: string;
}

/** One entry of the fleet's event log. */
export interface FleetEvent {
  id: number;
  at: string;
  event: string;
  panel: string | null;
  service_uuid: string | null;
  detail: string | null;
}

/** Events kept; older ones are dropped as new ones arrive. */
export const MAX_FLEET_EVENTS = 10_000;

type Row = Omit<PanelSnapshot, 'up' | 'license_valid'> & { up: number; license_valid: number | null };

/** The fleet tables. */
export class FleetStore {
  private readonly putStmt;
  private readonly listStmt;
  private readonly getStmt;
  private readonly eventStmt;
  private readonly trimStmt;
  private readonly eventsStmt;

  constructor(private readonly db: Database.Database) {
    this.putStmt = db.prepare(`INSERT INTO vpn_fleet_panels (name, location, api_url, up, status, version, license, license_valid,
        accounts, accounts_available, servers, online_peers, error, refreshed_at)
      VALUES (@name, @location, @api_url, @up, @status, @version, @license, @license_valid, @accounts, @accounts_available,
        @servers, @online_peers, @error, @refreshed_at)
      ON CONFLICT(name) DO UPDATE SET location = excluded.location, api_url = excluded.api_url, up = excluded.up,
        status = excluded.status, version = excluded.version, license = excluded.license, license_valid = excluded.license_valid,
        accounts = excluded.accounts, accounts_available = excluded.accounts_available, servers = excluded.servers,
        online_peers = excluded.online_peers, error = excluded.error, refreshed_at = excluded.refreshed_at`);
    this.listStmt = db.prepare('SELECT * FROM vpn_fleet_panels ORDER BY location, name');
    this.getStmt = db.prepare('SELECT * FROM vpn_fleet_panels WHERE name = ?');
    this.eventStmt = db.prepare('INSERT INTO vpn_fleet_events (at, event, panel, service_uuid, detail) VALUES (?, ?, ?, ?, ?)');
    this.trimStmt = db.prepare('DELETE FROM vpn_fleet_events WHERE id <= (SELECT MAX(id) FROM vpn_fleet_events) - ?');
    this.eventsStmt = db.prepare('SELECT * FROM vpn_fleet_events WHERE (? IS NULL OR panel = ?) ORDER BY id DESC LIMIT ? OFFSET ?');
  }

  /** Stores `snapshot`; answers the panel's previous one (null the first time). */
  put(snapshot: PanelSnapshot): PanelSnapshot | null {
    const previous = this.get(snapshot.name);
    this.putStmt.run({ ...snapshot, up: snapshot.up ? 1 : 0, license_valid: snapshot.license_valid === null ? null : snapshot.license_valid ? 1 : 0 });
    return previous;
  }

  get(name: string): PanelSnapshot | null {
    const row = this.getStmt.get(name) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** When the newest snapshot was taken (Unix ms), null when the fleet was never refreshed. */
  lastRefreshedAt(): number | null {
    const row = this.db.prepare('SELECT MAX(refreshed_at) AS at FROM vpn_fleet_panels').get() as { at: string | null };
    return row.at === null ? null : Date.parse(row.at);
  }

  list(): PanelSnapshot[] {
    return (this.listStmt.all() as Row[]).map(fromRow);
  }

  /** Drops the snapshots of panels no longer registered; answers their names. */
  retain(names: readonly string[]): string[] {
    const gone = this.list().map((p) => p.name).filter((name) => !names.includes(name));
    const del = this.db.prepare('DELETE FROM vpn_fleet_panels WHERE name = ?');
    for (const name of gone) del.run(name);
    return gone;
  }

  record(at: string, event: string, fields: { panel?: string | null; service_uuid?: string | null; detail?: string | null } = {}): void {
    const { lastInsertRowid } = this.eventStmt.run(at, event, fields.panel ?? null, fields.service_uuid ?? null, fields.detail ?? null);
    if (Number(lastInsertRowid) % 100 === 0) this.trimStmt.run(MAX_FLEET_EVENTS);
  }

  /** Newest first; `panel` filters. */
  events(opts: { panel?: string | null; limit?: number; offset?: number } = {}): FleetEvent[] {
    const panel = opts.panel ?? null;
    return this.eventsStmt.all(panel, panel, opts.limit ?? 50, opts.offset ?? 0) as FleetEvent[];
  }
}

function fromRow(row: Row): PanelSnapshot {
  return { ...row, up: row.up === 1, license_valid: row.license_valid === null ? null : row.license_valid === 1 };
}
