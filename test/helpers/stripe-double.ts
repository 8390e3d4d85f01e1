// The tests' Stripe double (the module's local double, listening on loopback) and signing of hand-made events with the
// library's own test-header helper.
import { stripeWebhooks } from '../../module/modules/Payment/Stripe/client.ts';
import { StripeLocalDouble, type LocalDoubleOptions } from '../../module/modules/Payment/Stripe/local-double.ts';

export { StripeLocalDouble as StripeDouble };

/** Starts a double on 127.0.0.1 (free port); `url` is the module's `api_base`. */
export async function startStripeDouble(opts: LocalDoubleOptions): Promise<{ double: StripeLocalDouble; url: string }> {
  const double = new StripeLocalDouble(opts);
  const url = await double.listen(0);
  return { double, url };
}

/** A `Stripe-Signature` header for `payload` (library helper), at `timestamp` seconds. */
export function signatureFor(payload: string, secret: string, timestamp: number): string {
  return stripeWebhooks.generateTestHeaderString({ payload, secret, timestamp });
}

/** A `payment_intent.*` event as Stripe sends it. */
export function intentEvent(opts: { id: string; type: string; invoice_uuid?: string; amount: number; currency: string; intent?: string; created: number }): Record<string, unknown> {
  return {
    id: opts.id, object: 'event', type: opts.type, livemode: false, created: opts.created,
    data: {
      object: {
        id: opts.intent ?? `pi_${opts.id}`, object: 'payment_intent', amount: opts.amount,
        amount_received: opts.type === 'payment_intent.succeeded' ? opts.amount : 0, currency: opts.currency,
        metadata: opts.invoice_uuid ? { invoice_uuid: opts.invoice_uuid } : {},
        last_payment_error: opts.type === 'payment_intent.payment_failed' ? { code: 'card_declined', message: 'Your card was declined.' } : null,
      },
    },
  };
}
