// Base class of every module: identity, configuration, views, logs, versions and cache over an injected platform context.
import { ModuleCache } from './cache.ts';
import { collectSecretValues, createLogModule, type LogLevel, type LogModule } from './log.ts';
import type { ModuleType, PlatformContext } from './platform-context.ts';
import { toLifecycleResult, type LifecycleResult } from './result.ts';
import { NO_VERSION } from './versions.ts';
import { renderModuleView } from './view.ts';

/** What `JSON.stringify(module)` yields (e.g. inside a task record): enough for the platform to rebuild the instance. */
export interface ModuleRef {
  module_type: ModuleType;
  module_name: string;
  service_uuid: string | null;
  payment_gateway_uuid: string | null;
}

export type LifecycleMethod = 'activate' | 'deactivate' | 'update';

/**
 * A module: a class whose public methods the platform calls. Subclasses extend one of Product, Plugin, Payment or
 * Notification and call `super(ctx)` first in their constructor (the spec's `parent::__construct()`).
 *
 * The spec's `$config` property is exposed as `configValues`, because `config(key)` is the method that reads it.
 */
export abstract class Module {
  /** Code version used when the module's config.ts section has no `version`. */
  static version: string = NO_VERSION;
  /** Module identifier; defaults to the class name (which must match its directory, e.g. `VpnProduct`). */
  static moduleName?: string;

  readonly module_name: string;
  readonly module_type: ModuleType;
  /** The spec's `$config`: this module's config.ts section (read-only). */
  readonly configValues: Readonly<Record<string, unknown>>;
  /** Normalized product configuration (Product). */
  product_data: Record<string, unknown> = {};
  /** Current service instance data (Product). */
  service_data: Record<string, unknown> = {};
  /** Module-specific settings (Payment, Notification), decrypted by the platform before use. */
  module_data: Record<string, unknown> = {};
  /** Current service (Product). */
  service_uuid: string | null = null;
  /** Current payment gateway (Payment). */
  payment_gateway_uuid: string | null = null;
  /** Default context merged into every log entry of this module. */
  logger_context: Record<string, unknown>;
  /** Set by the task worker before a job method runs: aborted on timeout or worker stop. */
  abortSignal: AbortSignal | undefined = undefined;

  readonly #ctx: PlatformContext;
  readonly #cache: ModuleCache;
  #logModule?: LogModule;

  protected constructor(ctx: PlatformContext, type: ModuleType) {
    this.#ctx = ctx;
    this.module_type = type;
    const ctor = new.target as unknown as typeof Module;
    this.module_name = ctor.moduleName ?? ctor.name;
    this.configValues = Object.freeze({ ...ctx.config });
    this.logger_context = { module_type: type, module_name: this.module_name };
    this.#cache = ctx.cache ?? new ModuleCache(ctx.clock);
  }

  /** The injected platform services (kept off the instance's enumerable state, so tasks never serialize them). */
  protected get ctx(): PlatformContext {
    return this.#ctx;
  }

  /** Code version: the config.ts `version` key, else the class's static `version`. */
  get version(): string {
    const configured = this.configValues.version;
    return typeof configured === 'string' && configured ? configured : (this.constructor as typeof Module).version;
  }

  /** Called when the module is enabled; must be idempotent. `success` or `Error: <message>`. */
  async activate(): Promise<LifecycleResult> {
    return 'success';
  }

  /** Called when the module is disabled. `success` or `Error: <message>`. */
  async deactivate(): Promise<LifecycleResult> {
    return 'success';
  }

  /** Called when the code version differs from the installed one (see syncModuleVersion). */
  async update(): Promise<LifecycleResult> {
    return 'success';
  }

  /** Runs lifecycle work: `success` when it completes, `Error: <message>` (logged) when it throws or answers an error text. */
  protected async guard(action: LifecycleMethod, work: () => unknown): Promise<LifecycleResult> {
    try {
      const result = toLifecycleResult(await work());
      if (result !== 'success') this.logError(action, {}, result);
      return result;
    } catch (error) {
      const result = toLifecycleResult(error);
      this.logError(action, {}, result);
      return result;
    }
  }

