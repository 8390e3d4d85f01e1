// Pure reading of Stripe PaymentIntent events into the ledger's gateway payment shape, and of a signature header's time.
import type { GatewayFailure, GatewayPayment, WebhookPayload } from '../../../contract/payment.ts';

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The PaymentIntent of a `payment_intent.*` event as the ledger records it (metadata `invoice_uuid` links the invoice). */
export function paymentOf(event: WebhookPayload, gateway: { name: string; uuid: string }): GatewayPayment {
  const intent = record(record(event.data).object);
  const metadata = record(intent.metadata);
  const received = typeof intent.amount_received === 'number' && intent.amount_received > 0 ? intent.amount_received : intent.amount;
  return {
    gateway: gateway.name,
    gateway_uuid: gateway.uuid,
    event_id: typeof event.id === 'string' ? event.id : '',
    event_type: typeof event.type === 'string' ? event.type : '',
    invoice_uuid: typeof metadata.invoice_uuid === 'string' ? metadata.invoice_uuid : null,
    amount_minor: typeof received === 'number' && Number.isSafeInteger(received) ? received : -1,
    currency: typeof intent.currency === 'string' ? intent.currency : '',
    external_id: typeof intent.id === 'string' ? intent.id : '',
  };
}

/** A `payment_intent.payment_failed` event: the payment plus Stripe's failure message and code. */
export function failureOf(event: WebhookPayload, gateway: { name: string; uuid: string }): GatewayFailure {
  const intent = record(record(event.data).object);
  const error = record(intent.last_payment_error);
  const reason = typeof error.message === 'string' ? error.message : typeof error.code === 'string' ? error.code : 'payment failed';
  const code = typeof error.code === 'string' ? error.code : undefined;
  return { ...paymentOf(event, gateway), reason, code, auto_charge: record(intent.metadata).auto_charge === '1' };
}

/** The card a succeeded PaymentIntent set up for off-session use (Checkout with setup_future_usage), or null. */
export function setupOf(event: WebhookPayload): { customer: string; payment_method: string } | null {
  const intent = record(record(event.data).object);
  const id = (v: unknown) => (typeof v === 'string' ? v : typeof record(v).id === 'string' ? (record(v).id as string) : null);
  const customer = id(intent.customer);
  const method = id(intent.payment_method);
  return intent.setup_future_usage === 'off_session' && customer && method ? { customer, payment_method: method } : null;
}

/** The `t=` timestamp (Unix seconds) of a `Stripe-Signature` header, or NaN when it has none. */
export function signedAt(header: string): number {
  const t = /(?:^|,)\s*t=(\d{1,12})(?:,|$)/.exec(header)?.[1];
  return t === undefined ? Number.NaN : Number(t);
}
