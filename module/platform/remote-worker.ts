// A remote worker process (`vpnhost platform worker --platform-url ...`): BullMQ job slots on a machine without the
// platform's data directory; every platform-store operation goes through the platform's worker API.
import { z } from 'zod';
import type { Logger } from 'pino';
import { config as defaultModulesConfig, type ModulesConfig } from '../../config.ts';
import { createHooks } from '../../hooks.ts';
import { systemClock, type Clock } from '../../shared/clock.ts';
import { memoryModuleVersionStore } from '../contract/versions.ts';
import { DEFAULT_VIEWS_DIR } from '../contract/view.ts';
import { BullmqQueue, type BullmqQueueOptions } from '../task/bullmq.ts';
import { Task } from '../task/task.ts';
import { bindProduct } from './bind-product.ts';
import type { ModuleWorkerCall } from './extension.ts';
import { ModuleLoader, type ModuleImporter } from './loader.ts';
import { createPlatformLogger } from './logger.ts';
import { BILLING_JOB, billingJobHandler, remoteBillingJob } from './services/billing/billing-jobs.ts';
import { hostedModuleJob } from './services/hosted-jobs.ts';
import { resolveHostedModule } from './services/module-admin.ts';
import { moduleInstanceSchema } from './worker-api/schemas.ts';
import { WorkerApiClient, WorkerApiError } from './worker-api/client.ts';
import { RemoteModuleLogSink } from './worker-api/remote-module-logs.ts';
import { RemoteProductDirectory } from './worker-api/remote-products.ts';
import { RemoteServiceRepository } from './worker-api/remote-services.ts';
import { RemoteTaskStore } from './worker-api/remote-task-store.ts';
import { billingJobAnswerSchema, infoAnswerSchema } from './worker-api/schemas.ts';
import { startWorkers, type Workers } from './workers.ts';

export interface RemoteWorkerOptions {
  /** Base URL of the platform (`platform serve`), e.g. `https://platform.internal:8090`. */
  platformUrl: string;
  /** A worker token (`vpnhost platform worker-token create`). */
  token: string;
  /** `redis://HOST:PORT`: the Redis the platform queues on. */
  queue: string;
  /** Job slots, default 8. */
  workers?: number;
  logger?: Logger;
  modulesConfig?: ModulesConfig;
  viewsDir?: string;
  clock?: Clock;
  /** BullMQ tuning (lock, stalled interval, prefix) for tests. */
  queueOptions?: Partial<Omit<BullmqQueueOptions, 'url' | 'logger'>>;
  /** Per-request deadline of worker API calls, default 30 s. */
  requestTimeoutMs?: number;
  /** Where module classes come from (default `module/modules/<Type>/<Name>/index.ts`; tests load fixture modules). */
  importer?: ModuleImporter;
}

/** Calls of module `type`/`name`'s own worker routes (`/api/worker/modules/<Type>/<Name>/...`). */
export function moduleWorkerCall(api: WorkerApiClient, type: string, name: string): ModuleWorkerCall {
  const base = `/modules/${type}/${name}`;
  return {
    get: (path) => api.find(base + path, z.unknown()),
    post: (path, body) => api.call('POST', base + path, z.unknown(), body),
  };
}

export const PLATFORM_NOT_BULLMQ = 'the platform runs the embedded queue; remote workers need `platform serve --queue redis://HOST:PORT`';
export const TOKEN_REFUSED = 'the platform refused the worker token (create one with `vpnhost platform worker-token create`)';
export const VERSION_MISMATCH = (module: string, here: string, there: string) =>
  `module ${module} is version ${here} in this worker but ${there} on the platform: run the same vpnhost release on both`;

