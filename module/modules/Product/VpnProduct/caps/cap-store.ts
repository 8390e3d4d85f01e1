// VpnProduct's data-cap tables (scope `module:Product/VpnProduct`, step 4): each capped service's state in its current
// period, its bytes per panel day (read from the panel's traffic statistics), and per panel the first day the next pass
// reads again (days before it are final). A state change is a conditional write (compare and set on the state read),
// so when several platform processes step one service, one of them carries out its effects.
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Clock } from '../../../../../shared/clock.ts';
import type { Migration } from '../../../../platform/store/migrator.ts';
import type { ModuleStore } from '../../../../platform/store/query/module-store.ts';
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

/** Scope `module:Product/VpnProduct` v6: when the last data-cap pass began (one pass per interval across processes). */
export const CAP_PASSES_MIGRATION: Migration = {
  version: 6,
  name: 'data-cap-passes',
  up: `CREATE TABLE vpn_product_cap_passes (
      name TEXT PRIMARY KEY,
      started_at INTEGER NOT NULL
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
  updated_at: string;
}

/** The cap tables as the module store types them. */
export interface CapTables {
  vpn_product_caps: CapRow;
  vpn_product_usage_days: { service_uuid: string; day: string; bytes: number };
  vpn_product_usage_marks: { panel: string; next_from: string; read_at: string };
  vpn_product_cap_passes: { name: string; started_at: number };
}

/** The one pass of the data caps (the row of vpn_product_cap_passes). */
const PASS = 'data-caps';

function rowOf(serviceUuid: string, state: CapState, now: string): CapRow {
  return {
    service_uuid: serviceUuid, period_start: state.period_start, period_end: state.period_end, used_bytes: state.used_bytes,
    warned: state.warned ? 1 : 0, exceeded: state.exceeded ? 1 : 0, applied: state.applied, updated_at: now,
  };
}

/** The stored row of `serviceUuid` is `state` (every field compared: the compare of a compare-and-set). */
function isState(eb: ExpressionBuilder<CapTables, 'vpn_product_caps'>, serviceUuid: string, state: CapState): Expression<SqlBool> {
  return eb.and([
    eb('service_uuid', '=', serviceUuid), eb('period_start', '=', state.period_start), eb('period_end', '=', state.period_end),
    eb('used_bytes', '=', state.used_bytes), eb('warned', '=', state.warned ? 1 : 0), eb('exceeded', '=', state.exceeded ? 1 : 0),
    state.applied === null ? eb('applied', 'is', null) : eb('applied', '=', state.applied),
  ]);
}

/** The cap tables. */
export class CapStore {
  constructor(private readonly store: ModuleStore<CapTables>, private readonly clock: Clock) {}

  /** Services carrying a cap action in force (the pass lifts it when their plan no longer caps them). */
  async withAction(): Promise<string[]> {
    return (await this.store.db.selectFrom('vpn_product_caps').select('service_uuid').where('applied', 'is not', null).orderBy('service_uuid').execute())
      .map((r) => r.service_uuid);
  }

  /** The service's cap state, or null before its first pass. */
  async state(serviceUuid: string): Promise<CapState | null> {
    const row = await this.store.db.selectFrom('vpn_product_caps').selectAll().where('service_uuid', '=', serviceUuid).executeTakeFirst();
    if (!row) return null;
    return {
      period_start: row.period_start, period_end: row.period_end, used_bytes: Number(row.used_bytes), warned: row.warned === 1,
      exceeded: row.exceeded === 1, applied: (row.applied as CapAction | null) ?? null,
    };
  }

  /** Stores `state` whatever was stored before. */
  async save(serviceUuid: string, state: CapState): Promise<void> {
    const row = rowOf(serviceUuid, state, this.clock.now().toISOString());
    const { service_uuid: _key, ...set } = row;
    await this.store.db.insertInto('vpn_product_caps').values(row).onConflict((oc) => oc.column('service_uuid').doUpdateSet(set)).execute();
  }

  /**
   * Moves the service from `from` (null: no state yet) to `to` only if `from` is still what is stored; true when this
   * caller made the move. Of two callers stepping the same state, one wins: only it carries out the step's effects.
   */
  async transition(serviceUuid: string, from: CapState | null, to: CapState): Promise<boolean> {
    const row = rowOf(serviceUuid, to, this.clock.now().toISOString());
    if (!from) {
      const inserted = await this.store.db.insertInto('vpn_product_caps').values(row).onConflict((oc) => oc.column('service_uuid').doNothing())
        .returning('service_uuid').executeTakeFirst();
      return inserted !== undefined;
    }
    const { service_uuid: _key, ...set } = row;
    const result = await this.store.db.updateTable('vpn_product_caps').set(set).where((eb) => isState(eb, serviceUuid, from)).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Drops the service's state if it is still `state` (a first step undone); true when dropped. */
  async forget(serviceUuid: string, state: CapState): Promise<boolean> {
    const result = await this.store.db.deleteFrom('vpn_product_caps').where((eb) => isState(eb, serviceUuid, state)).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** Stores the bytes of the days read (a day read again replaces its earlier figure), in one transaction. */
  async recordDays(rows: ReadonlyArray<{ service_uuid: string; day: string; bytes: number }>): Promise<void> {
    if (rows.length === 0) return;
    await this.store.transaction(async (tx) => {
      for (const row of rows) {
        await tx.db.insertInto('vpn_product_usage_days').values(row).onConflict((oc) => oc.columns(['service_uuid', 'day']).doUpdateSet({ bytes: row.bytes })).execute();
      }
    });
  }

  /** Bytes of the service's days in `[from, to)`. */
  async usedBetween(serviceUuid: string, from: string, to: string): Promise<number> {
    const row = await this.store.db.selectFrom('vpn_product_usage_days').select((eb) => eb.fn.coalesce(eb.fn.sum<number>('bytes'), eb.lit(0)).as('used'))
      .where('service_uuid', '=', serviceUuid).where('day', '>=', from).where('day', '<', to).executeTakeFirst();
    return Number(row?.used ?? 0);
  }

  /** The first day the next pass reads from this panel (null: never read). */
  async nextFrom(panel: string): Promise<string | null> {
    return (await this.store.db.selectFrom('vpn_product_usage_marks').select('next_from').where('panel', '=', panel).executeTakeFirst())?.next_from ?? null;
  }

  async setNextFrom(panel: string, day: string): Promise<void> {
    const readAt = this.clock.now().toISOString();
    await this.store.db.insertInto('vpn_product_usage_marks').values({ panel, next_from: day, read_at: readAt })
      .onConflict((oc) => oc.column('panel').doUpdateSet({ next_from: day, read_at: readAt })).execute();
  }

  /** Forgets day figures before `day` (older than any period a pass still sums). */
  async pruneBefore(day: string): Promise<number> {
    const result = await this.store.db.deleteFrom('vpn_product_usage_days').where('day', '<', day).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /**
   * Claims the pass beginning at `now` (Unix ms) when none began in the last `everyMs`: true for the one caller (of any
   * process) that claimed it. `everyMs` 0 always claims (a pass asked for by hand).
   */
  async claimPass(now: number, everyMs: number): Promise<boolean> {
    const claimed = await this.store.db.insertInto('vpn_product_cap_passes').values({ name: PASS, started_at: now })
      .onConflict((oc) => oc.column('name').doUpdateSet({ started_at: now }).where('vpn_product_cap_passes.started_at', '<=', now - everyMs))
      .returning('name').executeTakeFirst();
    return claimed !== undefined;
  }
}
