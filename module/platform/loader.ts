// The module host's core: loads the modules switched on (config.ts, or the admin's recorded switch), runs each one's
// manifest (config check, own migrations, services, hook listeners), activate + version sync, and builds instances
// that share one context and one cache per module. Activate / deactivate / update at run time answer `success` or
// `Error: ...`, recorded in module_states.
import type { ZodType } from 'zod';
import { config as defaultConfig, type ModulesConfig } from '../../config.ts';
import { ModuleCache } from '../contract/cache.ts';
import { instantiateModule, runLifecycle, type Module, type ModuleClass } from '../contract/module.ts';
import { Plugin } from '../contract/plugin.ts';
import { contextFor, MODULE_TYPES, type ModuleType, type PlatformContext, type PlatformServices } from '../contract/platform-context.ts';
import type { LifecycleResult } from '../contract/result.ts';
import { syncModuleVersion, type VersionSync } from '../contract/versions.ts';
import type { PlatformReads } from '../contract/platform-reads.ts';
import { CapabilityHost } from './capability-host.ts';
import type { ExtensionEnv, ModuleManifest, ModuleWorkerCall, Sealer } from './extension.ts';
import type { ModuleState, ModuleStateStore } from './services/module-store.ts';
import { moduleScope } from './store/migrator.ts';
import { moduleStore, tablesOfScope } from './store/query/module-store.ts';
import { PLATFORM_STORE_SCOPES, type QueryStore } from './store/query/query-store.ts';
import { treeModuleUrl } from '../../shared/tree-module.ts';

/** Where a module's class lives: `module/modules/<Type>/<Name>/index.ts`, exporting the class under its name. */
export type ModuleImporter = (type: ModuleType, name: string) => Promise<ModuleClass>;

