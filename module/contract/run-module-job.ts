// Entry the ModuleJob worker calls: runs `method` of a module instance with its abort signal and normalizes the answer.
import type { Module } from './module.ts';
import { Product } from './product.ts';
import type { JobRunOptions } from './product-jobs.ts';
import { isJobMethod } from './provision-status.ts';
import { errorMessage, jobError, normalizeJobResult, type JobResult } from './result.ts';

/**
 * Runs one attempt of a module job with the attempt known. Product job methods (createJob …) go through
 * `Product.runJob`, which applies the provisioning state machine (a failure before the last of `tries` keeps the
 * status); any other public method is called with `module.abortSignal` set. Never throws: failures come back as
 * `{status:'error', message}` so the queue retries per `tries`.
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
    module.logError(method, { attempt: opts.attempt ?? 1 }, errorMessage(error));
    return jobError(errorMessage(error));
  }
}
