// The platform runtime of one process: store, secrets, task queue, hooks, loaded modules, and the admin operations.
import type { Logger } from 'pino';
import { config as defaultModulesConfig, type ModulesConfig } from '../../config.ts';
import { createHooks, type Hooks } from '../../hooks.ts';
import { SecretBox } from '../../panel/security/secret-box.ts';
import { systemClock, type Clock } from '../contract/platform-context.ts';
import type { Product } from '../contract/product.ts';
import { DEFAULT_VIEWS_DIR } from '../contract/view.ts';
import type { PanelRegistry } from '../modules/Product/VpnProduct/panel-registry.ts';
import { createTaskQueue, migrateTaskStore, Task, TaskStore, type CreateTaskQueueOptions, type TaskQueue } from '../task/index.ts';
import { bindProduct } from './bind-product.ts';
import { ModuleLoader, type LoadedModule } from './loader.ts';
import { createPlatformLogger } from './logger.ts';
import { PlatformOperations } from './operations.ts';
import { createPanelRegistry } from './panel-options.ts';
import { openPlatformDb, type Db } from './store/db.ts';
import { AdminTokenRepository } from './store/repositories/admin-tokens.ts';
import { PanelRepository } from './store/repositories/panels.ts';
import { ProductRepository } from './store/repositories/products.ts';
import { ServiceStore } from './store/repositories/services.ts';
import { StuckServiceSweeper } from './sweeper.ts';
import { startSweeping, startWorkers, type Workers } from './workers.ts';

export interface PlatformOptions {
  dataDir: string;
  /** `embedded` (default) or `redis://HOST:PORT`. */
  queue?: string;
  logger?: Logger;
  modulesConfig?: ModulesConfig;
  viewsDir?: string;
  clock?: Clock;
  /** Extra task-queue settings (poll interval, leases) for tests and benchmarks. */
  queueOptions?: Partial<Omit<CreateTaskQueueOptions, 'db' | 'url' | 'store'>>;
}

/** One platform process: open with `Platform.open`, start workers with `startWorkers`, end with `close`. */
export class Platform {
  readonly ops: PlatformOperations;
  private workers: Workers | null = null;
  private sweeping: Workers | null = null;
  private closed = false;

  private constructor(
    readonly db: Db,
    readonly box: SecretBox,
    readonly panels: PanelRepository,
    readonly products: ProductRepository,
    readonly services: ServiceStore,
    readonly tokens: AdminTokenRepository,
    /** Worker-scope tokens: they open `/api/worker/*` only. */
    readonly workerTokens: AdminTokenRepository,
    /** The task records (shared by the queue and the worker API). */
    readonly taskStore: TaskStore,
    readonly queue: TaskQueue,
    readonly modules: ModuleLoader,
    readonly panelClients: PanelRegistry,
    readonly hooks: Hooks,
    readonly logger: Logger,
    readonly loaded: LoadedModule[],
  ) {
    this.ops = new PlatformOperations(this);
  }

  /** Opens the store in `dataDir`, builds the queue, loads the enabled modules (activate + version sync). */
  static async open(opts: PlatformOptions): Promise<Platform> {
    const logger = opts.logger ?? createPlatformLogger();
    const db = openPlatformDb(opts.dataDir);
    try {
      const box = SecretBox.open(opts.dataDir);
      const panels = new PanelRepository(db, box);
      const products = new ProductRepository(db);
      const services = new ServiceStore(db, box);
      const tokens = new AdminTokenRepository(db);
      const workerTokens = new AdminTokenRepository(db, 'worker');
      migrateTaskStore(db);
      const taskStore = new TaskStore(db, box);
      const queue = createTaskQueue({
        ...opts.queueOptions,
        url: opts.queue ?? 'embedded',
        db,
        store: taskStore,
        secretBox: box,
        logger: logger.child({ part: 'tasks' }),
      });
      Task.use(queue);
      const clock = opts.clock ?? systemClock;
      const hooks = createHooks(logger.child({ part: 'hooks' }));
      const modulesConfig = opts.modulesConfig ?? defaultModulesConfig;
      const panelClients = createPanelRegistry(panels, modulesConfig);
      const modules = new ModuleLoader(
        {
          db, services, hooks, clock,
          logger: logger.child({ part: 'modules' }),
          tasks: { add: (job, queueName, input, tags) => Task.add(job, queueName, input, tags) },
          viewsDir: opts.viewsDir ?? DEFAULT_VIEWS_DIR,
        },
        { 'Product/VpnProduct': { panels: panelClients } },
        modulesConfig,
      );
      const loaded = await modules.load();
      return new Platform(db, box, panels, products, services, tokens, workerTokens, taskStore, queue, modules, panelClients, hooks, logger, loaded);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** Starts `concurrency` job slots in this process and the sweeper that settles services of lost tasks. */
  async startWorkers(concurrency = 8): Promise<void> {
    if (this.workers) return;
    this.workers = await startWorkers({
      queue: this.queue,
      concurrency,
      resolve: (uuid) => this.productForService(uuid),
      sweeper: new StuckServiceSweeper(this.services, this.queue, this.hooks, this.logger),
      logger: this.logger,
    });
  }

  /**
   * Only the sweeper that settles services of lost tasks, for a process without job slots (`serve --workers 0`,
   * whose jobs run in worker processes — remote ones do not sweep). Not needed after `startWorkers`.
   */
  startSweeper(): void {
    if (this.workers || this.sweeping) return;
    this.sweeping = startSweeping(new StuckServiceSweeper(this.services, this.queue, this.hooks, this.logger), this.logger);
  }

  /** A Product instance bound to the service, with its product data and service data loaded. */
  productForService(uuid: string): Product {
    const service = this.services.get(uuid);
    return bindProduct(this.modules, uuid, service, service ? this.products.get(service.product_uuid) : null);
  }

  /** Stops workers (finishing in-flight attempts within `graceMs`), closes panel pools and the database. */
  async close(graceMs = 10_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.workers) await this.workers.stop();
    if (this.sweeping) await this.sweeping.stop();
    await this.queue.stop(graceMs);
    Task.use(null);
    await this.panelClients.close();
    this.db.close();
  }
}
