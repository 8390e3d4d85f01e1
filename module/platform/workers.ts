// Job workers of a platform process: the ModuleJob handler (module resolver + one job run) and the sweeper timer.
import type { Logger } from 'pino';
import type { Product } from '../contract/product.ts';
import { isJobMethod } from '../contract/provision-status.ts';
import { runModuleJobAttempt } from '../contract/run-module-job.ts';
import { createModuleJob, MODULE_JOB, type TaskQueue } from '../task/index.ts';
import type { TaskHandler } from '../task/queue.ts';
import { isProductJob } from './services/hosted-jobs.ts';
import type { StuckServiceSweeper } from './sweeper.ts';

export interface WorkerDeps {
  queue: TaskQueue;
  concurrency: number;
  /** Rebuilds the Product instance of a service (two indexed reads, or two worker API calls in a remote worker). */
  resolve: ServiceResolver;
  /** Handler of Plugin, Payment and Notification ModuleJobs (services/hosted-jobs.ts); without it they are refused. */
  hosted?: TaskHandler;
  /** The platform's own jobs by name (`BillingJob`). */
  jobs?: Record<string, TaskHandler>;
  /** Safety net for tasks that vanished (sweeper.ts); absent in a remote worker (the platform process sweeps). */
  sweeper?: StuckServiceSweeper;
  logger: Logger;
  /** Sweep interval, default 5 s. */
  sweepMs?: number;
}

export interface Workers {
  stop(): Promise<void>;
}

/** The Product instance bound to a service. */
export type ServiceResolver = (serviceUuid: string) => Product | Promise<Product>;

/**
 * The ModuleJob handler: `{module: {type:'Product', name, service_uuid}, method}` → one run of the bound Product's job
 * (a provisioning job, or one of the Product's `serviceJobMethods()`) with the attempt's signal; its result (or its exception, rethrown for maxExceptions) goes back to the queue. The
 * service status follows from the queue's events (services/lifecycle.ts), not from here.
 */
export function moduleJobHandler(resolve: ServiceResolver): TaskHandler {
  return createModuleJob(
    async (ref) => {
      if (ref.type !== 'Product' || !ref.service_uuid) throw new Error(`ModuleJob ${ref.type}/${ref.name} is not a provisioning job`);
      return resolve(ref.service_uuid);
    },
    (product, method, ctx) => {
      if (!isJobMethod(method) && !(product as Product).serviceJobMethods().includes(method)) throw new Error(`ModuleJob method ${method} is not a provisioning job`);
      return runModuleJobAttempt(product as Product, method, ctx);
    },
  );
}

/** Registers the handler, starts the queue with `concurrency` slots and, with a sweeper, a periodic sweep. */
export async function startWorkers(deps: WorkerDeps): Promise<Workers> {
  const provisioning = moduleJobHandler(deps.resolve);
  const hosted = deps.hosted;
  deps.queue.register(MODULE_JOB, hosted ? (input, ctx) => (isProductJob(input) ? provisioning(input, ctx) : hosted(input, ctx)) : provisioning);
  for (const [job, handler] of Object.entries(deps.jobs ?? {})) deps.queue.register(job, handler);
  await deps.queue.start({ concurrency: deps.concurrency });
  return deps.sweeper ? startSweeping(deps.sweeper, deps.logger, deps.sweepMs) : { stop: async () => undefined };
}

/** Runs `sweeper` now and every `sweepMs` (default 5 s) until stopped. */
export function startSweeping(sweeper: StuckServiceSweeper, logger: Logger, sweepMs = 5_000): Workers {
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweep = () => {
    sweeping = sweeper.run().catch((err: Error) => logger.error({ err: err.message }, 'service sweep failed'));
  };
  sweep();
  const timer = setInterval(sweep, sweepMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await sweeping;
    },
  };
}
