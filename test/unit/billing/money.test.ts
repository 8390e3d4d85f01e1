// Money helpers: exact decimal text ↔ minor units per currency, refusals.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { currencyExponent, formatMinor, normalizeCurrency, toMinor } from '../../../module/platform/services/billing/money.ts';

test('minor units follow the currency: EUR 2, JPY 0, KWD 3 decimals', () => {
  assert.equal(currencyExponent('EUR'), 2);
  assert.equal(currencyExponent('JPY'), 0);
  assert.equal(currencyExponent('KWD'), 3);
  assert.equal(toMinor('9.99', 'EUR'), 999);
  assert.equal(toMinor('9.9', 'EUR'), 990);
  assert.equal(toMinor(12, 'EUR'), 1200);
  assert.equal(toMinor(0.1, 'EUR'), 10);
  assert.equal(toMinor('500', 'JPY'), 500);
  assert.equal(toMinor('1.234', 'KWD'), 1234);
  assert.equal(formatMinor(999, 'EUR'), '9.99');
  assert.equal(formatMinor(5, 'EUR'), '0.05');
  assert.equal(formatMinor(500, 'JPY'), '500');
  assert.equal(formatMinor(1234, 'KWD'), '1.234');
});

test('too many decimals, negatives, text and unknown currencies are refused', () => {
  assert.throws(() => toMinor('9.999', 'EUR'), /at most 2 decimals for EUR/);
  assert.throws(() => toMinor('1.5', 'JPY'), /at most 0 decimals for JPY/);
  assert.throws(() => toMinor('-1', 'EUR'), /invalid amount/);
  assert.throws(() => toMinor('1e3', 'EUR'), /invalid amount/);
  assert.throws(() => toMinor('', 'EUR'), /invalid amount/);
  assert.equal(normalizeCurrency(' eur '), 'EUR');
  assert.throws(() => normalizeCurrency('EURO'), /unknown currency: EURO/);
  assert.throws(() => normalizeCurrency('XYZ'), /unknown currency/);
});