  /** Renders `views/modules/<Type>/<ModuleName>/<template>.hbs` (`client_area.general` → `client_area/general.hbs`). */
  view(template: string, data: Record<string, unknown> = {}): string {
    return renderModuleView(this.#ctx.viewsDir, this.module_type, this.module_name, template, data);
  }

  /** A value of this module's config.ts section. */
  config<T = unknown>(key: string): T | undefined {
    return this.configValues[key] as T | undefined;
  }

  logInfo(action: string, request: unknown = [], response: unknown = []): void {
    this.#log('info', action, request, response);
  }

  logError(action: string, request: unknown = [], response: unknown = []): void {
    this.#log('error', action, request, response);
  }

  logDebug(action: string, request: unknown = [], response: unknown = []): void {
    this.#log('debug', action, request, response);
  }

  #log(level: LogLevel, action: string, request: unknown, response: unknown): void {
    this.#logModule ??= createLogModule({
      sink: this.#ctx.moduleLogs,
      logger: this.#ctx.logger,
      clock: this.#ctx.clock,
      secrets: () => collectSecretValues({ config: this.configValues, module_data: this.module_data, service_data: this.service_data }),
    });
    const context = { ...this.logger_context };
    if (this.service_uuid) context.service_uuid ??= this.service_uuid;
    if (this.payment_gateway_uuid) context.payment_gateway_uuid ??= this.payment_gateway_uuid;
    this.#logModule(this.module_type, this.module_name, action, level, request, response, context);
  }

  /** The installed version (module_versions table); `0.0.0` when the module was never installed. */
  getCurrentVersion(): string {
    return this.#ctx.versions.installed(this.module_type, this.module_name) ?? NO_VERSION;
  }

  /** Permission key of an action: `<Type>-<ModuleName>-<action>`. */
  permissionKey(action: string): string {
    return `${this.module_type}-${this.module_name}-${action}`;
  }

  /** Caches an expensive lookup for 300 s (default) under `<ModuleName>:<key>`, tagged `module` and the module name. */
  cached<T>(key: string, compute: () => T | Promise<T>, ttlSeconds?: number): Promise<T> {
    return this.#cache.remember(`${this.module_name}:${key}`, ['module', this.module_name], compute, ttlSeconds);
  }

  /** Drops this module's cached lookups; returns how many. */
  forgetCached(): number {
    return this.#cache.invalidateTag(this.module_name);
  }

  toJSON(): ModuleRef {
    return {
      module_type: this.module_type,
      module_name: this.module_name,
      service_uuid: this.service_uuid,
      payment_gateway_uuid: this.payment_gateway_uuid,
    };
  }
}

/** Constructor of a concrete module class. */
export type ModuleClass<M extends Module = Module> = (new (ctx: PlatformContext) => M) & { version: string; moduleName?: string };

/** Builds a module the way the platform does: `new ModuleClass(ctx)`, then binds the current service / gateway. */
export function instantiateModule<M extends Module>(
  ModuleClassRef: new (ctx: PlatformContext) => M,
  ctx: PlatformContext,
  bind: { service_uuid?: string | null; payment_gateway_uuid?: string | null; module_data?: Record<string, unknown> } = {},
): M {
  const module = new ModuleClassRef(ctx);
  if (bind.service_uuid !== undefined) module.service_uuid = bind.service_uuid;
  if (bind.payment_gateway_uuid !== undefined) module.payment_gateway_uuid = bind.payment_gateway_uuid;
  if (bind.module_data !== undefined) module.module_data = { ...bind.module_data };
  return module;
}

/** Calls activate / deactivate / update the way the platform must: never throws, answers `success` or `Error: <message>`. */
export async function runLifecycle(module: Module, method: LifecycleMethod): Promise<LifecycleResult> {
  try {
    return toLifecycleResult(await module[method]());
  } catch (error) {
    const result = toLifecycleResult(error);
    module.logError(method, {}, result);
    return result;
  }
}
