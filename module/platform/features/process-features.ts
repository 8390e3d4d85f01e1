// What a platform process runs besides its services, started on demand on top of the running graph: the job slots
// (every module type's ModuleJobs and the billing job), the sweeper of lost tasks and the scheduled work.
import { hostedModuleJob } from '../services/hosted-jobs.ts';
import { resolveHostedModule } from '../services/module-admin.ts';
import { BILLING_JOB, billingJobHandler } from '../services/billing/billing-jobs.ts';
import { startScheduledWork } from '../scheduled-work.ts';
import { StuckServiceSweeper } from '../sweeper.ts';
import { startSweeping, startWorkers } from '../workers.ts';
import { definePlatformFeature as define } from './registry.ts';

/**
 * `concurrency` job slots on the queue. They stop first: the queue lets in-flight attempts finish within the grace
 * time while the modules they run still have their services.
 */
export const jobSlotsFeature = define({
  name: 'job-slots',
  needs: ['concurrency', 'queue', 'serviceAdmin', 'modules', 'moduleInstances', 'recurring', 'logger'],
  provides: ['jobSlots'],
  async start(get, life) {
    const [queue, serviceAdmin, modules, moduleInstances, recurring] = [get('queue'), get('serviceAdmin'), get('modules'), get('moduleInstances'), get('recurring')];
    life.onStop(({ graceMs }) => queue.stop(graceMs));
    await startWorkers({
      queue, concurrency: get('concurrency'), logger: get('logger'),
      resolve: (uuid) => serviceAdmin.productForService(uuid),
      hosted: hostedModuleJob((ref) => resolveHostedModule(modules, moduleInstances, ref)),
      jobs: { [BILLING_JOB]: billingJobHandler((input, signal) => recurring.runJob(input, signal)) },
    });
    return { jobSlots: true };
  },
});

/** The safety net for lost tasks and orphaned `processing` services, every 5 s (remote workers do not sweep). */
export const sweeperFeature = define({
  name: 'sweeper',
  needs: ['services', 'queue', 'lifecycle', 'logger', 'clock'],
  provides: ['sweeper'],
  start(get, life) {
    const sweeping = startSweeping(new StuckServiceSweeper({ services: get('services'), queue: get('queue'), lifecycle: get('lifecycle'), logger: get('logger'), clock: get('clock') }), get('logger'));
    life.onStop(() => sweeping.stop());
    return { sweeper: true };
  },
});

/**
 * The serving process's schedules: the modules' scheduled work, the billing run (queued every slot of the platform
 * clock) and the billing outbox (drained now — what a stopped process left — then every 5 s besides after each
 * billing write); paid invoices whose service a stopped process left `pending` get their create() now.
 */
export const scheduledFeature = define({
  name: 'scheduled',
  needs: ['modules', 'moduleStates', 'clock', 'recurring', 'billingParts', 'logger'],
  provides: ['scheduled'],
  start(get, life) {
    const [logger, recurring] = [get('logger'), get('recurring')];
    const failed = (error: unknown) => (error instanceof Error ? error.message : String(error));
    const work = startScheduledWork({
      modules: get('modules'), states: get('moduleStates'), clock: get('clock'),
      onError: (name, error) => logger.error({ work: name, err: failed(error) }, 'scheduled module work failed'),
    });
    recurring.scheduler.start();
    const outbox = setInterval(() => recurring.dispatcher.kick(), 5_000);
    outbox.unref();
    life.onStop(async () => {
      work.stop();
      clearInterval(outbox);
      await recurring.scheduler.stop();
    });
    recurring.dispatcher.kick();
    get('billingParts').ledger.resumePaid().catch((error: unknown) => logger.error({ err: failed(error) }, 'billing: resuming paid invoices failed'));
    return { scheduled: true };
  },
});
