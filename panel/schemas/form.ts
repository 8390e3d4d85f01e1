// Zod field helpers for form-encoded and JSON bodies: each field fails with exactly one given spec error text.
import { z } from 'zod';
import { canonicalIp, formatCidr, parseCidr, parseIp } from './ip.ts';

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

/** A flag accepting `1`/`0`/`true`/`false` (strings, numbers or JSON booleans). */
export function boolFlag(errorText: string): z.ZodType<boolean> {
  return field(errorText, toBoolean);
}

/** A string (numbers are taken as their decimal text); `nonEmpty` also rejects `""`. */
export function text(errorText: string, opts: { nonEmpty?: boolean; maxLength?: number } = {}): z.ZodType<string> {
  return field(errorText, (value) => {
    const s = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
    if (typeof s !== 'string') return undefined;
    if (opts.nonEmpty && s.length === 0) return undefined;
    if (opts.maxLength !== undefined && s.length > opts.maxLength) return undefined;
    return s;
  });
}

/** A non-empty string: the spec's `... must be filled` checks. */
export function filled(errorText: string): z.ZodType<string> {
  return text(errorText, { nonEmpty: true });
}

/** One of the listed string values (exact case). */
export function oneOf<const T extends readonly string[]>(values: T, errorText: string): z.ZodType<T[number]> {
  return field(errorText, (value) => (typeof value === 'string' && values.includes(value) ? (value as T[number]) : undefined));
}

type Family = 4 | 6 | 'any';

function familyOk(version: 4 | 6, family: Family): boolean {
  return family === 'any' || family === version;
}

/** An IP address (no prefix) of the given family, returned in canonical text. */
export function ipAddress(errorText: string, family: Family = 'any'): z.ZodType<string> {
  return field(errorText, (value) => {
    if (typeof value !== 'string') return undefined;
    const bytes = parseIp(value, false);
    if (!bytes || !familyOk(bytes.length === 4 ? 4 : 6, family)) return undefined;
    return canonicalIp(value) ?? undefined;
  });
}

/** A CIDR `addr/prefix` (prefix required) of the given family, returned in canonical text (address kept as given). */
export function cidr(errorText: string, family: Family = 'any'): z.ZodType<string> {
  return field(errorText, (value) => {
    const parsed = typeof value === 'string' ? parseCidr(value) : null;
    return parsed && familyOk(parsed.version, family) ? formatCidr(parsed) : undefined;
  });
}
