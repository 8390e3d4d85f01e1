// The platform's core features: clock/logger/hooks, the secret box, the store, its repositories and tokens, the task
// queue, the module log, the lifecycle (the one writer of provision_status) and revenue.
import { createHooks } from '../../../hooks.ts';
import { systemClock } from '../../../shared/clock.ts';
import { SecretBox } from '../../../shared/secret-box.ts';
import { createTaskQueue, Task, TaskStore, type TaskQueue } from '../../task/index.ts';
import { createPlatformLogger } from '../logger.ts';
import { ServiceLifecycle } from '../services/lifecycle.ts';
import { ModuleLogQueries } from '../services/module-log-query.ts';
import { openQueryStore, storeTarget, type QueryStore } from '../store/query/query-store.ts';
import { AdminTokenQueries } from '../store/query/repositories/admin-tokens.ts';
import { ModuleLogRepository } from '../store/query/repositories/module-logs.ts';
import { ProductQueries } from '../store/query/repositories/products.ts';
import { ServiceQueries } from '../store/query/repositories/services.ts';
import { Revenue, revenueOf } from '../services/billing/revenue.ts';
import { RevenueQueries } from '../store/query/repositories/revenue.ts';
import { definePlatformFeature as define } from './registry.ts';

/** The process's logger, clock (`options.clock`, default the system's) and hooks. */
export const runtimeFeature = define({
  name: 'runtime',
  needs: ['options'],
  provides: ['logger', 'clock', 'hooks'],
  start(get) {
    const logger = get('options').logger ?? createPlatformLogger();
    return { logger, clock: get('options').clock ?? systemClock, hooks: createHooks(logger.child({ part: 'hooks' })) };
  },
});

/**
 * The secret box over `secret.key` in the data directory (created when missing). It needs the store open first: a
 * start whose store cannot be reached writes nothing to the data directory.
 */
export const secretsFeature = define({
  name: 'secrets',
  needs: ['options', 'store'],
  provides: ['box'],
  start: (get) => ({ box: SecretBox.open(get('options').dataDir) }),
});

/** The store (SQLite in the data directory or PostgreSQL), migrated; closed last. */
export const storeFeature = define({
  name: 'store',
  needs: ['options', 'clock'],
  provides: ['store'],
  async start(get, life) {
    const store = await openQueryStore(storeTarget(get('options').store, get('options').dataDir), get('clock'));
    life.onStop(() => store.close());
    return { store };
  },
});

/** The product and service repositories and both scopes of tokens. */
export const repositoriesFeature = define({
  name: 'repositories',
  needs: ['store', 'box', 'clock'],
  provides: ['products', 'services', 'tokens', 'workerTokens'],
  start(get) {
    const [store, clock] = [get('store'), get('clock')];
    return {
      products: new ProductQueries(store, clock),
      services: new ServiceQueries(store, get('box'), clock),
      tokens: new AdminTokenQueries(store, 'admin', clock),
      workerTokens: new AdminTokenQueries(store, 'worker', clock),
    };
  },
});

/** The queue `Task.add` used before this process's (put back when the start fails). */
function installedQueue(): TaskQueue | null {
  try {
    return Task.queue();
  } catch {
    return null;
  }
}

/**
 * The task records and the queue (`options.queue`: embedded or BullMQ), installed for `Task.add`. Stopping it lets
 * in-flight attempts finish within the grace time (the job slots stop it first, while the modules still run).
 */
export const tasksFeature = define({
  name: 'tasks',
  needs: ['options', 'store', 'box', 'clock', 'logger', 'hooks'],
  provides: ['taskStore', 'queue'],
  start(get, life) {
    const [options, hooks] = [get('options'), get('hooks')];
    const taskStore = new TaskStore(get('store'), get('box'), get('clock'));
    const queue = createTaskQueue({
      ...options.queueOptions, url: options.queue ?? 'embedded', store: taskStore, secretBox: get('box'), logger: get('logger').child({ part: 'tasks' }),
      // the hook listeners of the last attempts' outcomes (e.g. the mail of a provisioned service) queue before it closes
      drain: () => hooks.settled(),
    });
    const previous = installedQueue();
    Task.use(queue);
    life.onStop(async ({ graceMs, aborted }) => {
      await queue.stop(graceMs);
      // a failed start puts the earlier queue back; a closed process leaves none
      if (installedQueue() === queue) Task.use(aborted ? previous : null);
    });
    return { taskStore, queue };
  },
});

/** The module log: the modules' and the lifecycle's sink, and the admin's reads; its stop waits for the writes on their way. */
export const moduleLogFeature = define({
  name: 'module-log',
  needs: ['store'],
  provides: ['moduleLogStore', 'moduleLogs'],
  start(get, life) {
    const moduleLogStore = new ModuleLogRepository(get('store'));
    // entries logged last (e.g. a CLI's module switch) are stored before the store closes: their batch waits a turn
    life.onStop(() => moduleLogStore.settled());
    return { moduleLogStore, moduleLogs: new ModuleLogQueries(get('store'), () => moduleLogStore.settled()) };
  },
});

/**
 * The one writer of provision_status, following every task record change this process makes (its own jobs and the
 * worker API's calls for remote workers), inside the same transactions.
 */
export const lifecycleFeature = define({
  name: 'lifecycle',
  needs: ['store', 'box', 'clock', 'hooks', 'logger', 'moduleLogStore', 'taskStore'],
  provides: ['lifecycle'],
  start(get) {
    const [store, box, clock] = [get('store'), get('box'), get('clock')];
    const lifecycle = new ServiceLifecycle<QueryStore>({
      statuses: (tx) => new ServiceQueries(tx ?? store, box, clock).statusStore(),
      hooks: get('hooks'), moduleLogs: get('moduleLogStore'), clock, logger: get('logger').child({ part: 'lifecycle' }),
    });
    lifecycle.attach(get('taskStore').events);
    return { lifecycle };
  },
});

/** Revenue reports over the store. */
export const revenueFeature = define({
  name: 'revenue',
  needs: ['store', 'clock'],
  provides: ['revenue'],
  start(get) {
    const [store, clock] = [get('store'), get('clock')];
    return { revenue: revenueOf({ store, clock }, () => new Revenue(new RevenueQueries(store), clock)) };
  },
});
