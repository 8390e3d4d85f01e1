// The host's side of capabilities: which loaded module provides each one, resolution for the modules using them, and
// the check that every module's `requires` is met.
import {
  CAPABILITY_NOT_LOADED, CAPABILITY_PROVIDED_TWICE, MISSING_CAPABILITY,
  type Capabilities, type CapabilityMap, type CapabilityName,
} from '../contract/capabilities.ts';
import type { ModuleManifest } from './extension.ts';

/** Capabilities of one process's loaded modules; modules resolve through it at each call. */
export class CapabilityHost implements Capabilities {
  private readonly providers = new Map<CapabilityName, { module: string; impl: unknown }>();

  /** Records what `module` provides, built from its services; throws when another loaded module provides it already. */
  register(module: string, manifest: ModuleManifest, ext: object): void {
    const provides = (manifest.provides ?? {}) as Record<string, ((ext: object) => unknown) | undefined>;
    const names = Object.keys(provides) as CapabilityName[];
    for (const name of names) {
      const other = this.providers.get(name);
      if (other && other.module !== module) throw new Error(CAPABILITY_PROVIDED_TWICE(name, other.module, module));
    }
    for (const name of names) this.providers.set(name, { module, impl: provides[name]!(ext) });
  }

  /** Drops what `module` provides (it was unmounted). */
  forget(module: string): void {
    for (const [name, provider] of this.providers) if (provider.module === module) this.providers.delete(name);
  }

  get<K extends CapabilityName>(name: K): CapabilityMap[K] {
    const found = this.find(name);
    if (!found) throw new Error(CAPABILITY_NOT_LOADED(name));
    return found;
  }

  find<K extends CapabilityName>(name: K): CapabilityMap[K] | null {
    return (this.providers.get(name)?.impl as CapabilityMap[K] | undefined) ?? null;
  }

  /** The module providing `name`, or null. */
  providerOf(name: CapabilityName): string | null {
    return this.providers.get(name)?.module ?? null;
  }

  /** The first unmet requirement of `module` as its error text, or null when all are met. */
  unmet(module: string, manifest: ModuleManifest): string | null {
    const missing = (manifest.requires ?? []).find((name) => !this.providers.has(name));
    return missing ? MISSING_CAPABILITY(module, missing) : null;
  }
}
