// `module_versions` (scope `module-versions`) over the query layer: the installed version of each module, which the
// loader compares with the code's to call `update()`; and the platform's ModuleVersionStore on top of it.
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import type { ModuleVersionStore } from '../../../../contract/platform-context.ts';
import type { Migration } from '../../migrator.ts';
import type { QueryStore } from '../query-store.ts';

/** Scope `module-versions` of the platform database (version 1 is the earlier unversioned table, hence `IF NOT EXISTS`). */
export const MODULE_VERSION_MIGRATIONS: readonly Migration[] = [{
  version: 1,
  name: 'module-versions',
  up: `CREATE TABLE IF NOT EXISTS module_versions (
    module_type TEXT NOT NULL,
    module_name TEXT NOT NULL,
    version TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (module_type, module_name)
  )`,
}];

/** Installed module versions. */
export class ModuleVersionQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  /** The installed version, or null when none is recorded. */
  async installed(type: string, name: string): Promise<string | null> {
    const row = await this.store.db.selectFrom('module_versions').select('version')
      .where('module_type', '=', type).where('module_name', '=', name).executeTakeFirst();
    return row?.version ?? null;
  }

  /** Every recorded version. */
  async all(): Promise<Array<{ type: string; name: string; version: string }>> {
    const rows = await this.store.db.selectFrom('module_versions').select(['module_type', 'module_name', 'version']).execute();
    return rows.map((r) => ({ type: r.module_type, name: r.module_name, version: r.version }));
  }

  /** Records `version` as installed now (replacing the earlier one). */
  async record(type: string, name: string, version: string): Promise<void> {
    await this.store.db.insertInto('module_versions')
      .values({ module_type: type, module_name: name, version, updated_at: this.clock.now().toISOString() })
      .onConflict((oc) => oc.columns(['module_type', 'module_name']).doUpdateSet((eb) => ({ version: eb.ref('excluded.version'), updated_at: eb.ref('excluded.updated_at') })))
      .execute();
  }
}

/**
 * The platform's ModuleVersionStore: `installed` answers (synchronously, as `getCurrentVersion()` must) from the versions
 * last loaded; `refresh` loads them all again (the host does before it compares versions); `record` stores and
 * remembers. Load it once (`refresh`) before the modules are.
 */
export class StoredModuleVersions implements ModuleVersionStore {
  private readonly queries: ModuleVersionQueries;
  private versions = new Map<string, string>();

  constructor(store: QueryStore, clock: Clock = systemClock) {
    this.queries = new ModuleVersionQueries(store, clock);
  }

  installed(type: string, name: string): string | null {
    return this.versions.get(`${type}/${name}`) ?? null;
  }

  async record(type: string, name: string, version: string): Promise<void> {
    await this.queries.record(type, name, version);
    this.versions.set(`${type}/${name}`, version);
  }

  async refresh(): Promise<void> {
    this.versions = new Map((await this.queries.all()).map((v) => [`${v.type}/${v.name}`, v.version]));
  }
}
