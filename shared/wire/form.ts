// Zod field helpers for form-encoded and JSON bodies: each field fails with exactly one given spec error text.
import { z } from 'zod';

/**
 * A schema over an unknown input that runs `parse` and fails with `errorText` (and only that text) when `parse`
 * returns `undefined`. Combine with `.optional()` for optional parameters: an absent field is then skipped.
 */
export function field<T>(errorText: string, parse: (value: unknown) => T | undefined): z.ZodType<T> {
  return z.unknown().transform((value, ctx) => {
    const out = value === undefined ? undefined : parse(value);
    if (out === undefined) {
      ctx.addIssue({ code: 'custom', message: errorText });
      return z.NEVER;
    }
    return out;
  }) as unknown as z.ZodType<T>;
}

/** The integer a form or JSON value holds (`"42"`, `42`, `"-1"`), or undefined. No spaces, no decimals, no `+`. */
export function toInteger(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^-?\d{1,16}$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

/** The boolean a form or JSON value holds: `1`/`0`, `true`/`false` (any case), JSON true/false; else undefined. */
export function toBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value !== 'string') return undefined;
  const v = value.toLowerCase();
  if (v === '1' || v === 'true') return true;
  if (v === '0' || v === 'false') return false;
  return undefined;
}

/** An integer `min`..`max` (inclusive) given as number or decimal string; anything else fails with `errorText`. */
export function intInRange(min: number, max: number, errorText: string): z.ZodType<number> {
  return field(errorText, (value) => {
    const n = toInteger(value);
    return n !== undefined && n >= min && n <= max ? n : undefined;
  });
}
