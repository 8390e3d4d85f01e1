// The Stripe gateway's settings (module_data): sealed secret key and webhook signing secret, optional API base URL
// (a local double in tests and the demo), checked and normalized by getModuleData.
import { z } from 'zod';

/** The events this module handles; enable exactly these on the Stripe webhook endpoint. */
export const STRIPE_EVENTS = ['payment_intent.succeeded', 'payment_intent.payment_failed'] as const;

/** Signature tolerance: a `Stripe-Signature` timestamp further than this from the platform clock (either way) is refused. */
export const SIGNATURE_TOLERANCE_S = 300;

const StripeSettingsSchema = z.object({
  /** `sk_test_…` / `sk_live_…` (or a restricted `rk_…` key with PaymentIntents, Checkout and Refunds write). */
  secret_key: z.string({ error: 'secret_key is required: the Stripe secret key (sk_test_… or sk_live_…)' }).regex(/^(sk|rk)_(test|live)_[A-Za-z0-9_]{4,}$/, 'secret_key must be a Stripe secret key (sk_test_… or sk_live_…)'),
  /** The endpoint's signing secret `whsec_…`. */
  webhook_secret: z.string({ error: 'webhook_secret is required: the endpoint signing secret (whsec_…)' }).regex(/^whsec_[A-Za-z0-9+/=_-]{8,}$/, 'webhook_secret must be the endpoint signing secret (whsec_…)'),
  /** Stripe's API by default; `http(s)://host:port` of a local double for tests and the demo. */
  api_base: z.url({ protocol: /^https?$/ }).optional(),
  /** Statement/product name shown on the Checkout page. */
  product_name: z.string().min(1).max(100).optional(),
  sandbox: z.boolean().optional(),
});

export type StripeSettings = z.infer<typeof StripeSettingsSchema>;

/** An error the platform answers with 422 and this text (the first bad field); `errors` holds every field's messages. */
class StripeSettingsError extends Error {
  readonly statusCode = 422;
  constructor(message: string, readonly errors: Record<string, string[]> = {}) {
    super(message);
  }
}

/** Optional members an empty form field clears. */
const OPTIONAL_TEXT = ['api_base', 'product_name'] as const;

/** Checks the module_data (after the base sanitizer); throws StripeSettingsError naming the first bad field. */
export function parseSettings(data: Record<string, unknown>): StripeSettings {
  const input = { ...data };
  for (const key of OPTIONAL_TEXT) if (input[key] === '' || input[key] === null) delete input[key];
  const parsed = StripeSettingsSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const errors: Record<string, string[]> = {};
    for (const each of parsed.error.issues) (errors[each.path.join('.') || '_'] ??= []).push(each.message);
    throw new StripeSettingsError(`${issue.path.join('.') || 'module_data'}: ${issue.message}`, errors);
  }
  return parsed.data;
}

/** `test` for sk_test_/rk_test_ keys, else `live`. */
export function keyMode(secretKey: string): 'test' | 'live' {
  return /^(sk|rk)_test_/.test(secretKey) ? 'test' : 'live';
}
