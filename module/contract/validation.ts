// zod validation for module input: the spec's shared patterns, a field → messages[] error bag, input sanitising.
import { z } from 'zod';
import type { ErrorBag } from './result.ts';
import { SECRET_KEY_PATTERN } from './redact.ts';

/** `disk_space` → `disk space` (Laravel-style attribute names in messages). */
export function fieldLabel(name: string): string {
  return name.replace(/_/g, ' ');
}

const isMissing = (value: unknown) => value === undefined || value === null || value === '';
const required = (label: string) => `The ${fieldLabel(label)} field is required.`;

/** Required string; '' and null count as missing. */
export function requiredString(name: string) {
  return z.preprocess(
    (v) => (isMissing(v) ? undefined : v),
    z.string({ error: (iss) => (iss.input === undefined ? required(name) : `The ${fieldLabel(name)} field must be a string.`) }),
  );
}

/** Required integer within [min, max]; numeric strings from forms are accepted. */
export function requiredInteger(name: string, min: number, max?: number) {
  const label = fieldLabel(name);
  let schema = z
    .int({ error: (iss) => (iss.input === undefined ? required(name) : `The ${label} field must be an integer.`) })
    .min(min, { error: `The ${label} field must be at least ${min}.` });
  if (max !== undefined) schema = schema.max(max, { error: `The ${label} field must not be greater than ${max}.` });
  return z.preprocess((v) => {
    if (isMissing(v)) return undefined;
    if (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)) return Number(v);
    return v;
  }, schema);
}

/** Required value of `values`. */
export function requiredEnum<const T extends readonly [string, ...string[]]>(name: string, values: T) {
  return z.preprocess(
    (v) => (isMissing(v) ? undefined : v),
    z.enum(values, {
      error: (iss) => (iss.input === undefined ? required(name) : `The selected ${fieldLabel(name)} is invalid.`),
    }),
  );
}

export const PLAN_TYPES = ['basic', 'premium', 'enterprise'] as const;

/** Product data (saveProductData): server_location, plan_type, disk_space 1–1000 GB, bandwidth ≥ 1. */
export const productDataSchema = z.object({
  server_location: requiredString('server_location'),
  plan_type: requiredEnum('plan_type', PLAN_TYPES),
  disk_space: requiredInteger('disk_space', 1, 1000),
  bandwidth: requiredInteger('bandwidth', 1),
});
export type ProductData = z.infer<typeof productDataSchema>;

/** Letters, digits and hyphens, dot-separated, ending in a label of at least 2 letters (the spec's host name rule). */
const HOST_NAME_PATTERN = /^[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$/i;
const USERNAME_PATTERN = /^[A-Za-z0-9_-]+$/;

const trimmed = (v: unknown) => (typeof v === 'string' ? v.trim() : v);

/** domain: lower-cased and trimmed, required, host name pattern. */
const domainSchema = z.preprocess(
  (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
  requiredString('domain').pipe(z.string().regex(HOST_NAME_PATTERN, { error: 'The domain field format is invalid.' })),
);

/** username: trimmed, required, letters/digits/dash/underscore, 3–20 characters. */
export const usernameSchema = z.preprocess(
  trimmed,
  requiredString('username').pipe(
    z
      .string()
      .min(3, { error: 'The username field must be at least 3 characters.' })
      .max(20, { error: 'The username field must not be greater than 20 characters.' })
      .regex(USERNAME_PATTERN, { error: 'The username field must only contain letters, numbers, dashes, and underscores.' }),
  ),
);

/** Service data (saveServiceData): domain, username, notes (nullable, default null). */
export const serviceDataSchema = z.object({
  domain: domainSchema,
  username: usernameSchema,
  notes: z
    .string({ error: 'The notes field must be a string.' })
    .nullish()
    .transform((v) => v ?? null),
});
export type ServiceData = z.infer<typeof serviceDataSchema>;

/** Shared password rule: required, ≥ 8 characters, one lower-case letter, one upper-case letter, one digit. */
export const passwordSchema = requiredString('password').pipe(
  z
    .string()
    .min(8, { error: 'The password field must be at least 8 characters.' })
    .regex(/[a-z]/, { error: 'The password field must contain at least one lowercase letter.' })
    .regex(/[A-Z]/, { error: 'The password field must contain at least one uppercase letter.' })
    .regex(/[0-9]/, { error: 'The password field must contain at least one number.' }),
);

/** Shared nullable IP address (v4 or v6); '' counts as null. */
export function nullableIp(name = 'ip') {
  return z.preprocess(
    (v) => (v === undefined || v === '' ? null : trimmed(v)),
    z.union([z.ipv4(), z.ipv6()], { error: `The ${fieldLabel(name)} field must be a valid IP address.` }).nullable(),
  );
}

/** Notification message (send): to e-mail, subject ≤ 255, message required, attachments optional. */
export const notificationMessageSchema = z.object({
  to: requiredString('to').pipe(z.email({ error: 'The to field must be a valid email address.' })),
  subject: requiredString('subject').pipe(z.string().max(255, { error: 'The subject field must not be greater than 255 characters.' })),
  message: requiredString('message'),
  attachments: z.array(z.unknown(), { error: 'The attachments field must be an array.' }).optional(),
});
export type NotificationMessage = z.infer<typeof notificationMessageSchema>;

/** Outcome of `validate`. */
export type Validation<T> = { success: true; data: T } | { success: false; errors: ErrorBag };

/** Field path → messages from zod issues (`_` for issues on the whole input). */
export function errorBag(error: z.ZodError): ErrorBag {
  const bag: ErrorBag = {};
  for (const issue of error.issues) {
    const key = issue.path.length ? issue.path.map(String).join('.') : '_';
    const messages = (bag[key] ??= []);
    if (!messages.includes(issue.message)) messages.push(issue.message);
  }
  return bag;
}

export function validate<S extends z.ZodType>(schema: S, data: unknown): Validation<z.output<S>> {
  const parsed = schema.safeParse(data);
  return parsed.success ? { success: true, data: parsed.data } : { success: false, errors: errorBag(parsed.error) };
}

/** Removes HTML/XML tags (and comments) from text. */
export function stripTags(text: string): string {
  return text.replace(/<!--[\s\S]*?-->/g, '').replace(/<\/?[a-zA-Z!?][^<>]*>/g, '');
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;', '`': '&#x60;', '=': '&#x3D;' };

/** Escapes text for HTML (the same set handlebars escapes). */
export function escapeHtml(text: unknown): string {
  return String(text ?? '').replace(/[&<>"'`=]/g, (c) => HTML_ESCAPES[c]);
}

/**
 * Deep copy of `input` with strings trimmed and tags stripped. Members whose key names a secret (password,
 * api_key, …) are left byte for byte: a password may legitimately contain `<` or surrounding spaces.
 */
export function sanitizeInput<T>(input: T): T {
  const walk = (value: unknown, key: string | null): unknown => {
    if (typeof value === 'string') return key !== null && SECRET_KEY_PATTERN.test(key) ? value : stripTags(value).trim();
    if (Array.isArray(value)) return value.map((item) => walk(item, key));
    if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
    }
    return value;
  };
  return walk(input, null) as T;
}
