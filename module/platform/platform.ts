// The composition root of one platform process: opens the store and the secret box, builds the small services
// (catalogue, services, tasks, module host, tokens) and injects each where it is used. It holds no logic of its own.
import type { Logger } from 'pino';
import { config as defaultModulesConfig, type ModulesConfig } from '../../config.ts';
import { createHooks, type Hooks } from '../../hooks.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { systemClock, type Clock } from '../../shared/clock.ts';
import type { Product } from '../contract/product.ts';
import { DEFAULT_VIEWS_DIR } from '../contract/view.ts';
import { createTaskQueue, Task, TaskStore, type CreateTaskQueueOptions, type TaskQueue } from '../task/index.ts';
import { ModuleLoader, type LoadedModule, type ModuleImporter } from './loader.ts';
import { QueryPlatformReads } from './platform-reads.ts';
import { createPlatformLogger } from './logger.ts';
import { PlatformOperations } from './operations.ts';
import { Catalogue } from './services/catalogue.ts';
import { hostedModuleJob } from './services/hosted-jobs.ts';
import { ModuleAdmin, resolveHostedModule } from './services/module-admin.ts';
import { ModuleLogQueries } from './services/module-log-query.ts';
import { ModuleInstanceStore, ModuleStateStore } from './services/module-store.ts';
import { ServiceAdmin } from './services/service-admin.ts';
import { ServiceLifecycle } from './services/lifecycle.ts';
import { createBilling } from './services/billing/create-billing.ts';
import type { BillingService } from './services/billing/billing-service.ts';
import { BILLING_JOB, billingJobHandler } from './services/billing/billing-jobs.ts';
import type { RecurringBilling } from './services/billing/recurring-billing.ts';
import { openQueryStore, storeTarget, type QueryStore } from './store/query/query-store.ts';
import { AdminTokenQueries } from './store/query/repositories/admin-tokens.ts';
import { ModuleLogRepository } from './store/query/repositories/module-logs.ts';
import { StoredModuleVersions } from './store/query/repositories/module-versions.ts';
import { ServiceQueries } from './store/query/repositories/services.ts';
import { ProductQueries } from './store/query/repositories/products.ts';
import { StuckServiceSweeper } from './sweeper.ts';
import { startSweeping, startWorkers, type Workers } from './workers.ts';

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

function installedQueue(): TaskQueue | null {
  try {
    return Task.queue();
  } catch {
    return null;
  }
}

/** One platform process: open with `Platform.open`, start workers with `startWorkers`, end with `close`. */
export class Platform {
  private workers: Workers | null = null;
  private sweeping: Workers | null = null;
  private closed = false;
  private moduleWatch: NodeJS.Timeout | null = null;
  private billingOutbox: NodeJS.Timeout | null = null;
  private following: Promise<unknown> = Promise.resolve();
  /** The store's module switch version at the last look (it moves with every switch any process records). */
  private switchVersion: number | null = null;

  private constructor(
    /** The store: SQLite in the data directory (the embedded default) or PostgreSQL (`store`). */
    readonly store: QueryStore,
    readonly box: SecretBox,
    readonly logger: Logger,
    readonly hooks: Hooks,
    readonly clock: Clock,
    /** Stores. */
    readonly products: ProductQueries,
    readonly services: ServiceQueries,
    readonly tokens: AdminTokenQueries,
    /** Worker-scope tokens: they open `/api/worker/*` only. */
    readonly workerTokens: AdminTokenQueries,
    /** The task records (shared by the queue and the worker API) and the queue. */
    readonly taskStore: TaskStore<QueryStore>,
    readonly queue: TaskQueue,
    /** The module host: loaded modules, their manifests' services, shared caches. */
    readonly modules: ModuleLoader,
    readonly moduleInstances: ModuleInstanceStore,
    readonly loaded: LoadedModule[],
    /** Services behind the admin API. */
    readonly catalogue: Catalogue,
    readonly serviceAdmin: ServiceAdmin,
    readonly moduleAdmin: ModuleAdmin,
    readonly moduleLogs: ModuleLogQueries,
    readonly ops: PlatformOperations,
    /** The one writer of provision_status (services/lifecycle.ts). */
    readonly lifecycle: ServiceLifecycle<QueryStore>,
    /** The module_logs table (the modules' and the lifecycle's sink, remote workers' batches). */
    readonly moduleLogStore: ModuleLogRepository,
    /** Installed module versions. */
    readonly versions: StoredModuleVersions,
    /** Prices, orders, invoices, payments and refunds (services/billing). */
    readonly billing: BillingService,
    /** Recurring billing: periods, the billing run and its schedule, dunning, plan changes, saved payment methods. */
    readonly recurring: RecurringBilling,
  ) {}

