// Loads the modules registered (enabled) in config.ts, runs activate + version sync, and builds bound instances.
import { config as defaultConfig, type ModulesConfig } from '../../config.ts';
import { instantiateModule, runLifecycle, type Module, type ModuleClass } from '../contract/module.ts';
import { Plugin } from '../contract/plugin.ts';
import { contextFor, MODULE_TYPES, type ModuleType, type PlatformContext, type PlatformServices } from '../contract/platform-context.ts';
import { syncModuleVersion, type VersionSync } from '../contract/versions.ts';

/** Where a module's class lives: `module/modules/<Type>/<Name>/index.ts`, exporting the class under its name. */
export type ModuleImporter = (type: ModuleType, name: string) => Promise<ModuleClass>;

const defaultImporter: ModuleImporter = async (type, name) => {
  const exports = (await import(`../modules/${type}/${name}/index.ts`)) as Record<string, unknown>;
  const cls = exports[name] ?? exports.default;
  if (typeof cls !== 'function') throw new Error(`module/modules/${type}/${name}/index.ts does not export class ${name}`);
  return cls as ModuleClass;
};

/** Outcome of loading one module. */
export interface LoadedModule {
  type: ModuleType;
  name: string;
  activate: string;
  version: VersionSync;
}

/** The modules of one platform process. */
export class ModuleLoader {
  private readonly classes = new Map<string, ModuleClass>();
  private readonly contexts = new Map<string, PlatformContext>();

  /**
   * @param shared services every module gets (db, services, tasks, hooks, logger, views, clock)
   * @param extras per-module additions to the context (e.g. the VPN product's panel registry), keyed `<Type>/<Name>`
   */
  constructor(
    private readonly shared: PlatformServices,
    private readonly extras: Record<string, Record<string, unknown>> = {},
    private readonly modulesConfig: ModulesConfig = defaultConfig,
    private readonly importer: ModuleImporter = defaultImporter,
  ) {}

  /**
   * Imports every enabled module, calls `activate()` and syncs its version (calling `update()` when it changed), then
   * lets each Plugin register its listeners on this process's hooks (events fire in the process that runs the job).
   * With `lifecycle: false` (a remote worker: the platform owns activation and versions) it skips activate and update.
   */
  async load(opts: { lifecycle?: boolean } = {}): Promise<LoadedModule[]> {
    const loaded: LoadedModule[] = [];
    for (const type of MODULE_TYPES) {
      for (const [name, settings] of Object.entries(this.modulesConfig.modules[type])) {
        if (!settings.enabled) continue;
        const cls = await this.importer(type, name);
        this.classes.set(`${type}/${name}`, cls);
        if (opts.lifecycle === false && type !== 'Plugin') continue;
        const instance = this.instance(type, name);
        if (opts.lifecycle !== false) {
          const activate = await runLifecycle(instance, 'activate');
          if (activate !== 'success') throw new Error(`module ${type}/${name} failed to activate: ${activate}`);
          const version = await syncModuleVersion(instance, { db: this.shared.db, clock: this.shared.clock });
          if (version.action === 'failed') throw new Error(`module ${type}/${name} failed to update ${version.from} → ${version.to}: ${version.result}`);
          loaded.push({ type, name, activate, version });
        }
        if (instance instanceof Plugin) instance.registerHooks(this.shared.hooks);
      }
    }
    return loaded;
  }

  has(type: ModuleType, name: string): boolean {
    return this.classes.has(`${type}/${name}`);
  }

  names(type: ModuleType): string[] {
    return [...this.classes.keys()].filter((key) => key.startsWith(`${type}/`)).map((key) => key.slice(type.length + 1));
  }

  /** A fresh instance of a loaded module, optionally bound to a service. Throws when the module is not loaded. */
  instance<M extends Module = Module>(type: ModuleType, name: string, bind: { service_uuid?: string | null } = {}): M {
    const key = `${type}/${name}`;
    const cls = this.classes.get(key);
    if (!cls) throw new Error(`module ${key} is not loaded`);
    let ctx = this.contexts.get(key);
    if (!ctx) {
      ctx = { ...contextFor({ ...this.shared, modulesConfig: this.modulesConfig }, type, name), ...(this.extras[key] ?? {}) };
      this.contexts.set(key, ctx);
    }
    return instantiateModule(cls as unknown as new (c: PlatformContext) => M, ctx, bind);
  }
}
