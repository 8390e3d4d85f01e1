// What the platform injects into a module instance: typed stores (services, logs, versions), task queue, hooks, logger, config, views, clock, cache.
import type { Logger } from 'pino';
import { moduleSettings, type ModulesConfig, type ModuleTypeName } from '../../config.ts';
import type { Hooks } from '../../hooks.ts';
import type { ModuleCache } from './cache.ts';
import type { ModuleLogSink } from './log.ts';
import type { PaymentLedger } from './payment.ts';
import type { ProvisionStatus } from './provision-status.ts';
import type { Clock } from '../../shared/clock.ts';

export type ModuleType = ModuleTypeName;
export const MODULE_TYPES: readonly ModuleType[] = ['Product', 'Plugin', 'Payment', 'Notification'];

/** Value or promise of it: repositories may be synchronous (better-sqlite3) or not. */
export type MaybePromise<T> = T | Promise<T>;

/** The one Clock shape of both halves (shared/clock.ts); tests inject a fixed or stepping clock. */
export { systemClock, type Clock } from '../../shared/clock.ts';

/** A hosting service as the platform stores it (fields beyond these are the store's own). */
export interface ServiceRecord {
  uuid: string;
  product_uuid: string | null;
  /** Type and name of the Product module handling it, e.g. `VpnProduct`. */
  module_name?: string;
  provision_status: ProvisionStatus;
  /** Reason given with the last status change (e.g. a failure text). */
  status_reason?: string | null;
  /** Values the customer/admin entered (saveServiceData). */
  service_data: Record<string, unknown>;
  /** What provisioning produced (account ids, access hashes, …); secret members are encrypted at rest by the store. */
  provision_data: Record<string, unknown>;
  created_at?: string;
  updated_at?: string;
}

/**
 * The platform's service store as modules see it. Implemented by the platform store (helper H5); the unit tests use
 * an in-memory twin. Implementations encrypt secret members of `provision_data` at rest and never log them.
 */
export interface ServiceRepository {
  /** The service, or null when it does not exist. */
  get(uuid: string): MaybePromise<ServiceRecord | null>;
  /**
   * The spec's `setProvisionStatus($status)` (and the reason, cleared when omitted). On the platform the call is
   * decided and written by the service lifecycle (module/platform/services/lifecycle.ts), the one writer of
   * provision_status; the lifecycle actions and job outcomes need no call, the lifecycle follows the queue.
   */
  setProvisionStatus(uuid: string, status: ProvisionStatus, reason?: string): MaybePromise<void>;
  /** Replaces `provision_data`. */
  saveProvisionData(uuid: string, data: Record<string, unknown>): MaybePromise<void>;
  /** Replaces `service_data`. */
  saveServiceData(uuid: string, data: Record<string, unknown>): MaybePromise<void>;
}

/**
 * The queue facade modules use (`Task.add` of module/task/task.ts). Job options (tries, backoff, timeout,
 * maxExceptions) travel inside `inputData` as the spec's ModuleJob keys. Resolves with the task id.
 */
export interface TaskFacade {
  add(jobName: string, queue: string, inputData: Record<string, unknown>, tags: string[]): Promise<string>;
}

/**
 * Installed module versions as modules see them (the platform's module_versions table, or what a remote worker was
 * told). `installed` is synchronous because the spec's `getCurrentVersion()` is: it answers from what the store last
 * loaded. The host calls `refresh` before it compares versions (at load, before each `update()`), so a version another
 * platform process recorded is seen then; `record` resolves once the version is stored.
 */
export interface ModuleVersionStore {
  /** The recorded version as of the last `refresh` or `record`, or null when the module was never installed. */
  installed(type: string, name: string): string | null;
  /** Records `version` as installed. */
  record(type: string, name: string, version: string): void | Promise<void>;
  /** Loads the recorded versions again (a store held in memory has nothing to load). */
  refresh(): Promise<void>;
}

/**
 * Everything a module instance gets from the platform; one context per module (its own `config` section, its own
 * shared cache). Modules see typed stores, never a database handle: the same module runs in a remote worker whose
 * stores go through the platform's worker API.
 */
export interface PlatformContext {
  services: ServiceRepository;
  tasks: TaskFacade;
  hooks: Hooks;
  logger: Logger;
  /** This module's section of config.ts. */
  config: Readonly<Record<string, unknown>>;
  /** The `views/` root; a module renders from `<viewsDir>/modules/<Type>/<ModuleName>/`. */
  viewsDir: string;
  clock: Clock;
  /** The module's cache of expensive lookups, shared by every instance (job) of the module in this process; a private one is made when absent. */
  cache?: ModuleCache;
  /** Where module logs go: the platform's module_logs table, or the worker API in a remote worker. */
  moduleLogs: ModuleLogSink;
  /** Installed versions (getCurrentVersion). */
  versions: ModuleVersionStore;
  /** The invoice ledger (Payment modules on the platform process); absent in a remote worker. */
  billing?: PaymentLedger;
}

/** Services shared by every module of a platform process. */
export type PlatformServices = Omit<PlatformContext, 'config'> & { modulesConfig?: ModulesConfig };

/** The context of module `type`/`name`: the shared services plus that module's config.ts section. */
export function contextFor(shared: PlatformServices, type: ModuleType, name: string): PlatformContext {
  const { modulesConfig, ...rest } = shared;
  return { ...rest, config: moduleSettings(type, name, modulesConfig) };
}
