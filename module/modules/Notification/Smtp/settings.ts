// The Smtp channel's settings (`module_data`): server, port, encryption, credentials, sender; the password is sealed by
// the platform's module instance store and never answered or logged.
import { z } from 'zod';
import { errorBag, fieldLabel } from '../../../contract/validation.ts';
import type { ErrorBag } from '../../../contract/result.ts';

export const ENCRYPTIONS = ['none', 'starttls', 'tls'] as const;
export type Encryption = (typeof ENCRYPTIONS)[number];

const required = (name: string) => `The ${fieldLabel(name)} field is required.`;
const missing = (v: unknown) => v === undefined || v === null || v === '';

/** Host names or IP literals: letters, digits, dots, hyphens, colons (IPv6); no spaces or schemes. */
const HOST = /^[A-Za-z0-9.:-]{1,253}$/;
/** `user@example.com` or `Name <user@example.com>`. */
const SENDER = /^(?:[^<>\r\n]{0,200}<)?[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+>?$/;

/**
 * module_data of an Smtp channel. `encryption`: `none` (plain, STARTTLS ignored), `starttls` (upgrade required) or
 * `tls` (implicit TLS, usually port 465). `ca`: PEM of a CA to trust besides the system's (a private relay).
 */
const smtpSettingsSchema = z.object({
  host: z.preprocess((v) => (missing(v) ? undefined : v), z.string({ error: (i) => (i.input === undefined ? required('host') : 'The host field must be a string.') })
    .regex(HOST, { error: 'The host field format is invalid.' })),
  port: z.preprocess(
    (v) => (missing(v) ? undefined : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v),
    z.int({ error: (i) => (i.input === undefined ? required('port') : 'The port field must be an integer.') })
      .min(1, { error: 'The port field must be at least 1.' }).max(65535, { error: 'The port field must not be greater than 65535.' }),
  ),
  encryption: z.preprocess(
    (v) => (missing(v) ? undefined : typeof v === 'string' ? v.toLowerCase() : v),
    z.enum(ENCRYPTIONS, { error: (i) => (i.input === undefined ? required('encryption') : 'The selected encryption is invalid.') }),
  ),
  username: z.string({ error: 'The username field must be a string.' }).max(255, { error: 'The username field must not be greater than 255 characters.' }).optional(),
  password: z.string({ error: 'The password field must be a string.' }).max(1024, { error: 'The password field must not be greater than 1024 characters.' }).optional(),
  sender: z.preprocess((v) => (missing(v) ? undefined : v), z.string({ error: (i) => (i.input === undefined ? required('sender') : 'The sender field must be a string.') })
    .regex(SENDER, { error: 'The sender field must be a valid email address.' })),
  ca: z.string({ error: 'The ca field must be a string.' }).regex(/-----BEGIN CERTIFICATE-----/, { error: 'The ca field must be a PEM certificate.' }).optional(),
}).superRefine((data, ctx) => {
  if (data.password && !data.username) ctx.addIssue({ code: 'custom', path: ['username'], message: 'The username field is required when password is present.' });
});

export type SmtpSettings = z.infer<typeof smtpSettingsSchema>;

/** Settings as stored: `server` is accepted as another name of `host`, empty credentials are dropped. */
export function parseSmtpSettings(data: Record<string, unknown>): { success: true; data: SmtpSettings } | { success: false; errors: ErrorBag } {
  const input: Record<string, unknown> = { ...data };
  if (input.host === undefined && input.server !== undefined) input.host = input.server;
  delete input.server;
  for (const key of ['username', 'password', 'ca'] as const) if (input[key] === '' || input[key] === null) delete input[key];
  const parsed = smtpSettingsSchema.safeParse(input);
  if (!parsed.success) return { success: false, errors: errorBag(parsed.error) };
  const out: SmtpSettings = { host: parsed.data.host, port: parsed.data.port, encryption: parsed.data.encryption, sender: parsed.data.sender };
  if (parsed.data.username) out.username = parsed.data.username;
  if (parsed.data.password) out.password = parsed.data.password;
  if (parsed.data.ca) out.ca = parsed.data.ca;
  return { success: true, data: out };
}

/** True when module_data names a server (an unconfigured module writes its e-mails to the log instead). */
export function isConfigured(data: Record<string, unknown>): boolean {
  return typeof data.host === 'string' && data.host !== '';
}

/** Thrown by getModuleData on invalid settings: the admin API answers 422 with the first messages. */
export class SmtpSettingsError extends Error {
  readonly statusCode = 422;
  constructor(readonly errors: ErrorBag) {
    super(`invalid module_data: ${Object.entries(errors).map(([field, messages]) => `${field}: ${messages.join(' ')}`).join('; ')}`);
    this.name = 'SmtpSettingsError';
  }
}
