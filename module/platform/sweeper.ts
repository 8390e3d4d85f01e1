// Safety net for tasks that vanished: re-schedules runnable tasks their scheduler lost (expired leases, a BullMQ job
// never added) and fails a `processing` service none of whose tasks exists any more (a conditional write: of several
// sweeping processes, one settles it). The normal path is the lifecycle.
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../../shared/clock.ts';
import type { TaskQueue } from '../task/queue.ts';
import { serviceTag } from '../task/tags.ts';
import type { ServiceLifecycle } from './services/lifecycle.ts';
import type { ServiceQueries } from './store/query/repositories/services.ts';

/** Age after which a `processing` service without any task counts as orphaned. */
const ORPHAN_AFTER_MS = 60_000;
export const ORPHANED_REASON = 'No task was queued for this service (the platform stopped in between)';

/** What the sweeper reads and acts through. */
export interface SweeperDeps {
  services: Pick<ServiceQueries, 'list'>;
  queue: TaskQueue;
  lifecycle: Pick<ServiceLifecycle, 'failVanished'>;
  logger: Logger;
  /** The platform clock (default: the system's). */
  clock?: Clock;
}

/** One sweep per `run()`; cheap when nothing is lost (an indexed query, and one per `processing` service that is old). */
export class StuckServiceSweeper {
  private readonly services: SweeperDeps['services'];
  private readonly queue: TaskQueue;
  private readonly lifecycle: SweeperDeps['lifecycle'];
  private readonly logger: Logger;
  private readonly clock: Clock;

  constructor(deps: SweeperDeps) {
    ({ services: this.services, queue: this.queue, lifecycle: this.lifecycle, logger: this.logger } = deps);
    this.clock = deps.clock ?? systemClock;
  }

  /** Recovers lost tasks, then fails orphaned services (through the lifecycle); returns the uuids of those services. */
  async run(): Promise<string[]> {
    const recovered = await this.queue.recoverLost();
    if (recovered.length > 0) this.logger.warn({ tasks: recovered }, 'lost tasks scheduled again');
    const now = this.clock.now().getTime();
    const settled: string[] = [];
    for (const service of await this.services.list({ status: 'processing' })) {
      if (now - Date.parse(service.updated_at) <= ORPHAN_AFTER_MS) continue;
      // The status and the task record are written in one transaction, so only a task removed since leaves this.
      const tasks = await this.queue.list({ tag: serviceTag(service.uuid), limit: 1 });
      if (tasks.length > 0) continue;
      if (await this.lifecycle.failVanished(service.uuid, ORPHANED_REASON, service.module_name)) settled.push(service.uuid);
    }
    return settled;
  }
}
