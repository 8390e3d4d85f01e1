// The module host's tables (scope `module-host`): each module's switched state with its last lifecycle answer, the switch
// version every process follows (bumped with each switch in the same transaction), and the sealed `module_data` of
// Payment gateway / Notification channel instances.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../../shared/clock.ts';
import type { Sealer } from '../extension.ts';
import type { Migration } from '../store/migrator.ts';
import type { QueryStore } from '../store/query/query-store.ts';

export const MODULE_HOST_SCOPE = 'module-host';

export const MODULE_HOST_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'module-states-and-instances',
    up: `
      CREATE TABLE module_states (
        module_type TEXT NOT NULL,
        module_name TEXT NOT NULL,
        active INTEGER NOT NULL CHECK (active IN (0, 1)),
        last_action TEXT NOT NULL,
        last_result TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (module_type, module_name)
      );
      CREATE TABLE module_instances (
        uuid TEXT PRIMARY KEY,
        module_type TEXT NOT NULL CHECK (module_type IN ('Payment', 'Notification')),
        module_name TEXT NOT NULL,
        label TEXT NOT NULL,
        module_data_sealed TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX module_instances_module ON module_instances (module_type, module_name, created_at);
    `,
  },
  {
    version: 2,
    name: 'module-switch-version',
    // One row (id 1), written with each recorded switch: a process that sees it move applies the switches (any engine).
    up: `CREATE TABLE module_switch_version (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        version INTEGER NOT NULL
      );`,
  },
  {
    version: 3,
    name: 'scheduled-slots',
    // A manifest's scheduled work claims each tick (slot = floor(now / everyMs)) here: the one insert that lands runs it.
    up: `CREATE TABLE scheduled_slots (
        work TEXT NOT NULL,
        slot BIGINT NOT NULL,
        claimed_at TEXT NOT NULL,
        PRIMARY KEY (work, slot)
      );`,
  },
];

/** The module host's tables as the query layer sees them. */
export interface ModuleHostTables {
  module_states: { module_type: string; module_name: string; active: number; last_action: string; last_result: string; updated_at: string };
  module_instances: { uuid: string; module_type: string; module_name: string; label: string; module_data_sealed: string; created_at: string; updated_at: string };
  module_switch_version: { id: number; version: number };
  scheduled_slots: { work: string; slot: number; claimed_at: string };
}

/** A module's recorded state: switched on or off, and what its last activate/deactivate/update answered. */
export interface ModuleState {
  module_type: string;
  module_name: string;
  active: boolean;
  last_action: string;
  last_result: string;
  updated_at: string;
}

/** A gateway / channel instance without its settings. */
export interface ModuleInstanceSummary {
  uuid: string;
  module_type: string;
  module_name: string;
  label: string;
  created_at: string;
  updated_at: string;
}

/** An instance with its `module_data` opened (for the module only, never for an API answer). */
export interface ModuleInstance extends ModuleInstanceSummary {
  module_data: Record<string, unknown>;
}

interface InstanceRow extends ModuleInstanceSummary {
  module_data_sealed: string;
}

/** Module states on the platform's store (either engine), with the switch version every process follows. */
export class ModuleStateStore {
  private readonly db: Kysely<ModuleHostTables>;

  private constructor(private readonly store: QueryStore, private readonly clock: Clock) {
    this.db = store.db as unknown as Kysely<ModuleHostTables>;
  }

  /** The store over `store`, its scope migrated. */
  static async open(store: QueryStore, clock: Clock): Promise<ModuleStateStore> {
    await store.migrate([[MODULE_HOST_SCOPE, MODULE_HOST_MIGRATIONS]], clock);
    return new ModuleStateStore(store, clock);
  }

  /** The recorded state, or null when the admin never switched the module (config.ts `enabled` decides). */
  async get(type: string, name: string): Promise<ModuleState | null> {
    const row = await this.db.selectFrom('module_states').selectAll().where('module_type', '=', type).where('module_name', '=', name).executeTakeFirst();
    return row ? { ...row, active: Number(row.active) === 1 } : null;
  }

