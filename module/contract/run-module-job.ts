// Entry the ModuleJob worker calls: runs `method` of a module instance with its abort signal and normalizes the answer.
import type { TaskContext } from '../task/queue.ts';
import type { Module } from './module.ts';
import { Product } from './product.ts';
import { safeErrorText, type JobRunOptions } from './product-jobs.ts';
import { isJobMethod } from './provision-status.ts';
import { jobError, normalizeJobResult, type JobResult } from './result.ts';

/**
 * Runs one attempt of a module job. Product job methods (createJob …) go through `Product.runJob` (the service
 * loaded); any other public method is called with `module.abortSignal` set. Failures come back as
 * `{status:'error', message}` so the queue retries per `tries`; with `opts.rethrow` a thrown exception is thrown
 * again (secrets cut out) so the queue also counts it toward maxExceptions. What the outcome means for the service
 * is decided by the platform's lifecycle from the queue's events, never here.
 */
export async function runModuleJob(module: Module, method: string, opts: JobRunOptions = {}): Promise<JobResult> {
  if (module instanceof Product && isJobMethod(method)) return module.runJob(method, opts);
  const fn = (module as unknown as Record<string, unknown>)[method];
  if (typeof fn !== 'function' || method.startsWith('_') || method === 'constructor') {
    return jobError(`Unknown job method ${method}`);
  }
  if (opts.signal) module.abortSignal = opts.signal;
  try {
    return normalizeJobResult(await (fn as () => unknown).call(module));
  } catch (error) {
    const message = safeErrorText(module, error);
    module.logError(method, {}, message);
    if (opts.rethrow) throw new Error(message);
    return jobError(message);
  }
}

/** One ModuleJob attempt as a task queue runs it: the attempt's signal, exceptions rethrown for the queue's maxExceptions. */
export function runModuleJobAttempt(module: Module, method: string, task: TaskContext): Promise<JobResult> {
  return runModuleJob(module, method, { signal: task.signal, rethrow: true });
}