const defaultImporter: ModuleImporter = async (type, name) => {
  const exports = (await import(treeModuleUrl(`../modules/${type}/${name}/index`, import.meta.url))) as Record<string, unknown>;
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

/** What the host runs in besides the shared services: the platform process (db + sealer) or a remote worker. */
export interface HostEnv {
  /** The platform's store (module migrations, and each module's store over its own tables); null in a remote worker. */
  store: QueryStore | null;
  /** The read API of platform data handed to modules (platform process only). */
  platform?: PlatformReads | null;
  sealer: Sealer | null;
  /** A remote worker's call of a module's worker routes; null on the platform. */
  workerCall: ((type: ModuleType, name: string) => ModuleWorkerCall) | null;
  /** The admin's recorded switches (platform only). */
  states: ModuleStateStore | null;
}

const NO_HOST: HostEnv = { store: null, sealer: null, workerCall: null, states: null };

export const UNKNOWN_MODULE_KEY = (key: string) => `unknown module: ${key} (it needs a section in config.ts)`;
export const MODULE_NOT_LOADED = (key: string) => `module ${key} is not loaded`;
export const PROVIDER_IN_USE = (key: string, capability: string, user: string) =>
  `module ${key} provides capability '${capability}' required by ${user}: switch ${user} off first`;

export interface ModuleLoaderOptions {
  /** Services every module gets (services, logs, versions, tasks, hooks, logger, views, clock). */
  shared: PlatformServices;
  /** Per-module additions to the context, keyed `<Type>/<Name>` (tests). */
  extras?: Record<string, Record<string, unknown>>;
  /** Default: config.ts. */
  modulesConfig?: ModulesConfig;
  /** Default: `module/modules/<Type>/<Name>/index.ts`. */
  importer?: ModuleImporter;
  /** The platform process (store, sealer, states) or a remote worker (worker calls); default neither. */
  host?: HostEnv;
}

/** The modules of one platform process. */
export class ModuleLoader {
  private readonly classes = new Map<string, ModuleClass>();
  private readonly contexts = new Map<string, PlatformContext>();
  private readonly caches = new Map<string, ModuleCache>();
  private readonly exts = new Map<string, object>();
  private readonly manifestOf = new Map<string, ModuleManifest>();
  /** Hook listeners are registered once per process and module, even across deactivate → activate. */
  private readonly hooked = new Set<string>();
  /** What the loaded modules provide to each other. */
  readonly capabilities = new CapabilityHost();
  /** Switches (activate, deactivate, update, follow) run one at a time, so none sees another half done. */
  private switching: Promise<unknown> = Promise.resolve();

  private readonly shared: PlatformServices;
  private readonly extras: Record<string, Record<string, unknown>>;
  private readonly modulesConfig: ModulesConfig;
  private readonly importer: ModuleImporter;
  private readonly host: HostEnv;

  constructor(opts: ModuleLoaderOptions) {
    this.shared = opts.shared;
    this.extras = opts.extras ?? {};
    this.modulesConfig = opts.modulesConfig ?? defaultConfig;
    this.importer = opts.importer ?? defaultImporter;
    this.host = opts.host ?? NO_HOST;
  }

  /**
   * Mounts every module switched on — the admin's recorded switch, else its config.ts `enabled` — then calls
   * `activate()` and syncs its version (calling `update()` when it changed). Each module's hook listeners (manifest and
   * Plugin `registerHooks`) go on this process's hooks. With `lifecycle: false` (a remote worker: the platform owns
   * activation, versions and migrations) it mounts the modules config.ts enables and skips activate and update.
   */
  async load(opts: { lifecycle?: boolean } = {}): Promise<LoadedModule[]> {
    const loaded: LoadedModule[] = [];
    const lifecycle = opts.lifecycle !== false;
    const switchedOn: Array<[ModuleType, string]> = [];
    for (const type of MODULE_TYPES) {
      for (const [name, settings] of Object.entries(this.modulesConfig.modules[type])) {
        const state = lifecycle ? await this.host.states?.get(type, name) : null;
        if (!(state ? state.active : settings.enabled)) continue;
        await this.mount(type, name, lifecycle);
        switchedOn.push([type, name]);
      }
    }
    // Every module is mounted before any is activated, so each one's `requires` is checked against all providers.
    for (const [key, manifest] of this.manifestOf) {
      const unmet = this.capabilities.unmet(key, manifest);
      if (unmet) throw new Error(unmet);
    }
    if (lifecycle) {
      for (const [type, name] of switchedOn) {
        const instance = this.instance(type, name);
        const activate = await runLifecycle(instance, 'activate');
        if (activate !== 'success') throw new Error(`module ${type}/${name} failed to activate: ${activate}`);
        const version = await syncModuleVersion(instance, this.shared.versions);
        if (version.action === 'failed') throw new Error(`module ${type}/${name} failed to update ${version.from} → ${version.to}: ${version.result}`);
        loaded.push({ type, name, activate, version });
      }
    }
    return loaded;
  }

  /** Imports the class, checks its config section, applies its migrations, builds its services, registers its listeners. */
  private async mount(type: ModuleType, name: string, lifecycle: boolean): Promise<void> {
    const key = `${type}/${name}`;
    if (this.classes.has(key)) return;
    const cls = await this.importer(type, name);
    const manifest = ((cls as unknown as { manifest?: ModuleManifest }).manifest ?? {}) as ModuleManifest;
    const settings = this.settings(type, name);
    if (manifest.config) checkConfig(key, manifest.config, settings);
    const scope = moduleScope(type, name);
    const migrations = manifest.migrations ?? [];
    const store = this.host.store;
    if (lifecycle && store && migrations.length) await store.migrate([[scope, migrations]], this.shared.clock);
    const env: ExtensionEnv = {
      store: store ? moduleStore(store, scope, tablesOfScope(PLATFORM_STORE_SCOPES, scope, migrations)) : null, platform: this.host.platform ?? null, capabilities: this.capabilities, sealer: this.host.sealer, worker: this.host.workerCall?.(type, name) ?? null,
      config: settings, logger: this.shared.logger.child({ module: key }), clock: this.shared.clock,
    };
    const ext = manifest.services?.(env) ?? {};
    this.capabilities.register(key, manifest, ext);
    this.classes.set(key, cls);
    this.manifestOf.set(key, manifest);
    this.exts.set(key, ext);
    if (!this.hooked.has(key)) {
      this.hooked.add(key);
      manifest.hooks?.(this.shared.hooks, ext);
      if (type === 'Plugin') {
        const instance = this.instance(type, name);
        if (instance instanceof Plugin) instance.registerHooks(this.shared.hooks);
      }
    }
  }

  /** Closes a module's services and forgets it (its cache included). */
  private async unmount(type: ModuleType, name: string): Promise<void> {
    const key = `${type}/${name}`;
    const manifest = this.manifestOf.get(key);
    const ext = this.exts.get(key);
    this.classes.delete(key);
    this.contexts.delete(key);
    this.manifestOf.delete(key);
    this.exts.delete(key);
    this.capabilities.forget(key);
    this.caches.get(key)?.clear();
    if (manifest?.close && ext) await manifest.close(ext);
  }

  has(type: ModuleType, name: string): boolean {
    return this.classes.has(`${type}/${name}`);
  }

  names(type: ModuleType): string[] {
    return [...this.classes.keys()].filter((key) => key.startsWith(`${type}/`)).map((key) => key.slice(type.length + 1));
  }

  /** Every module with a config.ts section: loaded or not, its recorded switch and installed version. */
  async list(): Promise<Array<{ type: ModuleType; name: string; loaded: boolean; enabled_in_config: boolean; state: ModuleState | null; installed_version: string | null }>> {
    const all = MODULE_TYPES.flatMap((type) => Object.entries(this.modulesConfig.modules[type]).map(([name, settings]) => ({ type, name, settings })));
    return Promise.all(all.map(async ({ type, name, settings }) => ({
      type, name, loaded: this.has(type, name), enabled_in_config: settings.enabled,
      state: (await this.host.states?.get(type, name)) ?? null, installed_version: await this.shared.versions.installed(type, name),
    })));
  }

  /** The switch version of the store (moves with every recorded switch of any process); null without recorded switches (a remote worker). */
  async switchVersion(): Promise<number | null> {
    return this.host.states ? this.host.states.version() : null;
  }

  /** True when config.ts has a section for the module (the only modules the admin may switch). */
  known(type: string, name: string): type is ModuleType {
    return (MODULE_TYPES as readonly string[]).includes(type) && Object.hasOwn(this.modulesConfig.modules[type as ModuleType], name);
  }

  /** The services a module's manifest built (its own stores, registries). Throws when the module is not loaded. */
  extension<E extends object>(type: ModuleType, name: string): E {
    const ext = this.exts.get(`${type}/${name}`);
    if (!ext) throw new Error(MODULE_NOT_LOADED(`${type}/${name}`));
    return ext as E;
  }

  /** Loaded modules with their manifests and services (the app mounts their routes). */
  mounted(): Array<{ type: ModuleType; name: string; manifest: ModuleManifest; ext: object }> {
    return [...this.manifestOf.entries()].map(([key, manifest]) => {
      const [type, name] = key.split('/') as [ModuleType, string];
      return { type, name, manifest, ext: this.exts.get(key)! };
    });
  }

  /** The module's cache (tags `module` and the module name), shared by all its instances in this process. */
  cache(type: ModuleType, name: string): ModuleCache {
    const key = `${type}/${name}`;
    let cache = this.caches.get(key);
    if (!cache) {
      cache = new ModuleCache(this.shared.clock);
      this.caches.set(key, cache);
    }
    return cache;
  }

  /** Drops every cached entry carrying `tag` (`module` drops all, a module name that module's) across modules. */
  invalidateCache(tag: string): number {
    let dropped = 0;
    for (const cache of this.caches.values()) dropped += cache.invalidateTag(tag);
    return dropped;
  }

  /** A fresh instance of a loaded module, optionally bound to a service or a gateway/channel instance. */
  instance<M extends Module = Module>(
    type: ModuleType,
    name: string,
    bind: { service_uuid?: string | null; payment_gateway_uuid?: string | null; module_data?: Record<string, unknown> } = {},
  ): M {
    const key = `${type}/${name}`;
    const cls = this.classes.get(key);
    if (!cls) throw new Error(MODULE_NOT_LOADED(key));
    let ctx = this.contexts.get(key);
    if (!ctx) {
      ctx = {
        ...contextFor({ ...this.shared, modulesConfig: this.modulesConfig }, type, name),
        ...(this.extras[key] ?? {}),
        ...(this.exts.get(key) ?? {}),
        cache: this.cache(type, name),
      };
      this.contexts.set(key, ctx);
    }
    return instantiateModule(cls as unknown as new (c: PlatformContext) => M, ctx, bind);
  }

  /** Switches a module on: mounts it (migrations included), calls `activate()`, records the answer. */
  activate(type: ModuleType, name: string): Promise<LifecycleResult> {
    return this.exclusive(() => this.activateNow(type, name));
  }

  private async activateNow(type: ModuleType, name: string): Promise<LifecycleResult> {
    const wasLoaded = this.has(type, name);
    try {
      await this.mount(type, name, true);
    } catch (error) {
      return this.record(type, name, wasLoaded, 'activate', `Error: ${(error as Error).message}`);
    }
    const unmet = this.capabilities.unmet(`${type}/${name}`, this.manifestOf.get(`${type}/${name}`)!);
    if (unmet) {
      if (!wasLoaded) await this.unmount(type, name);
      return this.record(type, name, wasLoaded, 'activate', `Error: ${unmet}`);
    }
    const instance = this.instance(type, name);
    let result = await runLifecycle(instance, 'activate');
    if (result === 'success') {
      const version = await syncModuleVersion(instance, this.shared.versions);
      if (version.action === 'failed') result = version.result;
    }
    logAnswer(instance, 'activate', result);
    if (result !== 'success' && !wasLoaded) await this.unmount(type, name);
    return this.record(type, name, result === 'success' || wasLoaded, 'activate', result);
  }

  /** Why `key` cannot be switched off: a loaded module requires a capability only it provides (null when none does). */
  private neededBy(key: string): string | null {
    for (const [user, manifest] of this.manifestOf) {
      if (user === key) continue;
      const name = (manifest.requires ?? []).find((capability) => this.capabilities.providerOf(capability) === key);
      if (name) return PROVIDER_IN_USE(key, name, user);
    }
    return null;
  }

  /** Switches a module off: calls `deactivate()`; on `success` unmounts it (its jobs then fail as not loaded). */
  deactivate(type: ModuleType, name: string): Promise<LifecycleResult> {
    return this.exclusive(() => this.deactivateNow(type, name));
  }

  private async deactivateNow(type: ModuleType, name: string): Promise<LifecycleResult> {
    if (!this.has(type, name)) return this.record(type, name, false, 'deactivate', `Error: ${MODULE_NOT_LOADED(`${type}/${name}`)}`);
    const needed = this.neededBy(`${type}/${name}`);
    if (needed) return this.record(type, name, true, 'deactivate', `Error: ${needed}`);
    const instance = this.instance(type, name);
    const result = await runLifecycle(instance, 'deactivate');
    logAnswer(instance, 'deactivate', result);
    if (result === 'success') await this.unmount(type, name);
    return this.record(type, name, result !== 'success', 'deactivate', result);
  }

  /**
   * Brings this process in line with the switches another process recorded (`vpnhost platform module ...`): mounts a
   * module recorded active that is not loaded here, unmounts one recorded inactive that is. activate() / deactivate()
   * are not called again: the process that switched the module called them and recorded the answer. Returns the
   * modules changed (with the error when one could not be mounted; it stays unloaded here).
   */
  follow(): Promise<Array<{ type: ModuleType; name: string; active: boolean; error?: string }>> {
    return this.exclusive(() => this.followNow());
  }

  private async followNow(): Promise<Array<{ type: ModuleType; name: string; active: boolean; error?: string }>> {
    const states = this.host.states;
    if (!states) return [];
    const changed: Array<{ type: ModuleType; name: string; active: boolean; error?: string }> = [];
    for (const type of MODULE_TYPES) {
      for (const name of Object.keys(this.modulesConfig.modules[type])) {
        const state = await states.get(type, name);
        if (!state || state.active === this.has(type, name)) continue;
        try {
          if (state.active) await this.mount(type, name, true);
          else await this.unmount(type, name);
          changed.push({ type, name, active: state.active });
        } catch (error) {
          changed.push({ type, name, active: state.active, error: error instanceof Error ? error.message : String(error) });
        }
      }
    }
    return changed;
  }

  /** Runs the version sync now (`update()` when the code version differs from the installed one). */
  update(type: ModuleType, name: string): Promise<LifecycleResult> {
    return this.exclusive(() => this.updateNow(type, name));
  }

  private async updateNow(type: ModuleType, name: string): Promise<LifecycleResult> {
    if (!this.has(type, name)) return this.record(type, name, false, 'update', `Error: ${MODULE_NOT_LOADED(`${type}/${name}`)}`);
    const instance = this.instance(type, name);
    const version = await syncModuleVersion(instance, this.shared.versions);
    const result: LifecycleResult = version.action === 'failed' ? version.result : 'success';
    if (result === 'success') this.invalidateCache(name);
    logAnswer(instance, 'update', result);
    return this.record(type, name, true, 'update', result);
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.switching.then(fn);
    this.switching = run.catch(() => undefined);
    return run;
  }

  private async record(type: ModuleType, name: string, active: boolean, action: string, result: LifecycleResult): Promise<LifecycleResult> {
    await this.host.states?.record(type, name, active, action, result);
    return result;
  }

  /** Closes every module's services (scheduled work is stopped before: scheduled-work.ts). */
  async close(): Promise<void> {
    for (const { manifest, ext } of this.mounted()) if (manifest.close) await manifest.close(ext);
  }

  private settings(type: ModuleType, name: string): Readonly<Record<string, unknown>> {
    return contextFor({ ...this.shared, modulesConfig: this.modulesConfig }, type, name).config;
  }
}

/** The module log entry of an admin's lifecycle call: `info` with `success`, `error` with the `Error: ...` answer. */
function logAnswer(instance: Module, action: string, result: LifecycleResult): void {
  if (result === 'success') instance.logInfo(action, { by: 'admin' }, result);
  else instance.logError(action, { by: 'admin' }, result);
}

function checkConfig(key: string, schema: ZodType, settings: unknown): void {
  const parsed = schema.safeParse(settings);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`config.ts section of ${key}: ${issue.path.join('.') || '(section)'}: ${issue.message}`);
  }
}
