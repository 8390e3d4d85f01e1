// A module's store (issue 22 item 2, the store half): the query layer narrowed to the tables the module's own migration
// scope creates. Its Kysely instance is typed by the module's table interface and a plugin refuses, before anything
// runs, a query naming any other table (the platform's or another module's) and raw SQL as a whole query.
import Database from 'better-sqlite3';
import type { Kysely, KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { runMigrations } from '../migrator.ts';
import type { ScopeList } from '../sql/pg-migrator.ts';
import type { QueryStore, StoreEngine } from './query-store.ts';

/** What a module gets instead of a database handle (`ExtensionEnv.store`). */
export interface ModuleStore<Tables = any> {
  readonly engine: StoreEngine;
  /** Builder queries over the module's own tables only (the same connection pool as the platform's). */
  readonly db: Kysely<Tables>;
  readonly tables: readonly string[];
  /**
   * Runs `work` in one transaction over the module's tables (joins an outer one): a throw undoes all of it. Keep it to
   * the module's own queries: on SQLite it holds the one connection until it ends.
   */
  transaction<T>(work: (tx: ModuleStore<Tables>) => Promise<T>): Promise<T>;
}

/** A module's query named a table outside its scope (or was raw SQL). Nothing was sent to the database. */
export class StoreScopeError extends Error {}

/** Table names, aliases and CTE names found in a query tree. */
function namesIn(node: unknown, found = { tables: new Set<string>(), aliases: new Set<string>() }): typeof found {
  if (Array.isArray(node)) {
    for (const item of node) namesIn(item, found);
  } else if (node && typeof node === 'object') {
    const n = node as Record<string, any>;
    if (n.kind === 'TableNode') found.tables.add(n.table.identifier.name);
    if (n.kind === 'AliasNode' && n.node?.kind === 'TableNode') found.aliases.add(n.alias.name);
    if (n.kind === 'CommonTableExpressionNameNode') found.aliases.add(n.table.table.identifier.name);
    for (const value of Object.values(n)) if (value && typeof value === 'object') namesIn(value, found);
  }
  return found;
}

/** The plugin behind a module store: checks every query's tables against the scope's. */
class ScopeGuard implements KyselyPlugin {
  constructor(private readonly scope: string, private readonly allowed: ReadonlySet<string>) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'RawNode') throw new StoreScopeError(`${this.scope}: a module store runs builder queries only, not raw SQL`);
    const { tables, aliases } = namesIn(args.node);
    for (const table of tables) {
      if (!this.allowed.has(table) && !aliases.has(table)) {
        throw new StoreScopeError(`${this.scope} may not use table ${table} (its tables: ${[...this.allowed].join(', ') || 'none'})`);
      }
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/**
 * The tables `scope`'s steps create, found by running `platform` (the scopes built before it) and then the scope on a
 * reference SQLite database in memory — the same source both engines are migrated from.
 */
export function tablesOfScope(platform: ScopeList, scope: string, migrations: ScopeList[number][1]): string[] {
  const ref = new Database(':memory:');
  try {
    for (const [name, steps] of platform) runMigrations(ref, name, steps);
    const names = (): Set<string> => new Set((ref.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
    const before = names();
    runMigrations(ref, scope, migrations);
    return [...names()].filter((name) => !before.has(name) && !name.startsWith('sqlite_')).sort();
  } finally {
    ref.close();
  }
}

/** The store of the module whose scope owns `tables` (see `tablesOfScope`), over the platform's query layer. */
export function moduleStore<Tables>(store: QueryStore, scope: string, tables: readonly string[]): ModuleStore<Tables> {
  const db = store.db.withPlugin(new ScopeGuard(scope, new Set(tables))) as unknown as Kysely<Tables>;
  return {
    engine: store.engine, db, tables,
    transaction: (work) => store.transaction((tx) => work(moduleStore<Tables>(tx, scope, tables))),
  };
}
