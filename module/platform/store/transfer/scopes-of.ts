// The migration lists of the scopes a platform database records: the platform's own, and each module's from its manifest.
import type { ModuleManifest } from '../../extension.ts';
import type { Migration } from '../migrator.ts';
import { PLATFORM_STORE_SCOPES } from '../query/query-store.ts';
import type { ScopeList } from '../sql/pg-migrator.ts';
import { treeModuleUrl } from '../../../../shared/tree-module.ts';

const MODULE_SCOPE = /^module:([A-Z][A-Za-z0-9]*)\/([A-Za-z][A-Za-z0-9_-]*)$/;

/** The steps of `scope`: a platform scope's list, or the manifest migrations of module `module:<Type>/<Name>`. */
async function migrationsOf(scope: string): Promise<readonly Migration[]> {
  const own = PLATFORM_STORE_SCOPES.find(([name]) => name === scope);
  if (own) return own[1];
  const match = MODULE_SCOPE.exec(scope);
  if (!match) throw new Error(`unknown migration scope ${JSON.stringify(scope)}`);
  const [, type, name] = match;
  const exports = (await import(treeModuleUrl(`../../../modules/${type}/${name}/index`, import.meta.url)).catch(() => {
    throw new Error(`scope ${scope}: module ${type}/${name} is not part of this release`);
  })) as Record<string, unknown>;
  const cls = (exports[name] ?? exports.default) as { manifest?: ModuleManifest } | undefined;
  return cls?.manifest?.migrations ?? [];
}

/**
 * The scope list that rebuilds exactly the versions `ledger` records (scope → versions), platform scopes first in
 * their build order, then modules' by name. A recorded version this release does not know is an error (a newer release
 * made the database).
 */
export async function scopesOfLedger(ledger: Map<string, Set<number>>): Promise<ScopeList> {
  const order = (scope: string): number => {
    const i = PLATFORM_STORE_SCOPES.findIndex(([name]) => name === scope);
    return i < 0 ? PLATFORM_STORE_SCOPES.length : i;
  };
  const scopes = [...ledger.keys()].sort((a, b) => order(a) - order(b) || a.localeCompare(b));
  const list: Array<readonly [string, readonly Migration[]]> = [];
  for (const scope of scopes) {
    const steps = await migrationsOf(scope);
    const versions = ledger.get(scope)!;
    const unknown = [...versions].filter((v) => !steps.some((m) => m.version === v));
    if (unknown.length > 0) throw new Error(`scope ${scope}: version ${unknown.join(', ')} is unknown to this release (made by a newer one?)`);
    list.push([scope, steps.filter((m) => versions.has(m.version))]);
  }
  return list;
}
