// The official Stripe client for one gateway's settings: its secret key, and Stripe's API or the configured base URL.
import StripeSdk from 'stripe';
import type { StripeSettings } from './settings.ts';

export type StripeClient = InstanceType<typeof StripeSdk>;

/** Builds the `stripe` library client; `api_base` (tests, demo) points it at a local double over http or https. */
export function stripeClient(settings: StripeSettings): StripeClient {
  const options: ConstructorParameters<typeof StripeSdk>[1] = { maxNetworkRetries: 1, timeout: 20_000, telemetry: false };
  if (settings.api_base) {
    const url = new URL(settings.api_base);
    options.host = url.hostname;
    options.port = url.port || (url.protocol === 'https:' ? 443 : 80);
    options.protocol = url.protocol === 'https:' ? 'https' : 'http';
  }
  return new StripeSdk(settings.secret_key, options);
}

/** The library's webhook helpers (no key needed to verify or to sign test events). */
export const stripeWebhooks: StripeClient['webhooks'] = new StripeSdk('sk_test_webhooks_only').webhooks;
