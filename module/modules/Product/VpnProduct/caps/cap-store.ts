// VpnProduct's data-cap tables (scope `module:Product/VpnProduct`, step 4): each capped service's state in its current
// period, its bytes per panel day (read from the panel's traffic statistics), and per panel the first day the next pass
// reads again (days before it are final).
import type Database from 'better-sqlite3';
import type { Clock } from '../../../../../panel/shared/clock.ts';
import type { Migration } from '../../../../platform/store/migrator.ts';
import type { CapAction, CapState } from './cap-policy.ts';

export const CAPS_MIGRATION: Migration = {
  version: 4,
  name: 'data-caps',
  up: `CREATE TABLE vpn_product_caps (
      service_uuid TEXT PRIMARY KEY,
      period_start TEXT NOT NULL,
      period_end TEXT NOT NULL,
      used_bytes INTEGER NOT NULL,
      warned INTEGER NOT NULL,
      exceeded INTEGER NOT NULL,
      applied TEXT,
      updated_at TEXT NOT NULL
    );
    CREATE TABLE vpn_product_usage_days (
      service_uuid TEXT NOT NULL,
      day TEXT NOT NULL,
      bytes INTEGER NOT NULL,
      PRIMARY KEY (service_uuid, day)
    );
    CREATE TABLE vpn_product_usage_marks (
      panel TEXT PRIMARY KEY,
      next_from TEXT NOT NULL,
      read_at TEXT NOT NULL
    );`,
};

interface CapRow {
  service_uuid: string;
  period_start: string;
  period_end: string;
  used_bytes: number;
  warned: number;
  exceeded: number;
  applied: string | null;
}

/** The cap tables. */
export class CapStore {
  private readonly getStmt;
  private readonly putStmt;
  private readonly dayStmt;
  private readonly sumStmt;
  private readonly markStmt;
  private readonly setMarkStmt;
  private readonly pruneStmt;

  constructor(private readonly db: Database.Database, private readonly clock: Clock) {
    this.getStmt = db.prepare<[string], CapRow>('SELECT * FROM vpn_product_caps WHERE service_uuid = ?');
    this.putStmt = db.prepare(`INSERT INTO vpn_product_caps (service_uuid, period_start, period_end, used_bytes, warned, exceeded, applied, updated_at)
      VALUES (@service_uuid, @period_start, @period_end, @used_bytes, @warned, @exceeded, @applied, @updated_at)
      ON CONFLICT (service_uuid) DO UPDATE SET period_start = excluded.period_start, period_end = excluded.period_end, used_bytes = excluded.used_bytes,
        warned = excluded.warned, exceeded = excluded.exceeded, applied = excluded.applied, updated_at = excluded.updated_at`);
    this.dayStmt = db.prepare(`INSERT INTO vpn_product_usage_days (service_uuid, day, bytes) VALUES (?, ?, ?)
      ON CONFLICT (service_uuid, day) DO UPDATE SET bytes = excluded.bytes`);
    this.sumStmt = db.prepare<[string, string, string], number>(
      'SELECT COALESCE(SUM(bytes), 0) FROM vpn_product_usage_days WHERE service_uuid = ? AND day >= ? AND day < ?').pluck();
    this.markStmt = db.prepare<[string], string>('SELECT next_from FROM vpn_product_usage_marks WHERE panel = ?').pluck();
    this.setMarkStmt = db.prepare(`INSERT INTO vpn_product_usage_marks (panel, next_from, read_at) VALUES (?, ?, ?)
      ON CONFLICT (panel) DO UPDATE SET next_from = excluded.next_from, read_at = excluded.read_at`);
    this.pruneStmt = db.prepare('DELETE FROM vpn_product_usage_days WHERE day < ?');
  }

  /** Services carrying a cap action in force (the pass lifts it when their plan no longer caps them). */
  withAction(): string[] {
    return this.db.prepare<[], string>('SELECT service_uuid FROM vpn_product_caps WHERE applied IS NOT NULL ORDER BY service_uuid').pluck().all();
  }

  /** The service's cap state, or null before its first pass. */
  state(serviceUuid: string): CapState | null {
    const row = this.getStmt.get(serviceUuid);
    if (!row) return null;
    return {
      period_start: row.period_start, period_end: row.period_end, used_bytes: row.used_bytes, warned: row.warned === 1,
      exceeded: row.exceeded === 1, applied: (row.applied as CapAction | null) ?? null,
    };
  }

  save(serviceUuid: string, state: CapState): void {
    this.putStmt.run({
      service_uuid: serviceUuid, period_start: state.period_start, period_end: state.period_end, used_bytes: state.used_bytes,
      warned: state.warned ? 1 : 0, exceeded: state.exceeded ? 1 : 0, applied: state.applied, updated_at: this.clock.now().toISOString(),
    });
  }

  /** Stores the bytes of the days read (a day read again replaces its earlier figure), in one transaction. */
  recordDays(rows: ReadonlyArray<{ service_uuid: string; day: string; bytes: number }>): void {
    this.db.transaction(() => {
      for (const row of rows) this.dayStmt.run(row.service_uuid, row.day, row.bytes);
    })();
  }

  /** Bytes of the service's days in `[from, to)`. */
  usedBetween(serviceUuid: string, from: string, to: string): number {
    return this.sumStmt.get(serviceUuid, from, to) ?? 0;
  }

  /** The first day the next pass reads from this panel (null: never read). */
  nextFrom(panel: string): string | null {
    return this.markStmt.get(panel) ?? null;
  }

  setNextFrom(panel: string, day: string): void {
    this.setMarkStmt.run(panel, day, this.clock.now().toISOString());
  }

  /** Forgets day figures before `day` (older than any period a pass still sums). */
  pruneBefore(day: string): number {
    return this.pruneStmt.run(day).changes;
  }
}
