// 24 months on a driven clock for services of every cycle and start day (month ends too) and five customer behaviours
// (pays by hand, saved card, card declined then paid by hand, cancels at the period end, never pays): the invoice count,
// the invoices by status, the money received, the refused charges, the cancelled and terminated services equal the
// closed-form expectation (test/fixtures/billing/simulation.ts). The bench runs the same for 1,000 services.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expected, simulate } from '../../fixtures/billing/simulation.ts';

test('120 services through 24 months end with the closed-form invoice count and ledger totals', async (t) => {
  const { outcome, ms } = await simulate(120);
  const want = expected(120);
  t.diagnostic(`simulated 730 days in ${ms} ms: ${JSON.stringify(outcome)}`);
  assert.deepEqual(outcome, want);
  assert.ok(want.autoChargeFailures > 0 && want.cancelled > 0 && want.terminated > 0, 'every behaviour happened');
});
