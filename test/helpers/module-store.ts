// A module's store on a fresh SQLite platform database in memory (every platform scope migrated, then the module's own
// scope): what the host hands the module as `ExtensionEnv.store`, for unit tests of the module's stores.
import Database from 'better-sqlite3';
import type { Migration } from '../../module/platform/store/migrator.ts';
import { moduleStore, tablesOfScope, type ModuleStore } from '../../module/platform/store/query/module-store.ts';
import { PLATFORM_STORE_SCOPES, sqliteQueryStore, type QueryStore } from '../../module/platform/store/query/query-store.ts';

/** The store of module `<type>/<name>` with `migrations` applied on `store` (default: a new in-memory SQLite platform). */
export async function openModuleStore<Tables>(type: string, name: string, migrations: readonly Migration[], store?: QueryStore): Promise<{ store: ModuleStore<Tables>; query: QueryStore }> {
  const query = store ?? sqliteQueryStore(new Database(':memory:'));
  const scope = `module:${type}/${name}`;
  if (!store) await query.migrate(PLATFORM_STORE_SCOPES);
  await query.migrate([[scope, migrations]]);
  return { store: moduleStore<Tables>(query, scope, tablesOfScope(PLATFORM_STORE_SCOPES, scope, migrations)), query };
}
