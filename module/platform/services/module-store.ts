// The module host's tables (scope `module-host`): each module's switched state with its last lifecycle answer, and the
// sealed `module_data` of Payment gateway / Notification channel instances.
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Clock } from '../../../panel/shared/clock.ts';
import type { Sealer } from '../extension.ts';
import { runMigrations, type Migration } from '../store/migrator.ts';

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
];

/** The module host's tables as the query layer sees them. */
export interface ModuleHostTables {
  module_states: { module_type: string; module_name: string; active: number; last_action: string; last_result: string; updated_at: string };
  module_instances: { uuid: string; module_type: string; module_name: string; label: string; module_data_sealed: string; created_at: string; updated_at: string };
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

/** Module states of the platform database. */
export class ModuleStateStore {
  private readonly getStmt;
  private readonly putStmt;

  constructor(db: Database.Database, private readonly clock: Clock) {
    runMigrations(db, MODULE_HOST_SCOPE, MODULE_HOST_MIGRATIONS, clock);
    this.getStmt = db.prepare('SELECT * FROM module_states WHERE module_type = ? AND module_name = ?');
    this.putStmt = db.prepare(`INSERT INTO module_states (module_type, module_name, active, last_action, last_result, updated_at)
      VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (module_type, module_name) DO UPDATE SET active = excluded.active,
      last_action = excluded.last_action, last_result = excluded.last_result, updated_at = excluded.updated_at`);
  }

  /** The recorded state, or null when the admin never switched the module (config.ts `enabled` decides). */
  get(type: string, name: string): ModuleState | null {
    const row = this.getStmt.get(type, name) as (Omit<ModuleState, 'active'> & { active: number }) | undefined;
    return row ? { ...row, active: row.active === 1 } : null;
  }

  record(type: string, name: string, active: boolean, action: string, result: string): ModuleState {
    this.putStmt.run(type, name, active ? 1 : 0, action, result, this.clock.now().toISOString());
    return this.get(type, name)!;
  }
}

/** Payment gateway / Notification channel instances; `module_data` sealed as a whole with the platform SecretBox. */
export class ModuleInstanceStore {
  private readonly getStmt;
  private readonly listStmt;
  private readonly insertStmt;
  private readonly updateStmt;

  constructor(db: Database.Database, private readonly sealer: Sealer, private readonly clock: Clock) {
    runMigrations(db, MODULE_HOST_SCOPE, MODULE_HOST_MIGRATIONS, clock);
    this.getStmt = db.prepare('SELECT * FROM module_instances WHERE uuid = ?');
    this.listStmt = db.prepare('SELECT * FROM module_instances WHERE module_type = ? AND module_name = ? ORDER BY created_at, uuid');
    this.insertStmt = db.prepare(`INSERT INTO module_instances (uuid, module_type, module_name, label, module_data_sealed, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)`);
    this.updateStmt = db.prepare('UPDATE module_instances SET label = ?, module_data_sealed = ?, updated_at = ? WHERE uuid = ?');
  }

  create(type: 'Payment' | 'Notification', name: string, label: string, data: Record<string, unknown>): ModuleInstance {
    const uuid = randomUUID();
    const now = this.clock.now().toISOString();
    this.insertStmt.run(uuid, type, name, label, this.sealer.seal(JSON.stringify(data)), now, now);
    return this.get(uuid)!;
  }

  get(uuid: string): ModuleInstance | null {
    const row = this.getStmt.get(uuid) as InstanceRow | undefined;
    return row ? this.open(row) : null;
  }

  list(type: string, name: string): ModuleInstanceSummary[] {
    return (this.listStmt.all(type, name) as InstanceRow[]).map(({ module_data_sealed: _sealed, ...summary }) => summary);
  }

  update(uuid: string, label: string, data: Record<string, unknown>): ModuleInstance | null {
    const changed = this.updateStmt.run(label, this.sealer.seal(JSON.stringify(data)), this.clock.now().toISOString(), uuid).changes;
    return changed ? this.get(uuid) : null;
  }

  private open(row: InstanceRow): ModuleInstance {
    const { module_data_sealed, ...summary } = row;
    return { ...summary, module_data: JSON.parse(this.sealer.open(module_data_sealed)) as Record<string, unknown> };
  }
}
