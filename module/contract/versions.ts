// Module versions as modules see them: version comparison, the update() runner and an in-memory version store (the
// platform's store is module/platform/store/query/repositories/module-versions.ts).
import type { ModuleVersionStore } from './platform-context.ts';
import { toLifecycleResult, type LifecycleResult } from './result.ts';

/** Version reported for a module that was never installed. */
export const NO_VERSION = '0.0.0';

/** Versions held in memory (a remote worker: what the platform's worker API reported). */
export function memoryModuleVersionStore(entries: Iterable<{ type: string; name: string; version: string }> = []): ModuleVersionStore {
  const map = new Map<string, string>();
  for (const e of entries) map.set(`${e.type}/${e.name}`, e.version);
  return {
    installed: (type, name) => map.get(`${type}/${name}`) ?? null,
    record: (type, name, version) => void map.set(`${type}/${name}`, version),
    refresh: async () => undefined,
  };
}

function parse(version: string): { core: number[]; pre: string[] } {
  const text = version.trim().replace(/^v/i, '').split('+')[0];
  const dash = text.indexOf('-');
  const core = (dash < 0 ? text : text.slice(0, dash)).split('.').map((part) => {
    if (!/^\d+$/.test(part)) throw new Error(`invalid version ${JSON.stringify(version)}`);
    return Number(part);
  });
  return { core, pre: dash < 0 ? [] : text.slice(dash + 1).split('.') };
}

/**
 * -1, 0 or 1 as `a` is older than, equal to or newer than `b`. Numeric dot segments (missing ones count as 0, so
 * `1.1` equals `1.1.0`); a pre-release (`1.1.0-beta.2`) sorts before its release, identifiers compared as in semver.
 */
export function compareVersions(a: string, b: string): -1 | 0 | 1 {
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.core.length, y.core.length); i++) {
    const d = (x.core[i] ?? 0) - (y.core[i] ?? 0);
    if (d) return d < 0 ? -1 : 1;
  }
  if (!x.pre.length || !y.pre.length) return x.pre.length === y.pre.length ? 0 : x.pre.length ? -1 : 1;
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i];
    const q = y.pre[i];
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    if (p === q) continue;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn) return Number(p) < Number(q) ? -1 : 1;
    if (pn !== qn) return pn ? -1 : 1;
    return p < q ? -1 : 1;
  }
  return 0;
}

function sameVersion(a: string, b: string): boolean {
  try {
    return compareVersions(a, b) === 0;
  } catch {
    return a === b;
  }
}

/** What a module must offer to be version-synced. */
export interface VersionedModule {
  readonly module_type: string;
  readonly module_name: string;
  readonly version: string;
  update(): Promise<LifecycleResult | string> | LifecycleResult | string;
}

export type VersionSync =
  | { action: 'installed'; to: string }
  | { action: 'current'; version: string }
  | { action: 'updated'; from: string; to: string; result: 'success' }
  | { action: 'failed'; from: string; to: string; result: LifecycleResult };

/**
 * Brings the recorded version in line with the code: nothing recorded → records it (fresh install, no update());
 * recorded = code → nothing; otherwise calls `update()` (which reads the old version through getCurrentVersion())
 * and records the code version only when it answers `success`. Exceptions become `Error: <message>`. The store is
 * refreshed first, so a version another platform process recorded meanwhile is the one compared.
 */
export async function syncModuleVersion(module: VersionedModule, versions: ModuleVersionStore): Promise<VersionSync> {
  await versions.refresh();
  const from = versions.installed(module.module_type, module.module_name);
  const to = module.version;
  if (from === null) {
    await versions.record(module.module_type, module.module_name, to);
    return { action: 'installed', to };
  }
  if (sameVersion(from, to)) return { action: 'current', version: to };
  let result: LifecycleResult;
  try {
    result = toLifecycleResult(await module.update());
  } catch (error) {
    result = toLifecycleResult(error);
  }
  if (result !== 'success') return { action: 'failed', from, to, result };
  await versions.record(module.module_type, module.module_name, to);
  return { action: 'updated', from, to, result };
}
