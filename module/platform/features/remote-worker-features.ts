// A remote worker's features (`vpnhost platform worker --platform-url ...`): the worker API client and the platform's
// answer about itself, the remote twins of the platform's stores, the module host without a database, the BullMQ
// queue on the task records behind the worker API, and the job slots. Stopped in reverse: slots, queue, modules,
// module-log batches, the API client.
import type { z } from 'zod';
import type { Logger } from 'pino';
import { config as defaultModulesConfig } from '../../../config.ts';
import { createHooks } from '../../../hooks.ts';
import { systemClock, type Clock } from '../../../shared/clock.ts';
import { liveFeatureFor } from '../../../shared/feature-graph.ts';
import { memoryModuleVersionStore } from '../../contract/versions.ts';
import { DEFAULT_VIEWS_DIR } from '../../contract/view.ts';
import { BullmqQueue } from '../../task/bullmq.ts';
import { Task } from '../../task/task.ts';
import { bindProduct } from '../bind-product.ts';
import { ModuleLoader } from '../loader.ts';
import { createPlatformLogger } from '../logger.ts';
import type { RemoteWorkerOptions } from '../remote-worker.ts';
import { BILLING_JOB, billingJobHandler, remoteBillingJob } from '../services/billing/billing-jobs.ts';
import { hostedModuleJob } from '../services/hosted-jobs.ts';
import { resolveHostedModule } from '../services/module-admin.ts';
import { WorkerApiClient, WorkerApiError } from '../worker-api/client.ts';
import { RemoteModuleLogSink } from '../worker-api/remote-module-logs.ts';
import { RemoteProductDirectory } from '../worker-api/remote-products.ts';
import { RemoteServiceRepository } from '../worker-api/remote-services.ts';
import { RemoteTaskStore } from '../worker-api/remote-task-store.ts';
import { billingJobAnswerSchema, infoAnswerSchema, moduleInstanceSchema } from '../worker-api/schemas.ts';
import { startWorkers } from '../workers.ts';
import { moduleWorkerCall } from '../worker-api/module-worker-call.ts';
import type { PlatformStop } from './registry.ts';

export const PLATFORM_NOT_BULLMQ = 'the platform runs the embedded queue; remote workers need `platform serve --queue redis://HOST:PORT`';
export const TOKEN_REFUSED = 'the platform refused the worker token (create one with `vpnhost platform worker-token create`)';
export const VERSION_MISMATCH = (module: string, here: string, there: string) =>
  `module ${module} is version ${here} in this worker but ${there} on the platform: run the same vpnhost release on both`;

/** The registry of a remote worker's graph. */
export interface RemoteWorkerRegistry {
  /** The seed. */
  options: RemoteWorkerOptions;
  logger: Logger;
  clock: Clock;
  concurrency: number;
  api: WorkerApiClient;
  /** The platform's queue kind and installed module versions (`GET /info`). */
  info: z.infer<typeof infoAnswerSchema>;
  services: RemoteServiceRepository;
  products: RemoteProductDirectory;
  moduleLogs: RemoteModuleLogSink;
  modules: ModuleLoader;
  queue: BullmqQueue;
  jobSlots: true;
}

const define = liveFeatureFor<RemoteWorkerRegistry, PlatformStop>();

/** Logger, clock and the number of job slots (default 8). */
const remoteRuntimeFeature = define({
  name: 'runtime',
  needs: ['options'],
  provides: ['logger', 'clock', 'concurrency'],
  start: (get) => ({ logger: get('options').logger ?? createPlatformLogger(), clock: get('options').clock ?? systemClock, concurrency: get('options').workers ?? 8 }),
});

/** The worker API client; the platform must accept the token and queue on BullMQ. */
const workerApiClientFeature = define({
  name: 'worker-api-client',
  needs: ['options', 'concurrency'],
  provides: ['api', 'info'],
  async start(get, life) {
    const options = get('options');
    const api = new WorkerApiClient({ url: options.platformUrl, token: options.token, connections: get('concurrency') + 4, requestTimeoutMs: options.requestTimeoutMs });
    life.onStop(() => api.close());
    const info = await api.call('GET', '/info', infoAnswerSchema).catch((error: unknown) => {
      throw error instanceof WorkerApiError && error.status === 401 ? new Error(TOKEN_REFUSED) : error;
    });
    if (info.queue !== 'bullmq') throw new Error(PLATFORM_NOT_BULLMQ);
    return { api, info };
  },
});