  /** Opens the store (migrating it), builds the queue, loads the modules switched on (migrations, activate, version sync). */
  static async open(opts: PlatformOptions): Promise<Platform> {
    const logger = opts.logger ?? createPlatformLogger();
    const clock = opts.clock ?? systemClock;
    const store = await openQueryStore(storeTarget(opts.store, opts.dataDir), clock);
    let modules: ModuleLoader | null = null;
    let opened: TaskQueue | null = null;
    /** The queue `Task.add` used before: a failed open puts it back. */
    const previous = installedQueue();
    try {
      const box = SecretBox.open(opts.dataDir);
      const products = new ProductQueries(store, clock);
      const services = new ServiceQueries(store, box, clock);
      const taskStore = new TaskStore(store, box, clock);
      const queue = createTaskQueue({
        ...opts.queueOptions,
        url: opts.queue ?? 'embedded',
        store: taskStore,
        secretBox: box,
        logger: logger.child({ part: 'tasks' }),
      });
      opened = queue;
      Task.use(queue);
      const hooks = createHooks(logger.child({ part: 'hooks' }));
      // The one writer of provision_status, following every task record change this process makes (its own jobs and
      // the worker API's calls for remote workers), inside the same transactions.
      const moduleLogStore = new ModuleLogRepository(store);
      const lifecycle = new ServiceLifecycle<QueryStore>({
        statuses: (tx) => new ServiceQueries(tx ?? store, box, clock).statusStore(), hooks, moduleLogs: moduleLogStore, clock, logger: logger.child({ part: 'lifecycle' }),
      });
      lifecycle.attach(taskStore.events);
      const versions = new StoredModuleVersions(store, clock);
      await versions.refresh();
      // Billing's ledger goes into every module's context (Payment modules record through it); its service actions and
      // gateway lookups are bound once the module host and the service admin exist.
      const billing = createBilling({ store, box, clock, hooks, logger: logger.child({ part: 'billing' }), tasks: () => queue });
      modules = new ModuleLoader(
        {
          services: services.forModules(lifecycle), hooks, clock, versions,
          moduleLogs: moduleLogStore,
          logger: logger.child({ part: 'modules' }),
          tasks: { add: (job, queueName, input, tags) => Task.add(job, queueName, input, tags) },
          viewsDir: opts.viewsDir ?? DEFAULT_VIEWS_DIR,
          billing: billing.ledger,
        },
        {},
        opts.modulesConfig ?? defaultModulesConfig,
        opts.importer,
        { store, platform: new QueryPlatformReads(store), sealer: box, workerCall: null, states: await ModuleStateStore.open(store, clock) },
      );
      const loaded = await modules.load();
      const moduleInstances = await ModuleInstanceStore.open(store, box, clock);
      const catalogue = new Catalogue(products, modules);
      const serviceAdmin = new ServiceAdmin(services, products, modules, (uuid) => billing.recurring.periods.view(uuid));
      const moduleAdmin = new ModuleAdmin(modules, moduleInstances);
      billing.bind(serviceAdmin, modules, moduleInstances);
      const ops = new PlatformOperations({ catalogue, serviceAdmin, queue });
      const platform = new Platform(
        store, box, logger, hooks, clock, products, services, new AdminTokenQueries(store, 'admin', clock), new AdminTokenQueries(store, 'worker', clock),
        taskStore, queue, modules, moduleInstances, loaded, catalogue, serviceAdmin, moduleAdmin, new ModuleLogQueries(store, () => moduleLogStore.settled()), ops, lifecycle,
        moduleLogStore, versions, billing.service, billing.recurring,
      );
      await platform.watchModuleSwitches(opts.moduleWatchMs ?? 1000);
      return platform;
    } catch (err) {
      await modules?.close();
      if (opened) {
        Task.use(previous);
        await opened.stop(0);
      }
      await store.close();
      throw err;
    }
  }