  /** Records a switch (or a lifecycle answer) and moves the switch version, in one transaction. */
  async record(type: string, name: string, active: boolean, action: string, result: string): Promise<ModuleState> {
    const row = { module_type: type, module_name: name, active: active ? 1 : 0, last_action: action, last_result: result, updated_at: this.clock.now().toISOString() };
    await this.store.transaction(async (tx) => {
      const db = tx.db as unknown as Kysely<ModuleHostTables>;
      await db.insertInto('module_states').values(row)
        .onConflict((oc) => oc.columns(['module_type', 'module_name']).doUpdateSet({ active: row.active, last_action: action, last_result: result, updated_at: row.updated_at }))
        .execute();
      await db.insertInto('module_switch_version').values({ id: 1, version: 1 })
        .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ version: eb('module_switch_version.version', '+', 1) })))
        .execute();
    });
    return (await this.get(type, name))!;
  }

  /**
   * Claims tick `slot` of scheduled work `work` for this process: true for the one caller of any process whose insert
   * lands, false for every other (a conditional write, either engine). Slots older than `keep` before it are dropped.
   */
  async claimSlot(work: string, slot: number, keep = 16): Promise<boolean> {
    const result = await this.db.insertInto('scheduled_slots').values({ work, slot, claimed_at: this.clock.now().toISOString() })
      .onConflict((oc) => oc.columns(['work', 'slot']).doNothing())
      .executeTakeFirst();
    const won = Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    if (won) await this.db.deleteFrom('scheduled_slots').where('work', '=', work).where('slot', '<', slot - keep).execute();
    return won;
  }

  /** The switch version: moves with every recorded switch of any process (0 before the first). */
  async version(): Promise<number> {
    const row = await this.db.selectFrom('module_switch_version').select('version').where('id', '=', 1).executeTakeFirst();
    return Number(row?.version ?? 0);
  }
}

/** Payment gateway / Notification channel instances on the platform's store (either engine); `module_data` sealed as a
 * whole with the platform SecretBox. */
export class ModuleInstanceStore {
  private readonly db: Kysely<ModuleHostTables>;

  private constructor(store: QueryStore, private readonly sealer: Sealer, private readonly clock: Clock) {
    this.db = store.db as unknown as Kysely<ModuleHostTables>;
  }

  /** The store over `store`, its scope migrated. */
  static async open(store: QueryStore, sealer: Sealer, clock: Clock): Promise<ModuleInstanceStore> {
    await store.migrate([[MODULE_HOST_SCOPE, MODULE_HOST_MIGRATIONS]], clock);
    return new ModuleInstanceStore(store, sealer, clock);
  }

  /** Stores a new instance with `data` sealed; answers it opened. */
  async create(type: 'Payment' | 'Notification', name: string, label: string, data: Record<string, unknown>): Promise<ModuleInstance> {
    const uuid = randomUUID();
    const now = this.clock.now().toISOString();
    await this.db.insertInto('module_instances')
      .values({ uuid, module_type: type, module_name: name, label, module_data_sealed: this.sealer.seal(JSON.stringify(data)), created_at: now, updated_at: now })
      .execute();
    return (await this.get(uuid))!;
  }

  /** The instance with its `module_data` opened, or null. */
  async get(uuid: string): Promise<ModuleInstance | null> {
    const row = await this.db.selectFrom('module_instances').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    return row ? this.open(row) : null;
  }

  /** A module's instances without their settings, oldest first. */
  async list(type: string, name: string): Promise<ModuleInstanceSummary[]> {
    const rows = await this.db.selectFrom('module_instances')
      .select(['uuid', 'module_type', 'module_name', 'label', 'created_at', 'updated_at'])
      .where('module_type', '=', type).where('module_name', '=', name)
      .orderBy('created_at').orderBy('uuid')
      .execute();
    return rows;
  }

  /** Replaces label and settings; null when no such instance. */
  async update(uuid: string, label: string, data: Record<string, unknown>): Promise<ModuleInstance | null> {
    const result = await this.db.updateTable('module_instances')
      .set({ label, module_data_sealed: this.sealer.seal(JSON.stringify(data)), updated_at: this.clock.now().toISOString() })
      .where('uuid', '=', uuid)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0 ? this.get(uuid) : null;
  }

  private open(row: InstanceRow): ModuleInstance {
    const { module_data_sealed, ...summary } = row;
    return { ...summary, module_data: JSON.parse(this.sealer.open(module_data_sealed)) as Record<string, unknown> };
  }
}
