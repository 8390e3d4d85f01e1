// ModuleJobs of Plugin, Payment and Notification modules: the method of the rebuilt instance, called with the task's
// `args`, on the same queue as Product jobs (whose provisioning runner lives in ../workers.ts).
import type { Module } from '../../contract/module.ts';
import { moduleJobInputSchema, MODULE_REF_ERROR, type ModuleRef } from '../../task/module-job.ts';
import type { TaskHandler } from '../../task/queue.ts';

/** Rebuilds the instance a ModuleJob names (a gateway/channel instance is bound with its opened module_data). */
export type HostedResolver = (ref: ModuleRef) => Promise<Module>;

/** Methods a queued job may not call: the lifecycle (the admin's) and framework members. */
const NOT_JOBS = new Set(['activate', 'deactivate', 'update', 'toJSON', 'view', 'config', 'constructor']);

/** True when a ModuleJob input names a Product (the provisioning runner takes it). */
export function isProductJob(input: Record<string, unknown>): boolean {
  const module = input.module as { type?: unknown } | undefined;
  return module?.type === 'Product';
}

/**
 * Handler of non-Product ModuleJobs: input `{module: {type, name, payment_gateway_uuid?}, method, args?: unknown[]}`.
 * The attempt's AbortSignal is set as `abortSignal`; the method's answer is the task result (an answer
 * `{status:'error', message}` fails the attempt, retried per `tries`; a throw counts toward maxExceptions).
 */
export function hostedModuleJob(resolve: HostedResolver): TaskHandler {
  return async (input, ctx) => {
    const parsed = moduleJobInputSchema.safeParse(input);
    if (!parsed.success) throw new Error(MODULE_REF_ERROR);
    const { module: ref, method } = parsed.data;
    const args = Array.isArray(input.args) ? (input.args as unknown[]) : [];
    const instance = await resolve(ref);
    const fn = (instance as unknown as Record<string, unknown>)[method];
    if (typeof fn !== 'function' || NOT_JOBS.has(method) || method.startsWith('log')) throw new Error(`Module ${ref.type}/${ref.name} has no job method ${method}`);
    instance.abortSignal = ctx.signal;
    return (await (fn as (...a: unknown[]) => unknown).apply(instance, args)) ?? null;
  };
}