  /** Starts `concurrency` job slots in this process (every module type's ModuleJobs) and the lost-task sweeper. */
  async startWorkers(concurrency = 8): Promise<void> {
    if (this.workers) return;
    this.workers = await startWorkers({
      queue: this.queue,
      concurrency,
      resolve: (uuid) => this.productForService(uuid),
      hosted: hostedModuleJob((ref) => resolveHostedModule(this.modules, this.moduleInstances, ref)),
      jobs: { [BILLING_JOB]: billingJobHandler((input, signal) => this.recurring.runJob(input, signal)) },
      sweeper: new StuckServiceSweeper(this.services, this.queue, this.lifecycle, this.logger, this.clock),
      logger: this.logger,
    });
  }

  /**
   * Only the sweeper that settles services of lost tasks, for a process without job slots (`serve --workers 0`,
   * whose jobs run in worker processes — remote ones do not sweep). Not needed after `startWorkers`.
   */
  startSweeper(): void {
    if (this.workers || this.sweeping) return;
    this.sweeping = startSweeping(new StuckServiceSweeper(this.services, this.queue, this.lifecycle, this.logger, this.clock), this.logger);
  }

  /** Starts the modules' scheduled work and the billing schedule (the serving process only). */
  startScheduled(): void {
    this.modules.startScheduled((work, error) => this.logger.error({ work, err: error instanceof Error ? error.message : String(error) }, 'scheduled module work failed'));
    // The billing run is queued every slot of the platform clock; the outbox is drained at start (what a stopped process left) and then every
    // tick, besides after each billing write.
    this.recurring.scheduler.start();
    this.billingOutbox = setInterval(() => this.recurring.dispatcher.kick(), 5_000);
    this.billingOutbox.unref();
    this.recurring.dispatcher.kick();
    // Paid invoices whose service a stopped process left `pending` get their create() now.
    this.billing.ledger.resumePaid().catch((error: unknown) => this.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'billing: resuming paid invoices failed'));
  }

  /** A Product instance bound to the service, with its product data and service data loaded. */
  productForService(uuid: string): Promise<Product> {
    return this.serviceAdmin.productForService(uuid);
  }

  /**
   * Applies module switches another process recorded since the last look (`vpnhost platform module activate|deactivate`
   * or another platform process on the same store): cheap when nothing changed (one read of the switch version).
   * Switches made through this process's admin API are applied at once; the look after them finds nothing to do.
   */
  followModuleSwitches(): Promise<Array<{ type: string; name: string; active: boolean; error?: string }>> {
    const next = this.following.then(async () => {
      if (this.closed) return [];
      const version = await this.modules.switchVersion();
      if (version === this.switchVersion) return [];
      this.switchVersion = version;
      const changed = await this.modules.follow();
      for (const c of changed) {
        if (c.error) this.logger.error({ module: `${c.type}/${c.name}`, err: c.error }, 'module switched on by another process failed to mount here');
        else this.logger.info({ module: `${c.type}/${c.name}`, active: c.active }, 'module switch made by another process applied');
      }
      return changed;
    });
    this.following = next.catch(() => undefined);
    return next;
  }

  private async watchModuleSwitches(everyMs: number): Promise<void> {
    this.switchVersion = await this.modules.switchVersion();
    if (everyMs <= 0) return;
    this.moduleWatch = setInterval(() => {
      this.followModuleSwitches().catch((error: unknown) => this.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'module switch check failed'));
    }, everyMs);
    this.moduleWatch.unref();
  }

  /** Stops workers (finishing in-flight attempts within `graceMs`), closes the modules' services and the database. */
  async close(graceMs = 10_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.moduleWatch) clearInterval(this.moduleWatch);
    if (this.billingOutbox) clearInterval(this.billingOutbox);
    await this.recurring.scheduler.stop();
    await this.recurring.stop();
    await this.following;
    if (this.workers) await this.workers.stop();
    if (this.sweeping) await this.sweeping.stop();
    await this.queue.stop(graceMs);
    await this.recurring.dispatcher.close();
    Task.use(null);
    await this.modules.close();
    await this.store.close();
  }
}
