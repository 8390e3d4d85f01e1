// What the platform's features provide to each other: the seed (the process's options), the stores and services the
// admin API, the worker API, the web host and the modules use, and the process parts (job slots, sweeper, schedules).
import type { Logger } from 'pino';
import type { ModulesConfig } from '../../../config.ts';
import type { Hooks } from '../../../hooks.ts';
import type { Clock } from '../../../shared/clock.ts';
import { liveFeatureFor } from '../../../shared/feature-graph.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import type { CreateTaskQueueOptions, TaskQueue, TaskStore } from '../../task/index.ts';
import type { LoadedModule, ModuleImporter, ModuleLoader } from '../loader.ts';
import type { PlatformOperations } from '../operations.ts';
import type { Billing } from '../services/billing/create-billing.ts';
import type { BillingService } from '../services/billing/billing-service.ts';
import type { RecurringBilling } from '../services/billing/recurring-billing.ts';
import type { Revenue } from '../services/billing/revenue.ts';
import type { Catalogue } from '../services/catalogue.ts';
import type { ServiceLifecycle } from '../services/lifecycle.ts';
import type { ModuleAdmin } from '../services/module-admin.ts';
import type { ModuleLogQueries } from '../services/module-log-query.ts';
import type { ModuleInstanceStore, ModuleStateStore } from '../services/module-store.ts';
import type { ServiceAdmin } from '../services/service-admin.ts';
import type { QueryStore } from '../store/query/query-store.ts';
import type { AdminTokenQueries } from '../store/query/repositories/admin-tokens.ts';
import type { ModuleLogRepository } from '../store/query/repositories/module-logs.ts';
import type { StoredModuleVersions } from '../store/query/repositories/module-versions.ts';
import type { ProductQueries } from '../store/query/repositories/products.ts';
import type { ServiceQueries } from '../store/query/repositories/services.ts';
import type { ModuleSwitchWatch } from './module-switch-watch.ts';

export interface PlatformOptions {
  /** Holds `secret.key` (every host of one platform needs the same file) and, on SQLite, `platform.db`. */
  dataDir: string;
  /**
   * `sqlite` (default: `platform.db` in `dataDir`) or `postgres://USER@HOST:PORT/DB`; unset, VPNHOST_PLATFORM_STORE
   * decides (docs/store.md).
   */
  store?: string;
  /** `embedded` (default) or `redis://HOST:PORT`. */
  queue?: string;
  logger?: Logger;
  modulesConfig?: ModulesConfig;
  viewsDir?: string;
  clock?: Clock;
  /** Extra task-queue settings (poll interval, leases) for tests and benchmarks. */
  queueOptions?: Partial<Omit<CreateTaskQueueOptions, 'url' | 'store'>>;
  /** Where module classes come from (default `module/modules/<Type>/<Name>/index.ts`; tests load fixture modules). */
  importer?: ModuleImporter;
  /** How often to look for module switches another process (the CLI) recorded, default 1000 ms; 0 turns it off. */
  moduleWatchMs?: number;
}

/** The registry of one platform process's graph. */
export interface PlatformRegistry {
  /** The seed: what the process was opened with. */
  options: PlatformOptions;
  logger: Logger;
  clock: Clock;
  hooks: Hooks;
  box: SecretBox;
  /** The store: SQLite in the data directory (the embedded default) or PostgreSQL (`options.store`). */
  store: QueryStore;
  products: ProductQueries;
  services: ServiceQueries;
  /** Admin-scope tokens (`/api/admin/*`). */
  tokens: AdminTokenQueries;
  /** Worker-scope tokens: they open `/api/worker/*` only. */
  workerTokens: AdminTokenQueries;
  /** The task records (shared by the queue and the worker API) and the queue. */
  taskStore: TaskStore<QueryStore>;
  queue: TaskQueue;
  /** The module_logs table (the modules' and the lifecycle's sink, remote workers' batches). */
  moduleLogStore: ModuleLogRepository;
  /** The module log as the admin reads it. */
  moduleLogs: ModuleLogQueries;
  /** The one writer of provision_status (services/lifecycle.ts). */
  lifecycle: ServiceLifecycle<QueryStore>;
  /** Billing's parts: the ledger (handed to modules), its repositories and its late binding to the service host. */
  billingParts: Billing;
  /** Prices, orders, invoices, payments and refunds (services/billing). */
  billing: BillingService;
  /** Recurring billing: periods, the billing run and its schedule, dunning, plan changes, saved payment methods. */
  recurring: RecurringBilling;
  /** Revenue reports (the admin page, `/api/admin/revenue`, `/metrics`). */
  revenue: Revenue;
  /** Installed module versions. */
  versions: StoredModuleVersions;
  /** The admin's recorded module switches and the claimed slots of scheduled work. */
  moduleStates: ModuleStateStore;
  /** The module host: loaded modules, their manifests' services, shared caches. */
  modules: ModuleLoader;
  /** What loading the switched-on modules answered (activate, version sync). */
  loaded: LoadedModule[];
  /** Gateway and channel instances (sealed module_data). */
  moduleInstances: ModuleInstanceStore;
  catalogue: Catalogue;
  serviceAdmin: ServiceAdmin;
  moduleAdmin: ModuleAdmin;
  ops: PlatformOperations;
  /** Follows module switches another process recorded. */
  moduleSwitches: ModuleSwitchWatch;
  /** Process parts, started on demand: the job slots' count (the seed of `jobSlots`), the slots, the sweeper, the schedules. */
  concurrency: number;
  jobSlots: true;
  sweeper: true;
  scheduled: true;
}

/** What stopping a platform gets: the time in-flight attempts have to finish; `aborted` when its start failed. */
export interface PlatformStop {
  graceMs: number;
  aborted?: boolean;
}

/** The stop of a start that failed: nothing waits. */
export const ABORTED: PlatformStop = { graceMs: 0, aborted: true };

/** A platform feature: needs and provides keys of {@link PlatformRegistry}, stops with {@link PlatformStop}. */
export const definePlatformFeature = liveFeatureFor<PlatformRegistry, PlatformStop>();
