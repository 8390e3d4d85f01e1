// One platform process as a running graph of feature plugins (features/): each declares what it needs and provides,
// the start order is derived, a need nobody provides fails the start with its name, and close stops them in reverse.
// `Platform` itself holds no logic: named accessors over what the features provide, and the process parts to start.
import type { Logger } from 'pino';
import type { Hooks } from '../../hooks.ts';
import type { Clock } from '../../shared/clock.ts';
import { RunningGraph, type LiveFeature } from '../../shared/feature-graph.ts';
import type { SecretBox } from '../../shared/secret-box.ts';
import type { Product } from '../contract/product.ts';
import type { TaskQueue, TaskStore } from '../task/index.ts';
import {
  lifecycleFeature, moduleLogFeature, repositoriesFeature, revenueFeature, runtimeFeature, secretsFeature, storeFeature, tasksFeature,
} from './features/core-features.ts';
import {
  billingBindingFeature, billingFeature, catalogueFeature, moduleAdminFeature, moduleHostFeature, moduleSwitchWatchFeature, operationsFeature,
  recurringBillingFeature, serviceAdminFeature,
} from './features/host-features.ts';
import type { ModuleSwitch } from './features/module-switch-watch.ts';
import { jobSlotsFeature, scheduledFeature, sweeperFeature } from './features/process-features.ts';
import { ABORTED, type PlatformOptions, type PlatformRegistry, type PlatformStop } from './features/registry.ts';
import type { LoadedModule, ModuleLoader } from './loader.ts';
import type { PlatformOperations } from './operations.ts';
import type { BillingService } from './services/billing/billing-service.ts';
import type { RecurringBilling } from './services/billing/recurring-billing.ts';
import type { Revenue } from './services/billing/revenue.ts';
import type { Catalogue } from './services/catalogue.ts';
import type { ServiceLifecycle } from './services/lifecycle.ts';
import type { ModuleAdmin } from './services/module-admin.ts';
import type { ModuleLogQueries } from './services/module-log-query.ts';
import type { ModuleInstanceStore } from './services/module-store.ts';
import type { ServiceAdmin } from './services/service-admin.ts';
import type { QueryStore } from './store/query/query-store.ts';
import type { AdminTokenQueries } from './store/query/repositories/admin-tokens.ts';
import type { ModuleLogRepository } from './store/query/repositories/module-logs.ts';
import type { StoredModuleVersions } from './store/query/repositories/module-versions.ts';
import type { ProductQueries } from './store/query/repositories/products.ts';
import type { ServiceQueries } from './store/query/repositories/services.ts';

export type { PlatformOptions, PlatformRegistry } from './features/registry.ts';

type PlatformFeature = LiveFeature<PlatformRegistry, PlatformStop>;

/**
 * The features every platform process opens with (the listed order only breaks ties): runtime, secrets and store,
 * repositories, tasks, module log, lifecycle, billing and recurring billing, the module host, catalogue, service and
 * module admins, billing's binding, operations, revenue and the module-switch watch.
 */
export const PLATFORM_FEATURES: readonly PlatformFeature[] = [
  runtimeFeature, storeFeature, secretsFeature, repositoriesFeature, tasksFeature, moduleLogFeature, lifecycleFeature, billingFeature,
  recurringBillingFeature, moduleHostFeature, catalogueFeature, serviceAdminFeature, moduleAdminFeature, billingBindingFeature,
  operationsFeature, revenueFeature, moduleSwitchWatchFeature,
];

/** One platform process: open with `Platform.open`, start its parts (`startWorkers`, `startScheduled`), end with `close`. */
export class Platform {
  private constructor(private readonly graph: RunningGraph<PlatformRegistry, PlatformStop>) {}

  /**
   * Starts {@link PLATFORM_FEATURES} (or `features`, for tests) over `opts`: opens the store (migrating it), builds the
   * queue, loads the modules switched on (migrations, activate, version sync). A failed start stops what had started.
   */
  static async open(opts: PlatformOptions, features: readonly PlatformFeature[] = PLATFORM_FEATURES): Promise<Platform> {
    return new Platform(await RunningGraph.start(features, { options: opts }, ABORTED));
  }

