// `module_versions` over the query layer: the asynchronous twin of ../../repositories/module-versions.ts (the installed
// version of each module, which the loader compares with the code's to call `update()`).
import { systemClock, type Clock } from '../../../../../panel/shared/clock.ts';
import type { QueryStore } from '../query-store.ts';

/** Installed module versions. */
export class ModuleVersionQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  /** The installed version, or null when none is recorded. */
  async installed(type: string, name: string): Promise<string | null> {
    const row = await this.store.db.selectFrom('module_versions').select('version')
      .where('module_type', '=', type).where('module_name', '=', name).executeTakeFirst();
    return row?.version ?? null;
  }

  /** Records `version` as installed now (replacing the earlier one). */
  async record(type: string, name: string, version: string): Promise<void> {
    await this.store.db.insertInto('module_versions')
      .values({ module_type: type, module_name: name, version, updated_at: this.clock.now().toISOString() })
      .onConflict((oc) => oc.columns(['module_type', 'module_name']).doUpdateSet((eb) => ({ version: eb.ref('excluded.version'), updated_at: eb.ref('excluded.updated_at') })))
      .execute();
  }
}
