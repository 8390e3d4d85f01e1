// VpnFleet's own tables (scope `module:Plugin/VpnFleet`): the last refreshed snapshot of every panel and the fleet's
// event log (panel up/down, service events with their panel), both read by the admin pages.
import type { Generated } from 'kysely';
import type { Migration } from '../../../platform/store/migrator.ts';
import { InsertBatcher } from '../../../platform/store/query/insert-batcher.ts';
import type { ModuleStore } from '../../../platform/store/query/module-store.ts';

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
  {
    version: 2,
    name: 'refresh-due',
    // When the last refresh was queued (Unix ms), one row shared by every platform process: the due check is a
    // conditional write on it, so one process queues each refresh.
    up: `CREATE TABLE vpn_fleet_refresh (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        queued_at BIGINT NOT NULL
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

/** The fleet tables as the module store types them. */
export interface FleetTables {
  vpn_fleet_panels: Row;
  vpn_fleet_events: Omit<FleetEvent, 'id'> & { id: Generated<number> };
  vpn_fleet_refresh: { id: number; queued_at: number };
}

type EventRow = Omit<FleetEvent, 'id'>;

/**
 * The fleet tables. Events are written in batches (insert-batcher.ts): the service events of many jobs finishing at once
 * cost one INSERT per round trip, not one each; `record` answers once its row is stored.
 */
export class FleetStore {
  /** Service events gather for a turn of the event loop (two per provisioning); `record` still answers once stored. */
  private readonly eventBatches = new InsertBatcher<EventRow>((rows) => this.insertEvents(rows), 200, 'turn');

  constructor(private readonly store: ModuleStore<FleetTables>) {}

  /** Stores `snapshot`; answers the panel's previous one (null the first time). */
  async put(snapshot: PanelSnapshot): Promise<PanelSnapshot | null> {
    const previous = await this.get(snapshot.name);
    const row: Row = { ...snapshot, up: snapshot.up ? 1 : 0, license_valid: snapshot.license_valid === null ? null : snapshot.license_valid ? 1 : 0 };
    const { name: _key, ...set } = row;
    await this.store.db.insertInto('vpn_fleet_panels').values(row).onConflict((oc) => oc.column('name').doUpdateSet(set)).execute();
    return previous;
  }

  async get(name: string): Promise<PanelSnapshot | null> {
    const row = await this.store.db.selectFrom('vpn_fleet_panels').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? fromRow(row) : null;
  }

  /**
   * Claims the refresh due at `now` (every `everyMs`): true for the one caller of any process that moves the shared
   * queued time from at least `everyMs` ago to `now`. `since` seeds that time the first time (the newest snapshot).
   */
  async claimRefresh(now: number, everyMs: number, since: () => Promise<number>): Promise<boolean> {
    const seeded = await this.store.db.selectFrom('vpn_fleet_refresh').select('id').where('id', '=', 1).executeTakeFirst();
    if (!seeded) await this.store.db.insertInto('vpn_fleet_refresh').values({ id: 1, queued_at: await since() }).onConflict((oc) => oc.column('id').doNothing()).execute();
    const result = await this.store.db.updateTable('vpn_fleet_refresh').set({ queued_at: now })
      .where('id', '=', 1).where('queued_at', '<=', now - everyMs)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Records a refresh queued at `now` outside the schedule (the admin's button): the next due one counts from it. */
  async refreshQueued(now: number): Promise<void> {
    await this.store.db.insertInto('vpn_fleet_refresh').values({ id: 1, queued_at: now })
      .onConflict((oc) => oc.column('id').doUpdateSet({ queued_at: now })).execute();
  }

  /** When the newest snapshot was taken (Unix ms), null when the fleet was never refreshed. */
  async lastRefreshedAt(): Promise<number | null> {
    const row = await this.store.db.selectFrom('vpn_fleet_panels').select((eb) => eb.fn.max('refreshed_at').as('at')).executeTakeFirst();
    return row?.at == null ? null : Date.parse(row.at);
  }

  async list(): Promise<PanelSnapshot[]> {
    return (await this.store.db.selectFrom('vpn_fleet_panels').selectAll().orderBy('location').orderBy('name').execute()).map(fromRow);
  }

  /** Drops the snapshots of panels no longer registered; answers their names. */
  async retain(names: readonly string[]): Promise<string[]> {
    const gone = (await this.list()).map((p) => p.name).filter((name) => !names.includes(name));
    if (gone.length) await this.store.db.deleteFrom('vpn_fleet_panels').where('name', 'in', gone).execute();
    return gone;
  }

  async record(at: string, event: string, fields: { panel?: string | null; service_uuid?: string | null; detail?: string | null } = {}): Promise<void> {
    await this.eventBatches.add({ at, event, panel: fields.panel ?? null, service_uuid: fields.service_uuid ?? null, detail: fields.detail ?? null });
  }

  /** One batch of events; past every 100th id, the events older than the newest MAX_FLEET_EVENTS are dropped. */
  private async insertEvents(rows: EventRow[]): Promise<void> {
    const ids = (await this.store.db.insertInto('vpn_fleet_events').values(rows).returning('id').execute()).map((row) => Number(row.id));
    const newest = Math.max(...ids);
    if (ids.some((id) => id % 100 === 0)) await this.store.db.deleteFrom('vpn_fleet_events').where('id', '<=', newest - MAX_FLEET_EVENTS).execute();
  }

  /** Newest first; `panel` filters. */
  async events(opts: { panel?: string | null; limit?: number; offset?: number } = {}): Promise<FleetEvent[]> {
    let query = this.store.db.selectFrom('vpn_fleet_events').selectAll();
    if (opts.panel) query = query.where('panel', '=', opts.panel);
    return query.orderBy('id', 'desc').limit(opts.limit ?? 50).offset(opts.offset ?? 0).execute();
  }
}

function fromRow(row: Row): PanelSnapshot {
  return { ...row, up: row.up === 1, license_valid: row.license_valid === null ? null : row.license_valid === 1 };
}
