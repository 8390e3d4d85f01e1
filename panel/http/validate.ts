// Runs a zod schema over a request body or path params and turns the first failure into the spec's error text.
import type { z } from 'zod';
import { ApiError, OWN } from './errors.ts';

/** Whether `value` is a key/value object (what form and JSON bodies parse to; form objects have no Object prototype). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !Buffer.isBuffer(value);
}

/**
 * Validates a request body (or params) with `schema`. A missing body counts as `{}`; a body that is not an object
 * (JSON array, string, number) fails with `Malformed request body` (400). Otherwise the first issue's message — the
 * spec text set by the `shared/wire/form.ts` helpers, in the schema's key order = the spec's order of checks —
 * is thrown as an `ApiError` with the status `statusForText` gives it.
 */
export function parseInput<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const input = body === undefined || body === null ? {} : body;
  if (!isPlainObject(input)) throw new ApiError(OWN.MALFORMED_BODY);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const message = first?.code === 'custom' && first.message ? first.message : OWN.BAD_REQUEST;
  throw new ApiError(message);
}
