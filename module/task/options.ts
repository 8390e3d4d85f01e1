// Task options: the spec's ModuleJob keys (tries, backoff, timeout, maxExceptions) validated and defaulted.
import { z } from 'zod';
import { DEFAULT_TASK_OPTIONS, type TaskOptions } from './queue.ts';

/** Input keys that are task options rather than job input (the spec's Task job data table). */
const OPTION_KEYS = ['tries', 'backoff', 'timeout', 'maxExceptions'] as const;

/**
 * Options as the queue API takes them. Seconds may be fractional here (tests use sub-second backoffs);
 * the `Task.add` facade narrows them to the spec's integers.
 */
const queueOptionsSchema = z.object({
  tries: z.number().int().min(1).optional(),
  backoff: z.number().min(0).optional(),
  timeout: z.number().positive().optional(),
  maxExceptions: z.number().int().min(1).optional(),
});

/** The spec's job data keys as `Task.add` receives them: integers. */
const specOptionsSchema = z.object({
  tries: z.number().int().min(1).optional(),
  backoff: z.number().int().min(0).optional(),
  timeout: z.number().int().min(1).optional(),
  maxExceptions: z.number().int().min(1).optional(),
});

/** Fills defaults (1 / 10 / 600 / 2) and validates; throws a ZodError on a bad value. */
export function resolveOptions(partial: Partial<TaskOptions> = {}): TaskOptions {
  const parsed = queueOptionsSchema.parse(partial);
  return {
    tries: parsed.tries ?? DEFAULT_TASK_OPTIONS.tries,
    backoff: parsed.backoff ?? DEFAULT_TASK_OPTIONS.backoff,
    timeout: parsed.timeout ?? DEFAULT_TASK_OPTIONS.timeout,
    maxExceptions: parsed.maxExceptions ?? DEFAULT_TASK_OPTIONS.maxExceptions,
  };
}

/** Splits job data into the input proper and the option keys found in it (validated as the spec's integers). */
export function splitOptions(inputData: Record<string, unknown>): { input: Record<string, unknown>; options: Partial<TaskOptions> } {
  const input: Record<string, unknown> = {};
  const raw: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(inputData)) {
    if ((OPTION_KEYS as readonly string[]).includes(key)) {
      if (value !== undefined && value !== null) raw[key] = value;
    } else input[key] = value;
  }
  return { input, options: specOptionsSchema.parse(raw) };
}
