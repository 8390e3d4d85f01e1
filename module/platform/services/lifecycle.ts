// The service lifecycle: the one writer of provision_status. It applies the spec's States table (plus `pending`) to
// the queue's own events — queued, attempt failed and will retry, finished for good — and emits the service hooks.
import type { Logger } from 'pino';
import type { HookEventName, HookEvents, Hooks, ServiceEvent } from '../../../hooks.ts';
import type { ModuleLogSink } from '../../contract/log.ts';
import type { Clock } from '../../../shared/clock.ts';
import {
  ACTION_TRANSITIONS, applyTransition, isJobMethod, JOB_TRANSITIONS, PROVISION_ACTIONS, type JobMethod, type ProvisionAction, type ProvisionStatus,
} from '../../contract/provision-status.ts';
import { JOB_ERRORS } from '../../contract/result.ts';
import { NO_TRANSACTION, type TaskEvent, type TaskEventContext, type TaskEventSource } from '../../task/events.ts';
import { MODULE_JOB, toModuleRef, type ModuleRef } from '../../task/module-job.ts';
import type { TaskRecord } from '../../task/queue.ts';
import { parseTags } from '../../task/tags.ts';

/** The service fields the lifecycle reads. */
export interface LifecycleService {
  uuid: string;
  product_uuid: string | null;
  provision_status: ProvisionStatus;
}

/** Where provision_status lives (the platform's ServiceQueries, on the transaction of the task record's change). */
export interface StatusStore {
  /** The service, its row locked for the status change when the store supports it (PostgreSQL, inside a transaction). */
  get(uuid: string): MaybePromise<LifecycleService | null>;
  /**
   * The raw write; only the lifecycle calls it. With `from`, only while the status is still `from` (false otherwise):
   * of several processes settling the same service, one does.
   */
  writeProvisionStatus(uuid: string, status: ProvisionStatus, reason?: string, from?: ProvisionStatus): MaybePromise<unknown>;
}

type MaybePromise<T> = T | Promise<T>;

export interface ServiceLifecycleDeps<Tx = unknown> {
  /**
   * The statuses on `tx`, the open transaction of a task record's change (so the status commits with the record), or on
   * the store itself (null: an explicit `set`, the sweeper, events raised outside any transaction).
   */
  statuses(tx: Tx | null): StatusStore;
  hooks: Hooks;
  /** Module log rows of job outcomes (the platform's module_logs table). */
  moduleLogs: ModuleLogSink;
  clock: Clock;
  logger: Logger;
}

/** What a provisioning task is about, read from its record (job, module reference, method and tags). */
export interface ProvisioningTask {
  serviceUuid: string;
  action: ProvisionAction;
  method: JobMethod;
  moduleType: string;
  moduleName: string;
}

/** The provisioning task a record is, or null for any other task (a Plugin job, a foreign tag set). */
export function provisioningTask(task: Pick<TaskRecord, 'job' | 'input' | 'tags'>): ProvisioningTask | null {
  if (task.job !== MODULE_JOB) return null;
  const { serviceUuid, action } = parseTags(task.tags);
  const method = task.input.method;
  if (!serviceUuid || !isJobMethod(method)) return null;
  let module: ModuleRef;
  try {
    module = toModuleRef(task.input.module);
  } catch {
    return null;
  }
  if (module.type !== 'Product' || !(PROVISION_ACTIONS as readonly string[]).includes(action ?? '')) return null;
  if (JOB_TRANSITIONS[method].action !== action) return null;
  return { serviceUuid, action: action as ProvisionAction, method, moduleType: module.type, moduleName: module.name };
}

/** One event's work: the task, the service as read in the event's transaction, where to write, what to run after commit. */
interface Step {
  task: ProvisioningTask;
  service: LifecycleService;
  statuses: StatusStore;
  after: (fn: () => void) => void;
}

/** One provision_status write: what the lifecycle did and why. */
export interface StatusWrite {
  uuid: string;
  status: ProvisionStatus;
  reason?: string;
  /** `queued:<action>`, `completed:<method>`, `failed:<method>`, `set`, `orphaned`. */
  cause: string;
}

/**
 * The one owner of every provision_status transition. Attach it to the platform's task store's events
 * (`attach(taskStore.events)`): the embedded and BullMQ queues and the worker API routes all change records through
 * that store, which raises the events inside its transactions; the status is written in the same transaction (one
 * commit on either engine), hooks and module log lines run after it.
 *
 * - queued (create/suspend): `processing`; a failed create/suspend queued again by retry: `processing` again;
 * - attempt failed, will retry: status unchanged (an error log line with `retry: true`);
 * - finished completed: the job's success status and event; finished failed: its failure status (with the task's
 *   error as reason) and `service.failed`.
 * A `terminated` service is changed only as the spec's table allows from any state: create()/suspend() take it to
 * `processing` (a terminated service can be created again); the other jobs refuse to run on it and leave it
 * terminated.
 */
export class ServiceLifecycle<Tx = unknown> {
  private readonly listeners = new Set<(write: StatusWrite) => void>();

  constructor(private readonly deps: ServiceLifecycleDeps<Tx>) {}

  /** Follows a queue's (or a task store's) events; returns the detach function. */
  attach(events: TaskEventSource<Tx>): () => void {
    return events.on((event, context) => this.onTaskEvent(event, context));
  }

