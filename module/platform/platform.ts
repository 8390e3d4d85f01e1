// The platform runtime of one process: store, secrets, task queue, hooks, loaded modules, and the admin operations.
import type { Logger } from 'pino';
import { config as defaultModulesConfig, type ModulesConfig } from '../../config.ts';
import { createHooks, type Hooks } from '../../hooks.ts';
import { SecretBox } from '../../panel/security/secret-box.ts';
import { systemClock, type Clock } from '../contract/platform-context.ts';
import type { Product } from '../contract/product.ts';
import { DEFAULT_VIEWS_DIR } from '../contract/view.ts';
import { PanelRegistry } from '../modules/Product/VpnProduct/panel-registry.ts';
import { createTaskQueue, Task, type CreateTaskQueueOptions, type TaskQueue } from '../task/index.ts';
import { ModuleLoader, type LoadedModule } from './loader.ts';
import { createPlatformLogger } from './logger.ts';
import { PlatformOperations } from './operations.ts';
import { openPlatformDb, type Db } from './store/db.ts';
import { AdminTokenRepository } from './store/repositories/admin-tokens.ts';
import { PanelRepository } from './store/repositories/panels.ts';
import { ProductRepository } from './store/repositories/products.ts';
import { ServiceStore } from './store/repositories/services.ts';
import { StuckServiceSweeper } from './sweeper.ts';
import { startWorkers, type Workers } from './workers.ts';

export interface PlatformOptions {
  dataDir: string;
  /** `embedded` (default) or `redis://HOST:PORT`. */
  queue?: string;
  logger?: Logger;
  modulesConfig?: ModulesConfig;
  viewsDir?: string;
  clock?: Clock;
  /** Extra task-queue settings (poll interval, leases) for tests and benchmarks. */
  queueOptions?: Partial<Omit<CreateTaskQueueOptions, 'db' | 'url'>>;
}

/** One platform process: open with `Platform.open`, start workers with `startWorkers`, end with `close`. */
export class Platform {
  readonly ops: PlatformOperations;
  private workers: Workers | null = null;
  private closed = false;

  private constructor(
    readonly db: Db,
    readonly box: SecretBox,
    readonly panels: PanelRepository,
    readonly products: ProductRepository,
    readonly services: ServiceStore,
    readonly tokens: AdminTokenRepository,
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
      const queue = createTaskQueue({
        ...opts.queueOptions,
        url: opts.queue ?? 'embedded',
        db,
        secretBox: box,
        logger: logger.child({ part: 'tasks' }),
      });
      Task.use(queue);
      const clock = opts.clock ?? systemClock;
      const hooks = createHooks(logger.child({ part: 'hooks' }));
      const modulesConfig = opts.modulesConfig ?? defaultModulesConfig;
      const vpnSettings = modulesConfig.modules.Product.VpnProduct as Record<string, unknown> | undefined;
      const connections = typeof vpnSettings?.panel_connections === 'number' ? vpnSettings.panel_connections : 16;
      const timeout = typeof vpnSettings?.api_timeout_ms === 'number' ? vpnSettings.api_timeout_ms : 30_000;
      const panelClients = new PanelRegistry(panels, { connections, headersTimeoutMs: timeout, bodyTimeoutMs: timeout });
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
      return new Platform(db, box, panels, products, services, tokens, queue, modules, panelClients, hooks, logger, loaded);
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

  /** A Product instance bound to the service, with its product data and service data loaded. */
  productForService(uuid: string): Product {
    const service = this.services.get(uuid);
    if (!service) throw new Error(`service not found: ${uuid}`);
    const product = this.products.get(service.product_uuid);
    if (!product) throw new Error(`product not found: ${service.product_uuid}`);
    const instance = this.modules.instance<Product>('Product', service.module_name, { service_uuid: uuid });
    instance.product_data = { ...product.product_data };
    instance.service_data = { ...service.service_data };
    return instance;
  }

  /** Stops workers (finishing in-flight attempts within `graceMs`), closes panel pools and the database. */
  async close(graceMs = 10_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.workers) await this.workers.stop();
    await this.queue.stop(graceMs);
    Task.use(null);
    await this.panelClients.close();
    this.db.close();
  }
}
