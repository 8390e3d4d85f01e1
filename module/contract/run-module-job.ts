// Entry the ModuleJob worker calls: runs `method` of a module instance with its abort signal and normalizes the answer.
import type { TaskContext } from '../task/queue.ts';
import type { Module } from './module.ts';
import { Product } from './product.ts';
import { safeErrorText, type JobRunOptions } from './product-jobs.ts';
import { isJobMethod } from './provision-status.ts';
import { jobError, normalizeJobResult, type JobResult } from './result.ts';

/**
 * Runs one attempt of a module job with the attempt known. Product job methods (createJob …) go through
 * `Product.runJob`, which applies the provisioning state machine (a failure before the last of `tries` keeps the
 * status); any other public method is called with `module.abortSignal` set. Failures come back as
 * `{status:'error', message}` so the queue retries per `tries`; with `opts.rethrow` a thrown exception is thrown
 * again (secrets cut out) so the queue also counts it toward maxExceptions.
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
    module.logError(method, { attempt: opts.attempt ?? 1 }, message);
    if (opts.rethrow) throw new Error(message);
    return jobError(message);
  }
}

/**
 * One ModuleJob attempt as a task queue runs it: the task's attempt, tries, exception count and signal, exceptions
 * rethrown for the queue's maxExceptions. The module decides "last attempt" exactly as the queue will.
 */
export function runModuleJobAttempt(module: Module, method: string, task: TaskContext): Promise<JobResult> {
  return runModuleJob(module, method, {
    signal: task.signal,
    attempt: task.attempt,
    tries: task.options?.tries,
    exceptions: task.exceptions,
    maxExceptions: task.options?.maxExceptions,
    rethrow: true,
  });
}