/** The platform's services, products and module log, through the worker API (log lines go in batches, flushed on stop). */
const remoteStoresFeature = define({
  name: 'remote-stores',
  needs: ['api', 'logger'],
  provides: ['services', 'products', 'moduleLogs'],
  start(get, life) {
    const api = get('api');
    const moduleLogs = new RemoteModuleLogSink(api, get('logger').child({ part: 'module-logs' }));
    life.onStop(() => moduleLogs.close());
    return { services: new RemoteServiceRepository(api), products: new RemoteProductDirectory(api), moduleLogs };
  },
});

/**
 * The modules config.ts enables, mounted without lifecycle (the platform owns activation, versions and migrations),
 * each of the same version as on the platform; a module's own data comes through its worker routes.
 */
const remoteModuleHostFeature = define({
  name: 'module-host',
  needs: ['options', 'api', 'info', 'services', 'moduleLogs', 'clock', 'logger'],
  provides: ['modules'],
  async start(get, life) {
    const [options, api, info, logger] = [get('options'), get('api'), get('info'), get('logger')];
    const modules = new ModuleLoader({
      shared: {
        services: get('services'), clock: get('clock'), moduleLogs: get('moduleLogs'),
        versions: memoryModuleVersionStore(info.modules),
        hooks: createHooks(logger.child({ part: 'hooks' })),
        logger: logger.child({ part: 'modules' }),
        tasks: { add: (job, queueName, input, tags) => Task.add(job, queueName, input, tags) },
        viewsDir: options.viewsDir ?? DEFAULT_VIEWS_DIR,
      },
      modulesConfig: options.modulesConfig ?? defaultModulesConfig,
      importer: options.importer,
      host: { store: null, sealer: null, states: null, workerCall: (type, name) => moduleWorkerCall(api, type, name) },
    });
    life.onStop(() => modules.close());
    await modules.load({ lifecycle: false });
    for (const m of info.modules) {
      if (!modules.has(m.type, m.name)) continue;
      const here = modules.instance(m.type, m.name).version;
      if (here !== m.version) throw new Error(VERSION_MISMATCH(`${m.type}/${m.name}`, here, m.version));
    }
    return { modules };
  },
});

/** The BullMQ queue on the platform's Redis, its records kept by the platform (worker API); installed for `Task.add`. */
const remoteQueueFeature = define({
  name: 'queue',
  needs: ['options', 'api', 'clock', 'logger', 'modules'],
  provides: ['queue'],
  start(get, life) {
    const options = get('options');
    const queue = new BullmqQueue(new RemoteTaskStore(get('api')), { ...options.queueOptions, url: options.queue, clock: get('clock'), logger: get('logger').child({ part: 'tasks' }) });
    life.onStop(async ({ graceMs }) => {
      await queue.stop(graceMs);
      Task.use(null);
    });
    Task.use(queue);
    return { queue };
  },
});

/** The job slots: provisioning jobs, hosted ModuleJobs and the billing job (run by the platform, which has the database). */
const remoteJobSlotsFeature = define({
  name: 'job-slots',
  needs: ['queue', 'concurrency', 'logger', 'services', 'products', 'modules', 'api'],
  provides: ['jobSlots'],
  async start(get, life) {
    const [queue, services, products, modules, api] = [get('queue'), get('services'), get('products'), get('modules'), get('api')];
    life.onStop(({ graceMs }) => queue.stop(graceMs));
    await startWorkers({
      queue, concurrency: get('concurrency'), logger: get('logger'),
      resolve: async (uuid) => {
        const service = await services.get(uuid);
        return bindProduct(modules, uuid, service, service ? await products.get(service.product_uuid) : null);
      },
      hosted: hostedModuleJob((ref) =>
        resolveHostedModule(modules, { get: (uuid) => api.find(`/module-instances/${encodeURIComponent(uuid)}`, moduleInstanceSchema) }, ref),
      ),
      jobs: { [BILLING_JOB]: billingJobHandler(remoteBillingJob((input) => api.call('POST', '/billing/jobs', billingJobAnswerSchema, input))) },
    });
    return { jobSlots: true };
  },
});

/** A remote worker's features (the listed order only breaks ties). */
export const REMOTE_WORKER_FEATURES = [
  remoteRuntimeFeature, workerApiClientFeature, remoteStoresFeature, remoteModuleHostFeature, remoteQueueFeature, remoteJobSlotsFeature,
];