export interface RunningRemoteWorker {
  workerCount: number;
  /** The id this worker's attempts carry in task records. */
  workerId: string;
  /** Stops taking jobs, finishes (or within the grace time aborts) running attempts, flushes module logs. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Checks the platform (token, queue kind, module versions), then starts `workers` job slots on the Redis queue.
 * Modules get the remote twins of the platform services: services, products, module logs, gateway/channel instances
 * and the task records all live on the platform, and a module's own data (VpnProduct's panels) comes through its
 * worker routes. Nothing is written to local disk and no database handle exists here: installed versions are the
 * ones `/info` reported.
 */
export async function startRemoteWorker(opts: RemoteWorkerOptions): Promise<RunningRemoteWorker> {
  const logger = opts.logger ?? createPlatformLogger();
  const concurrency = opts.workers ?? 8;
  const api = new WorkerApiClient({ url: opts.platformUrl, token: opts.token, connections: concurrency + 4, requestTimeoutMs: opts.requestTimeoutMs });
  const modulesConfig = opts.modulesConfig ?? defaultModulesConfig;
  const clock = opts.clock ?? systemClock;
  let modules: ModuleLoader | null = null;
  const moduleLogs = new RemoteModuleLogSink(api, logger.child({ part: 'module-logs' }));
  const queue = new BullmqQueue(new RemoteTaskStore(api), { ...opts.queueOptions, url: opts.queue, clock, logger: logger.child({ part: 'tasks' }) });
  let workers: Workers | null = null;
  const shutdown = async (graceMs: number) => {
    if (workers) await workers.stop();
    await queue.stop(graceMs);
    Task.use(null);
    await modules?.close();
    await moduleLogs.close();
    await api.close();
  };
  try {
    const info = await api.call('GET', '/info', infoAnswerSchema).catch((error: unknown) => {
      throw error instanceof WorkerApiError && error.status === 401 ? new Error(TOKEN_REFUSED) : error;
    });
    if (info.queue !== 'bullmq') throw new Error(PLATFORM_NOT_BULLMQ);
    const services = new RemoteServiceRepository(api);
    const products = new RemoteProductDirectory(api);
    const host = new ModuleLoader(
      {
        services, clock, moduleLogs,
        versions: memoryModuleVersionStore(info.modules),
        hooks: createHooks(logger.child({ part: 'hooks' })),
        logger: logger.child({ part: 'modules' }),
        tasks: { add: (job, queueName, input, tags) => Task.add(job, queueName, input, tags) },
        viewsDir: opts.viewsDir ?? DEFAULT_VIEWS_DIR,
      },
      {},
      modulesConfig,
      opts.importer,
      {
        store: null, sealer: null, states: null,
        workerCall: (type, name) => moduleWorkerCall(api, type, name),
      },
    );
    modules = host;
    await host.load({ lifecycle: false });
    for (const m of info.modules) {
      if (!host.has(m.type, m.name)) continue;
      const here = host.instance(m.type, m.name).version;
      if (here !== m.version) throw new Error(VERSION_MISMATCH(`${m.type}/${m.name}`, here, m.version));
    }
    Task.use(queue);
    workers = await startWorkers({
      queue, concurrency, logger,
      resolve: async (uuid) => {
        const service = await services.get(uuid);
        return bindProduct(host, uuid, service, service ? await products.get(service.product_uuid) : null);
      },
      hosted: hostedModuleJob((ref) =>
        resolveHostedModule(host, { get: (uuid) => api.find(`/module-instances/${encodeURIComponent(uuid)}`, moduleInstanceSchema) }, ref),
      ),
      // Billing jobs need the platform's database: the platform runs them.
      jobs: { [BILLING_JOB]: billingJobHandler(remoteBillingJob((input) => api.call('POST', '/billing/jobs', billingJobAnswerSchema, input))) },
    });
  } catch (error) {
    await shutdown(0);
    throw error;
  }
  let closed = false;
  return {
    workerCount: concurrency,
    workerId: queue.workerId,
    async close(graceMs = 10_000) {
      if (closed) return;
      closed = true;
      await shutdown(graceMs);
    },
  };
}
