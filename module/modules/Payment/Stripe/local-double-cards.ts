// The local Stripe double's saved cards: Customers, PaymentMethods (test cards that later succeed, decline or need
// authentication off-session), off-session PaymentIntents answered as Stripe does (402 card_error), idempotent per key.
import { randomBytes } from 'node:crypto';

/** Test cards: `ok` charges off-session, `decline_later` is declined, `auth_later` needs authentication (as Stripe's 4000…0341 / 4000…3184). */
export const TEST_CARDS = {
  ok: { brand: 'visa', last4: '4242' },
  decline_later: { brand: 'visa', last4: '0341' },
  auth_later: { brand: 'visa', last4: '3184' },
} as const;
export type TestCard = keyof typeof TEST_CARDS;

export const doubleId = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;

export interface DoubleCustomer {
  id: string;
  email: string | null;
  metadata: Record<string, string>;
}

export interface DoubleMethod {
  id: string;
  customer: string | null;
  card: TestCard;
}

/** A reply of the double's API: status and JSON body. */
export interface Reply {
  status: number;
  body: unknown;
}

/** What an off-session charge leads to: the reply, and the webhook event to send after it (none for a refused request). */
export interface ChargeOutcome {
  reply: Reply;
  event: { type: 'payment_intent.succeeded' | 'payment_intent.payment_failed'; intent: Record<string, unknown> } | null;
}

/** The PaymentMethod object of a card. */
export function methodObject(method: DoubleMethod): Record<string, unknown> {
  const card = TEST_CARDS[method.card];
  return { id: method.id, object: 'payment_method', type: 'card', customer: method.customer, card: { brand: card.brand, last4: card.last4, exp_month: 12, exp_year: 2034 } };
}

const FAILURES = {
  decline_later: { code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' },
  auth_later: { code: 'authentication_required', decline_code: 'authentication_required', message: 'Your card was declined. This transaction requires authentication.' },
} as const;

/** An off-session PaymentIntent confirmed at once (`POST /v1/payment_intents`), as Stripe answers it for the card. */
export function chargeOffSession(form: Record<string, string>, methods: Map<string, DoubleMethod>, metadata: Record<string, string>): ChargeOutcome {
  const method = methods.get(form.payment_method ?? '');
  const amount = Number(form.amount);
  if (!method || method.customer === null || method.customer !== form.customer) {
    return { reply: { status: 400, body: { error: { type: 'invalid_request_error', message: `No such PaymentMethod: '${form.payment_method ?? ''}'` } } }, event: null };
  }
  if (!Number.isSafeInteger(amount) || amount <= 0 || form.confirm !== 'true' || form.off_session !== 'true') {
    return { reply: { status: 400, body: { error: { type: 'invalid_request_error', message: 'amount, confirm=true and off_session=true are required here' } } }, event: null };
  }
  const base = { id: doubleId('pi'), object: 'payment_intent', amount, currency: form.currency ?? '', customer: method.customer, payment_method: method.id, metadata, setup_future_usage: null };
  if (method.card === 'ok') {
    const intent = { ...base, amount_received: amount, status: 'succeeded', last_payment_error: null };
    return { reply: { status: 200, body: intent }, event: { type: 'payment_intent.succeeded', intent } };
  }
  const failure = FAILURES[method.card];
  const intent = { ...base, amount_received: 0, status: 'requires_payment_method', last_payment_error: { type: 'card_error', ...failure } };
  return {
    reply: { status: 402, body: { error: { type: 'card_error', ...failure, payment_intent: intent } } },
    event: { type: 'payment_intent.payment_failed', intent },
  };
}
