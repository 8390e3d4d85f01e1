// The official Stripe client for one gateway's settings: its secret key, and Stripe's API or the configured base URL.
// The library (some 200 files) is loaded on first use, not when the platform starts.
import { createRequire } from 'node:module';
import type StripeSdk from 'stripe';
import type { StripeSettings } from './settings.ts';

export type StripeClient = InstanceType<typeof StripeSdk>;
type Webhooks = StripeClient['webhooks'];

let sdk: typeof StripeSdk | null = null;
let webhooks: Webhooks | null = null;

/** The `stripe` library (its CommonJS build, loaded once, in this thread). */
function stripeSdk(): typeof StripeSdk {
  sdk ??= createRequire(import.meta.url)('stripe') as typeof StripeSdk;
  return sdk;
}

/** Builds the `stripe` library client; `api_base` (tests, demo) points it at a local double over http or https. */
export function stripeClient(settings: StripeSettings): StripeClient {
  const options: ConstructorParameters<typeof StripeSdk>[1] = { maxNetworkRetries: 1, timeout: 20_000, telemetry: false };
  if (settings.api_base) {
    const url = new URL(settings.api_base);
    options.host = url.hostname;
    options.port = url.port || (url.protocol === 'https:' ? 443 : 80);
    options.protocol = url.protocol === 'https:' ? 'https' : 'http';
  }
  const Sdk = stripeSdk();
  return new Sdk(settings.secret_key, options);
}

/** The library's webhook helpers (no key needed to verify or to sign test events), loaded with it on first use. */
export const stripeWebhooks: Pick<Webhooks, 'constructEvent' | 'generateTestHeaderString'> = {
  constructEvent: (...args) => (webhooks ??= new (stripeSdk())('sk_test_webhooks_only').webhooks).constructEvent(...args),
  generateTestHeaderString: (...args) => (webhooks ??= new (stripeSdk())('sk_test_webhooks_only').webhooks).generateTestHeaderString(...args),
};

/** Whether `error` is the library's card error (a decline or a required authentication), without loading it early. */
export function isCardError(error: unknown): error is InstanceType<typeof StripeSdk.errors.StripeCardError> {
  return error instanceof stripeSdk().errors.StripeCardError;
}