  /** Observes every status write (tests, metrics). */
  onWrite(listener: (write: StatusWrite) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /**
   * Applies one queue event inside the transaction that changed the record (`context.tx`): the status is written there;
   * hooks and log lines follow once it committed.
   */
  async onTaskEvent(event: TaskEvent, context: TaskEventContext<Tx> = NO_TRANSACTION): Promise<void> {
    const task = provisioningTask(event.task);
    if (!task) return;
    const statuses = this.deps.statuses(context.tx);
    const service = await statuses.get(task.serviceUuid);
    if (!service) return;
    const step = { task, service, statuses, after: context.afterCommit };
    if (event.type === 'queued') await this.queued(step, event.requeued);
    else if (event.type === 'retrying') this.retrying(step, event.task, event.error);
    else if (event.outcome === 'completed') await this.completed(step, event.task);
    else await this.failed(step, event.task, event.error ?? JOB_ERRORS.unknown);
  }

  /** The spec's `setProvisionStatus($status)` asked for explicitly (a module, an admin); false for an unknown service. */
  async set(uuid: string, status: ProvisionStatus, reason?: string): Promise<boolean> {
    const statuses = this.deps.statuses(null);
    if (!(await statuses.get(uuid))) return false;
    await this.write(statuses, { uuid, status, reason, cause: 'set' });
    return true;
  }

  /**
   * Safety net: a `processing` service whose task vanished is failed with `reason`; false when it moved on meanwhile
   * (the write is conditional on `processing`: of several sweeping processes, one settles it).
   */
  async failVanished(uuid: string, reason: string, moduleName: string): Promise<boolean> {
    const statuses = this.deps.statuses(null);
    const service = await statuses.get(uuid);
    if (!service || service.provision_status !== 'processing') return false;
    if (!(await this.write(statuses, { uuid, status: 'failed', reason, cause: 'orphaned' }, 'processing'))) return false;
    this.deps.logger.warn({ service_uuid: uuid, reason }, 'service settled as failed: its task vanished');
    this.emit('service.failed', { ...this.event(service, moduleName), action: 'create', reason });
    return true;
  }

  private async queued({ task, service, statuses, after }: Step, requeued: boolean): Promise<void> {
    const rule = ACTION_TRANSITIONS[task.action];
    const current = service.provision_status;
    // A retry only takes a failed create/suspend back to processing; a first queueing applies the table's row.
    const next = requeued ? (current === 'failed' ? applyTransition(current, rule.next) : current) : applyTransition(current, rule.next);
    if (next !== current) await this.write(statuses, { uuid: service.uuid, status: next, cause: `queued:${task.action}` });
    const event = rule.event;
    if (!requeued && event) after(() => this.emit(event, this.event(service, task.moduleName)));
  }

  private retrying({ task, service, after }: Step, record: TaskRecord, error: string): void {
    after(() => this.log(task, 'error', record, { status: 'error', message: error, provision_status: service.provision_status, retry: true }));
  }

  private async completed({ task, service, statuses, after }: Step, record: TaskRecord): Promise<void> {
    const rule = JOB_TRANSITIONS[task.method];
    const current = service.provision_status;
    if (current === 'terminated' && task.method !== 'terminationJob') return;
    const next = applyTransition(current, rule.success);
    if (next !== current) await this.write(statuses, { uuid: service.uuid, status: next, cause: `completed:${task.method}` });
    const result = record.result && typeof record.result === 'object' ? (record.result as Record<string, unknown>) : { status: 'success' };
    after(() => {
      this.log(task, 'info', record, { ...result, provision_status: next });
      this.emit(rule.successEvent, this.event(service, task.moduleName));
    });
  }

  private async failed({ task, service, statuses, after }: Step, record: TaskRecord, reason: string): Promise<void> {
    const rule = JOB_TRANSITIONS[task.method];
    const current = service.provision_status;
    if (current === 'terminated' && task.method !== 'terminationJob') {
      after(() => this.log(task, 'error', record, { status: 'error', message: reason, provision_status: current, reason: 'service is terminated' }));
      return;
    }
    const next = applyTransition(current, rule.failure);
    if (next !== current) await this.write(statuses, { uuid: service.uuid, status: next, reason, cause: `failed:${task.method}` });
    after(() => {
      this.log(task, 'error', record, { status: 'error', message: reason, provision_status: next });
      this.emit('service.failed', { ...this.event(service, task.moduleName), action: rule.action, reason });
    });
  }

  /** Writes a status (with `from`, only while it is still that); the observers see each write made. */
  private async write(statuses: StatusStore, write: StatusWrite, from?: ProvisionStatus): Promise<boolean> {
    const written = await statuses.writeProvisionStatus(write.uuid, write.status, write.reason, from);
    if (written === false) return false;
    for (const listener of this.listeners) listener(write);
    return true;
  }

  private event(service: LifecycleService, moduleName: string): ServiceEvent {
    return { service_uuid: service.uuid, product_uuid: service.product_uuid, module: moduleName, at: this.deps.clock.now().toISOString() };
  }

  /** Hook listeners run after the status is written; the bus logs a failing listener itself. */
  private emit<E extends HookEventName>(name: E, payload: HookEvents[E]): void {
    this.deps.hooks.emit(name, payload).catch((err: unknown) =>
      this.deps.logger.error({ err: err instanceof Error ? err.message : String(err), event: name }, 'hook listener failed'),
    );
  }

  private log(task: ProvisioningTask, level: 'info' | 'error', record: TaskRecord, response: Record<string, unknown>): void {
    this.deps.moduleLogs.write({
      module_type: task.moduleType,
      module_name: task.moduleName,
      action: task.action,
      level,
      request: { service_uuid: task.serviceUuid, method: task.method, attempt: record.attempts, tries: record.options.tries },
      response,
      context: { service_uuid: task.serviceUuid, task_id: record.id },
      created_at: this.deps.clock.now().toISOString(),
    });
  }
}
