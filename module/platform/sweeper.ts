// Settles services whose job can no longer settle them: the task failed without the module seeing its last attempt
// (worker killed on the final try) or no task was ever queued (process died in between).
import type { Logger } from 'pino';
import type { Hooks } from '../../hooks.ts';
import { JOB_ERRORS } from '../contract/result.ts';
import type { TaskQueue, TaskRecord } from '../task/queue.ts';
import type { ServiceStore } from './store/repositories/services.ts';

/** Age after which a `processing` service without any task counts as orphaned. */
const ORPHAN_AFTER_MS = 60_000;
export const ORPHANED_REASON = 'No task was queued for this service (the platform stopped in between)';

const serviceOf = (task: TaskRecord) => task.tags.find((t) => t.startsWith('service:'))?.slice('service:'.length);
const actionOf = (task: TaskRecord) => (task.tags.includes('create') ? 'create' : task.tags.includes('suspend') ? 'suspend' : null);

/** One sweep per `run()`; cheap when nothing is stuck (two indexed queries). */
export class StuckServiceSweeper {
  constructor(
    private readonly services: ServiceStore,
    private readonly queue: TaskQueue,
    private readonly hooks: Hooks,
    private readonly logger: Logger,
  ) {}

  /** Marks stuck services `failed` with a reason and emits `service.failed`; returns their uuids. */
  async run(): Promise<string[]> {
    const processing = this.services.list({ status: 'processing' });
    if (processing.length === 0) return [];
    const byUuid = new Map(processing.map((s) => [s.uuid, s]));
    const settled: string[] = [];
    const failed = await this.queue.list({ status: 'failed', limit: 1000 });
    const candidates = new Set<string>();
    for (const task of failed) {
      const uuid = serviceOf(task);
      if (uuid && actionOf(task) && byUuid.has(uuid)) candidates.add(uuid);
    }
    const now = Date.now();
    for (const service of processing) {
      if (now - Date.parse(service.updated_at) > ORPHAN_AFTER_MS) candidates.add(service.uuid);
    }
    for (const uuid of candidates) {
      // A duplicate never runs: the task that decides is the newest one that does (or did).
      const tasks = (await this.queue.list({ tag: `service:${uuid}`, limit: 20 })).filter((t) => actionOf(t) && t.status !== 'duplicate');
      const latest = tasks[0];
      let reason: string | null = null;
      let action: 'create' | 'suspend' = 'create';
      if (!latest) reason = ORPHANED_REASON;
      else if (latest.status === 'failed') {
        reason = latest.lastError ?? JOB_ERRORS.unknown;
        action = actionOf(latest) ?? 'create';
      }
      if (reason === null) continue;
      const current = this.services.get(uuid);
      if (!current || current.provision_status !== 'processing') continue;
      this.services.setProvisionStatus(uuid, 'failed', reason);
      this.logger.warn({ service_uuid: uuid, reason }, 'service settled as failed after its task ended without it');
      await this.hooks.emit('service.failed', {
        service_uuid: uuid, product_uuid: current.product_uuid, module: current.module_name, action, reason, at: new Date().toISOString(),
      });
      settled.push(uuid);
    }
    return settled;
  }
}
