// The `ModuleJob` handler: rebuilds a module instance from its stored reference and runs one of its methods.
import { z } from 'zod';
import type { TaskContext, TaskHandler } from './queue.ts';

export const MODULE_JOB = 'ModuleJob';

/** What is stored instead of a module instance (an instance is never serialised). */
export interface ModuleRef {
  type: string;
  name: string;
  service_uuid?: string | null;
  payment_gateway_uuid?: string | null;
}

/** Rebuilds the module instance a ModuleJob names (implemented by the platform runtime). */
export type ModuleResolver = (ref: ModuleRef) => Promise<object>;

/** Runs `method` of a rebuilt instance for one attempt (the platform's runs the provisioning state machine). */
export type ModuleMethodRunner = (instance: object, method: string, ctx: TaskContext) => Promise<unknown>;

/** The default runner: hands the instance the attempt's AbortSignal (when it declares `abortSignal`) and calls the method. */
const callMethod: ModuleMethodRunner = async (instance, method, ctx) => {
  const target = instance as Record<string, unknown>;
  const fn = target[method];
  if (typeof fn !== 'function') throw new Error(`Module has no method ${method}`);
  if ('abortSignal' in target) target.abortSignal = ctx.signal;
  return (fn as () => unknown).call(instance);
};

const moduleRefSchema = z.object({
  type: z.enum(['Product', 'Plugin', 'Payment', 'Notification']),
  name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/),
  service_uuid: z.string().min(1).nullable().optional(),
  payment_gateway_uuid: z.string().min(1).nullable().optional(),
});

/** Method names a ModuleJob may call: identifiers, never Object.prototype members such as `constructor`. */
const methodSchema = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_]*$/)
  .refine((name) => !(name in Object.prototype), 'not a module method');

export const moduleJobInputSchema = z.object({ module: moduleRefSchema, method: methodSchema }).passthrough();

export const MODULE_REF_ERROR = 'ModuleJob needs `module` (a module instance or {type, name, service_uuid?}) and `method`';

/**
 * The reference of `module`, which is either a module instance (exposing `module_type`, `module_name` and, for a
 * Product, `service_uuid`) or already a reference. Throws on anything else.
 */
export function toModuleRef(module: unknown): ModuleRef {
  if (module !== null && typeof module === 'object') {
    const m = module as Record<string, unknown>;
    const candidate =
      typeof m.module_type === 'string' && typeof m.module_name === 'string'
        ? { type: m.module_type, name: m.module_name, service_uuid: optionalString(m.service_uuid), payment_gateway_uuid: optionalString(m.payment_gateway_uuid) }
        : { type: m.type, name: m.name, service_uuid: optionalString(m.service_uuid), payment_gateway_uuid: optionalString(m.payment_gateway_uuid) };
    const parsed = moduleRefSchema.safeParse(candidate);
    if (parsed.success) {
      const ref: ModuleRef = { type: parsed.data.type, name: parsed.data.name };
      if (parsed.data.service_uuid) ref.service_uuid = parsed.data.service_uuid;
      if (parsed.data.payment_gateway_uuid) ref.payment_gateway_uuid = parsed.data.payment_gateway_uuid;
      return ref;
    }
  }
  throw new Error(MODULE_REF_ERROR);
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Handler of `ModuleJob` tasks: input `{module: ModuleRef, method}`. Resolves the instance and runs the method with
 * `run` (by default: the attempt's AbortSignal as `abortSignal`, then the call) and returns what it returns — a
 * `{status:'error', message}` fails the attempt with that message, a throw counts as an exception.
 */
export function createModuleJob(resolve: ModuleResolver, run: ModuleMethodRunner = callMethod): TaskHandler {
  return async (input, ctx) => {
    const parsed = moduleJobInputSchema.safeParse(input);
    if (!parsed.success) throw new Error(MODULE_REF_ERROR);
    const { module: ref, method } = parsed.data;
    const instance = await resolve(ref);
    if (typeof (instance as Record<string, unknown>)[method] !== 'function') throw new Error(`Module ${ref.type}/${ref.name} has no method ${method}`);
    return (await run(instance, method, ctx)) ?? null;
  };
}
