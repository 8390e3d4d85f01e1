// Runs the provisioning state machine for Product modules: queues lifecycle jobs and applies job outcomes.
import type { ServiceEvent } from '../../hooks.ts';
import { MODULE_JOB } from '../task/module-job.ts';
import { collectSecretValues, scrub } from './log.ts';
import type { Module } from './module.ts';
import type { PlatformContext, ServiceRecord } from './platform-context.ts';
import type { Product } from './product.ts';
import { ACTION_TRANSITIONS, JOB_TRANSITIONS, applyTransition, type JobMethod, type ProvisionAction } from './provision-status.ts';
import { errorMessage, JOB_ERRORS, jobError, normalizeJobResult, type JobResult } from './result.ts';

/** Queue of every module job (`Task::add('ModuleJob', 'Module', …)`). */
export const MODULE_QUEUE = 'Module';

/** What the worker knows about the attempt it runs. */
export interface JobRunOptions {
  /** Aborted on timeout / worker stop; exposed to the job as `this.abortSignal`. */
  signal?: AbortSignal;
  /** 1-based attempt number and total tries: a failure before the last attempt leaves the status alone. */
  attempt?: number;
  tries?: number;
  /** Exceptions thrown by earlier attempts and the task's maxExceptions: a throw that reaches it is the last attempt. */
  exceptions?: number;
  maxExceptions?: number;
  /**
   * Rethrow a thrown exception (its text with secrets cut out) once its outcome is applied, so the task queue counts
   * it toward maxExceptions. Without it (direct calls) the exception is answered as `{status:'error', message}`.
   */
  rethrow?: boolean;
}

type Deps = Pick<PlatformContext, 'services' | 'tasks' | 'hooks' | 'clock'>;

function eventOf(product: Product, service: ServiceRecord, clock: Deps['clock'], reason?: string): ServiceEvent {
  const event: ServiceEvent = { service_uuid: service.uuid, product_uuid: service.product_uuid, module: product.module_name, at: clock.now().toISOString() };
  if (reason !== undefined) event.reason = reason;
  return event;
}

/** Text of a thrown value with every secret the module holds (config, service data, module data) cut out. */
export function safeErrorText(module: Module, error: unknown): string {
  const secrets = collectSecretValues({ c: module.configValues, s: module.service_data, m: module.module_data });
  return String(scrub(errorMessage(error), secrets));
}

/**
 * create() / suspend() / … : sets the action's status (create, suspend → `processing`), queues its job with
 * `Task.add('ModuleJob', 'Module', {module, method, tries, backoff, timeout, maxExceptions}, [action, 'service:<uuid>'])`
 * and answers `{status:'success'}` at once. When queueing fails the previous status is restored.
 */
export async function queueProvisionAction(product: Product, action: ProvisionAction, deps: Deps): Promise<JobResult> {
  const rule = ACTION_TRANSITIONS[action];
  const uuid = product.service_uuid;
  const service = uuid ? await deps.services.get(uuid) : null;
  if (!uuid || !service) {
    product.logError(action, { service_uuid: uuid }, JOB_ERRORS.invalidData);
    return jobError(JOB_ERRORS.invalidData);
  }
  const previous = service.provision_status;
  const next = applyTransition(previous, rule.next);
  if (next !== previous) await deps.services.setProvisionStatus(uuid, next);
  let taskId: string;
  try {
    const options = product.jobOptions(rule.job);
    taskId = await deps.tasks.add(MODULE_JOB, MODULE_QUEUE, { module: product, method: rule.job, ...options }, [action, `service:${uuid}`]);
  } catch (error) {
    if (next !== previous) await deps.services.setProvisionStatus(uuid, previous, service.status_reason ?? undefined);
    product.logError(action, { service_uuid: uuid, method: rule.job }, safeErrorText(product, error));
    return jobError(JOB_ERRORS.unavailable);
  }
  product.logInfo(action, { service_uuid: uuid }, { queued: rule.job, task_id: taskId, status: next });
  if (rule.event) await deps.hooks.emit(rule.event, eventOf(product, { ...service, provision_status: next }, deps.clock));
  return { status: 'success' };
}

/**
 * Runs one attempt of a job method (`implementation`, the subclass's own code) and applies the spec's outcome transition: success → the rule's status and
 * event; failure (an error result or a throw) on the last attempt → the rule's failure status, an error log and
 * `service.failed`; failure before the last attempt → status untouched so the queue's retry starts from the same state.
 * The last attempt is the one reaching `tries`, or a throw reaching `maxExceptions` (as the queue decides it).
 * Jobs expecting `processing` (createJob, suspendJob) re-enter it when retried after a failure. Nothing but
 * terminationJob runs on a `terminated` service.
 */
export async function runProvisionJob(
  product: Product,
  method: JobMethod,
  deps: Deps,
  opts: JobRunOptions,
  implementation: () => Promise<JobResult>,
): Promise<JobResult> {
  const rule = JOB_TRANSITIONS[method];
  const uuid = product.service_uuid;
  const service = uuid ? await deps.services.get(uuid) : null;
  if (!uuid || !service) {
    product.logError(rule.action, { service_uuid: uuid, method }, JOB_ERRORS.invalidData);
    return jobError(JOB_ERRORS.invalidData);
  }
  if (service.provision_status === 'terminated' && method !== 'terminationJob') {
    const result = jobError(JOB_ERRORS.invalidData);
    product.logError(rule.action, { service_uuid: uuid, method }, { ...result, reason: 'service is terminated' });
    return result;
  }
  if (Object.keys(service.service_data ?? {}).length) product.service_data = { ...service.service_data };
  let current = service.provision_status;
  if (rule.from !== 'any' && current !== rule.from) {
    await deps.services.setProvisionStatus(uuid, rule.from);
    current = rule.from;
  }

  const attempt = opts.attempt ?? 1;
  const tries = opts.tries ?? attempt;
  const request = { service_uuid: uuid, method, attempt, tries };
  let result: JobResult;
  let threw = false;
  if (opts.signal) product.abortSignal = opts.signal;
  try {
    result = normalizeJobResult(await implementation.call(product));
    if (result.status === 'error' && result.message) result.message = safeErrorText(product, result.message);
  } catch (error) {
    // A throw after the worker aborted the attempt (timeout, stop) is no exception for the queue either.
    threw = !opts.signal?.aborted;
    result = jobError(safeErrorText(product, error));
  }
  const answer = (): JobResult => {
    if (threw && opts.rethrow) throw new Error(result.message);
    return result;
  };

  if (result.status === 'success') {
    const next = applyTransition(current, rule.success);
    if (next !== current) await deps.services.setProvisionStatus(uuid, next);
    product.logInfo(rule.action, request, { ...result, provision_status: next });
    await deps.hooks.emit(rule.successEvent, eventOf(product, { ...service, provision_status: next }, deps.clock));
    return result;
  }
  const reason = result.message ?? JOB_ERRORS.unknown;
  const exceptionsSpent = threw && (opts.exceptions ?? 0) + 1 >= (opts.maxExceptions ?? Infinity);
  if (attempt < tries && !exceptionsSpent) {
    product.logError(rule.action, request, { ...result, provision_status: current, retry: true });
    return answer();
  }
  const next = applyTransition(current, rule.failure);
  if (next !== current) await deps.services.setProvisionStatus(uuid, next, reason);
  product.logError(rule.action, request, { ...result, provision_status: next });
  await deps.hooks.emit('service.failed', { ...eventOf(product, service, deps.clock), action: rule.action, reason });
  return answer();
}
