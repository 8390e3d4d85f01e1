// Product lifecycle calls and job runs: queueing a lifecycle job, and running one job method for one attempt. The
// provision_status transitions are not here: the platform's ServiceLifecycle applies them to the queue's events.
import { MODULE_JOB } from '../task/module-job.ts';
import { DEFAULT_TASK_OPTIONS, type TaskOptions } from '../task/queue.ts';
import { serviceTaskTags } from '../task/tags.ts';
import { collectSecretValues, scrub } from './log.ts';
import type { Module } from './module.ts';
import type { PlatformContext } from './platform-context.ts';
import type { Product } from './product.ts';
import { ACTION_TRANSITIONS, applyTransition, JOB_TRANSITIONS, type JobMethod, type ProvisionAction } from './provision-status.ts';
import { errorMessage, JOB_ERRORS, jobError, normalizeJobResult, type JobResult } from './result.ts';

/** Queue of every module job (`Task::add('ModuleJob', 'Module', …)`). */
export const MODULE_QUEUE = 'Module';

/** What the worker knows about the attempt it runs. */
export interface JobRunOptions {
  /** Aborted on timeout / worker stop; exposed to the job as `this.abortSignal`. */
  signal?: AbortSignal;
  /**
   * Rethrow a thrown exception (its text with secrets cut out), so the task queue counts it toward maxExceptions.
   * Without it (direct calls) the exception is answered as `{status:'error', message}`.
   */
  rethrow?: boolean;
}

type Deps = Pick<PlatformContext, 'services' | 'tasks'>;

/** Text of a thrown value with every secret the module holds (config, service data, module data) cut out. */
export function safeErrorText(module: Module, error: unknown): string {
  const secrets = collectSecretValues({ c: module.configValues, s: module.service_data, m: module.module_data });
  return String(scrub(errorMessage(error), secrets));
}

/**
 * Queues a non-provisioning job of a Product (one of its `serviceJobMethods()`) for its current service:
 * `Task.add('ModuleJob', 'Module', {module, method, ...options}, [action, 'service:<uuid>'])`; resolves with the task id.
 */
export async function queueServiceJob(product: Product, method: string, action: string, deps: Deps, options: Partial<TaskOptions> = {}): Promise<string> {
  const uuid = product.service_uuid;
  if (!uuid) throw new Error(JOB_ERRORS.invalidData);
  if (!product.serviceJobMethods().includes(method)) throw new Error(`${method} is not a service job of ${product.module_name}`);
  const taskId = await deps.tasks.add(MODULE_JOB, MODULE_QUEUE, { module: product, method, ...DEFAULT_TASK_OPTIONS, ...options }, serviceTaskTags(action, uuid));
  product.logInfo(action, { service_uuid: uuid }, { queued: method, task_id: taskId });
  return taskId;
}

/**
 * create() / suspend() / … : queues the action's job with `Task.add('ModuleJob', 'Module', {module, method, tries,
 * backoff, timeout, maxExceptions}, [action, 'service:<uuid>'])` and answers `{status:'success'}` at once. The
 * platform's lifecycle sets the action's status (create, suspend → `processing`) when the task is recorded, in the
 * same transaction, so a task that could not be queued leaves the status as it was.
 */
export async function queueProvisionAction(product: Product, action: ProvisionAction, deps: Deps): Promise<JobResult> {
  const rule = ACTION_TRANSITIONS[action];
  const uuid = product.service_uuid;
  const service = await product.currentService();
  if (!uuid || !service) {
    product.logError(action, { service_uuid: uuid }, JOB_ERRORS.invalidData);
    return jobError(JOB_ERRORS.invalidData);
  }
  let taskId: string;
  try {
    const options = product.jobOptions(rule.job);
    taskId = await deps.tasks.add(MODULE_JOB, MODULE_QUEUE, { module: product, method: rule.job, ...options }, serviceTaskTags(action, uuid));
  } catch (error) {
    product.logError(action, { service_uuid: uuid, method: rule.job }, safeErrorText(product, error));
    return jobError(JOB_ERRORS.unavailable);
  }
  product.logInfo(action, { service_uuid: uuid }, { queued: rule.job, task_id: taskId, status: applyTransition(service.provision_status, rule.next) });
  return { status: 'success' };
}

/**
 * Runs one attempt of a job method (`implementation`, the subclass's own code) and returns its result: the service's
 * data loaded (as bound, `Product.currentService`), the abort signal set, an error text with secrets cut out. Nothing but terminationJob runs on a
 * `terminated` service. Whether the task retries is the queue's decision, and what the outcome does to the service
 * is the lifecycle's.
 */
export async function runProvisionJob(
  product: Product,
  method: JobMethod,
  opts: JobRunOptions,
  implementation: () => Promise<JobResult>,
): Promise<JobResult> {
  const rule = JOB_TRANSITIONS[method];
  const uuid = product.service_uuid;
  const service = await product.currentService();
  if (!uuid || !service) {
    product.logError(rule.action, { service_uuid: uuid, method }, JOB_ERRORS.invalidData);
    return jobError(JOB_ERRORS.invalidData);
  }
  if (service.provision_status === 'terminated' && method !== 'terminationJob') return jobError(JOB_ERRORS.invalidData);
  if (Object.keys(service.service_data ?? {}).length) product.service_data = { ...service.service_data };
  if (opts.signal) product.abortSignal = opts.signal;
  try {
    const result = normalizeJobResult(await implementation.call(product));
    if (result.status === 'error' && result.message) result.message = safeErrorText(product, result.message);
    return result;
  } catch (error) {
    const message = safeErrorText(product, error);
    if (opts.rethrow) throw new Error(message);
    return jobError(message);
  }
}
