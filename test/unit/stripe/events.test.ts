// Stripe module pure parts: PaymentIntent events → ledger shape, settings checks, key mode.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { failureOf, paymentOf } from '../../../module/modules/Payment/Stripe/events.ts';
import { keyMode, parseSettings } from '../../../module/modules/Payment/Stripe/settings.ts';
import { intentEvent } from '../../helpers/stripe-double.ts';

const gw = { name: 'Stripe', uuid: 'gw-1' };

test('payment_intent.succeeded: invoice from metadata, amount received in minor units, currency, ids', () => {
  const event = intentEvent({ id: 'evt_1', type: 'payment_intent.succeeded', invoice_uuid: 'inv-1', amount: 1234, currency: 'eur', intent: 'pi_1', created: 1 });
  assert.deepEqual(paymentOf(event, gw), {
    gateway: 'Stripe', gateway_uuid: 'gw-1', event_id: 'evt_1', event_type: 'payment_intent.succeeded',
    invoice_uuid: 'inv-1', amount_minor: 1234, currency: 'eur', external_id: 'pi_1',
  });
  const partial = { ...event, data: { object: { ...(event.data as any).object, amount_received: 1000 } } };
  assert.equal(paymentOf(partial, gw).amount_minor, 1000, 'what was received counts, not what was asked');
});

test('malformed events give values that match no invoice', () => {
  const p = paymentOf({ id: 'evt_2', type: 'payment_intent.succeeded', data: { object: { amount: 'ten', metadata: [] } } }, gw);
  assert.equal(p.invoice_uuid, null);
  assert.equal(p.amount_minor, -1);
  assert.equal(p.currency, '');
  assert.equal(paymentOf({ type: 'x' }, gw).event_id, '');
});

test('payment_failed carries Stripe\'s message, else its code', () => {
  const event = intentEvent({ id: 'evt_3', type: 'payment_intent.payment_failed', invoice_uuid: 'inv-1', amount: 5, currency: 'usd', created: 1 });
  assert.equal(failureOf(event, gw).reason, 'Your card was declined.');
  (event.data as any).object.last_payment_error = { code: 'expired_card' };
  assert.equal(failureOf(event, gw).reason, 'expired_card');
});

test('settings: secret key and signing secret shapes, API base URL, first bad field named', () => {
  const ok = parseSettings({ secret_key: 'sk_test_abcdef', webhook_secret: 'whsec_abcdefgh', api_base: 'http://127.0.0.1:1234' });
  assert.equal(ok.api_base, 'http://127.0.0.1:1234');
  assert.throws(() => parseSettings({ secret_key: 'pk_test_abcdef', webhook_secret: 'whsec_abcdefgh' }), /^Error: secret_key: /);
  assert.throws(() => parseSettings({ secret_key: 'sk_test_abcdef', webhook_secret: 'abc' }), /webhook_secret: /);
  assert.throws(() => parseSettings({ secret_key: 'sk_test_abcdef', webhook_secret: 'whsec_abcdefgh', api_base: 'ftp://x' }), /api_base: /);
  assert.equal(keyMode('sk_test_x'), 'test');
  assert.equal(keyMode('rk_live_x'), 'live');
});