  /** Everything the features provide, typed: the seed of the HTTP graph (app.ts) and of narrow dependencies. */
  context(): Readonly<Partial<PlatformRegistry>> {
    return this.graph.snapshot();
  }

  /** The started features, in start order (derived from their needs). */
  get features(): readonly string[] {
    return this.graph.order;
  }

  get store(): QueryStore { return this.graph.get('store'); }
  get box(): SecretBox { return this.graph.get('box'); }
  get logger(): Logger { return this.graph.get('logger'); }
  get hooks(): Hooks { return this.graph.get('hooks'); }
  get clock(): Clock { return this.graph.get('clock'); }
  get products(): ProductQueries { return this.graph.get('products'); }
  get services(): ServiceQueries { return this.graph.get('services'); }
  get tokens(): AdminTokenQueries { return this.graph.get('tokens'); }
  get workerTokens(): AdminTokenQueries { return this.graph.get('workerTokens'); }
  get taskStore(): TaskStore<QueryStore> { return this.graph.get('taskStore'); }
  get queue(): TaskQueue { return this.graph.get('queue'); }
  get modules(): ModuleLoader { return this.graph.get('modules'); }
  get moduleInstances(): ModuleInstanceStore { return this.graph.get('moduleInstances'); }
  get loaded(): LoadedModule[] { return this.graph.get('loaded'); }
  get catalogue(): Catalogue { return this.graph.get('catalogue'); }
  get serviceAdmin(): ServiceAdmin { return this.graph.get('serviceAdmin'); }
  get moduleAdmin(): ModuleAdmin { return this.graph.get('moduleAdmin'); }
  get moduleLogs(): ModuleLogQueries { return this.graph.get('moduleLogs'); }
  get ops(): PlatformOperations { return this.graph.get('ops'); }
  get lifecycle(): ServiceLifecycle<QueryStore> { return this.graph.get('lifecycle'); }
  get moduleLogStore(): ModuleLogRepository { return this.graph.get('moduleLogStore'); }
  get versions(): StoredModuleVersions { return this.graph.get('versions'); }
  get billing(): BillingService { return this.graph.get('billing'); }
  get recurring(): RecurringBilling { return this.graph.get('recurring'); }
  get revenue(): Revenue { return this.graph.get('revenue'); }

  /** Starts `concurrency` job slots in this process (every module type's ModuleJobs) and the lost-task sweeper. */
  async startWorkers(concurrency = 8): Promise<void> {
    if (this.graph.has('jobSlots')) return;
    await this.graph.extend([jobSlotsFeature, ...(this.graph.has('sweeper') ? [] : [sweeperFeature])], ABORTED, { concurrency });
  }

  /**
   * Only the sweeper that settles services of lost tasks, for a process without job slots (`serve --workers 0`,
   * whose jobs run in worker processes — remote ones do not sweep). Not needed after `startWorkers`.
   */
  async startSweeper(): Promise<void> {
    if (!this.graph.has('sweeper')) await this.graph.extend([sweeperFeature], ABORTED);
  }

  /** Starts the modules' scheduled work and the billing schedule (the serving process only). */
  async startScheduled(): Promise<void> {
    if (!this.graph.has('scheduled')) await this.graph.extend([scheduledFeature], ABORTED);
  }

  /** A Product instance bound to the service, with its product data and service data loaded. */
  productForService(uuid: string): Promise<Product> {
    return this.serviceAdmin.productForService(uuid);
  }

  /**
   * Applies module switches another process recorded since the last look (`vpnhost platform module activate|deactivate`
   * or another platform process on the same store): cheap when nothing changed (one read of the switch version).
   */
  followModuleSwitches(): Promise<ModuleSwitch[]> {
    return this.graph.get('moduleSwitches').follow();
  }

  /** Stops every feature in reverse start order: in-flight attempts finish within `graceMs`, the store closes last. */
  close(graceMs = 10_000): Promise<void> {
    return this.graph.stop({ graceMs });
  }
}
