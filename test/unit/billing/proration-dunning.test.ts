// Proration to the day (upgrade, downgrade, cycles paid ahead, rounding) and the dunning steps of an open invoice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_BILLING_SETTINGS, effectiveSettings, mergeSettings, readSettings } from '../../../module/platform/services/billing/billing-settings.ts';
import { dunningSteps } from '../../../module/platform/services/billing/dunning-plan.ts';
import { prorate } from '../../../module/platform/services/billing/proration.ts';

test('proration: the unused days of the old plan credited, the same days of the new plan charged', () => {
  // 30-day April, change on the 11th: 20 days left (the 11th counts as unused).
  const up = prorate({ periodStart: '2025-04-01', periodEnd: '2025-05-01', on: '2025-04-11', futureCycles: 0, oldAmount: 900, newAmount: 1500 });
  assert.deepEqual(up, { days_total: 30, days_left: 20, future_cycles: 0, credit_minor: 600, charge_minor: 1000, balance_minor: 400 });
  const down = prorate({ periodStart: '2025-04-01', periodEnd: '2025-05-01', on: '2025-04-11', futureCycles: 0, oldAmount: 1500, newAmount: 900 });
  assert.equal(down.balance_minor, -400);
  // February of a leap year has 29 days; the first day means the whole period is unused.
  const leap = prorate({ periodStart: '2024-02-01', periodEnd: '2024-03-01', on: '2024-02-01', futureCycles: 0, oldAmount: 1000, newAmount: 2000 });
  assert.deepEqual([leap.days_total, leap.days_left, leap.balance_minor], [29, 29, 1000]);
  const last = prorate({ periodStart: '2025-01-01', periodEnd: '2026-01-01', on: '2025-12-31', futureCycles: 0, oldAmount: 36500, newAmount: 73000 });
  assert.deepEqual([last.days_left, last.credit_minor, last.charge_minor], [1, 100, 200]);
  // Rounded half up on exact integers: 999 × 1/3 = 333, 1000 × 1/3 = 333.33 → 333, 500 × 1/2... 
  const third = prorate({ periodStart: '2025-04-01', periodEnd: '2025-04-04', on: '2025-04-03', futureCycles: 0, oldAmount: 1000, newAmount: 2000 });
  assert.deepEqual([third.credit_minor, third.charge_minor], [333, 667]);
  // A cycle paid ahead counts in full on both sides.
  const ahead = prorate({ periodStart: '2025-04-01', periodEnd: '2025-05-01', on: '2025-04-16', futureCycles: 1, oldAmount: 600, newAmount: 1200 });
  assert.deepEqual([ahead.credit_minor, ahead.charge_minor, ahead.balance_minor], [300 + 600, 600 + 1200, 900]);
  assert.throws(() => prorate({ periodStart: '2025-04-01', periodEnd: '2025-04-01', on: '2025-04-01', futureCycles: 0, oldAmount: 1, newAmount: 1 }), /empty period/);
});

const settings = { ...DEFAULT_BILLING_SETTINGS, reminder_days_before: [7, 3], reminder_days_after: [2, 10] };
const at = (today: string, done: string[] = [], extra: Partial<{ has_saved_method: boolean; amount_minor: number }> = {}) =>
  dunningSteps(settings, { due_date: '2025-05-10', today, amount_minor: 500, has_saved_method: false, done: new Set(done), ...extra });

test('dunning: reminders before the due date, one mail when runs were missed', () => {
  assert.deepEqual(at('2025-05-01'), []);
  assert.deepEqual(at('2025-05-03').map((s) => [s.step, s.notify]), [['reminder_before:7', true]]);
  assert.deepEqual(at('2025-05-08', ['reminder_before:7']).map((s) => [s.step, s.notify]), [['reminder_before:3', true]]);
  assert.deepEqual(at('2025-05-08').map((s) => [s.step, s.notify]), [['reminder_before:7', false], ['reminder_before:3', true]]);
  assert.deepEqual(at('2025-05-09', ['reminder_before:7', 'reminder_before:3']), []);
});

test('dunning: charge on the due date, overdue the day after, suspension after 3 days, termination after 30', () => {
  assert.deepEqual(at('2025-05-10'), [], 'nothing on the due date without a saved method');
  assert.deepEqual(at('2025-05-10', [], { has_saved_method: true }).map((s) => s.step), ['auto_charge']);
  assert.deepEqual(at('2025-05-10', [], { has_saved_method: true, amount_minor: 0 }).map((s) => s.step), []);
  assert.deepEqual(at('2025-05-11').map((s) => s.step), ['overdue']);
  assert.deepEqual(at('2025-05-12', ['overdue']).map((s) => s.step), ['reminder_after:2']);
  assert.deepEqual(at('2025-05-13', ['overdue', 'reminder_after:2']).map((s) => s.step), ['suspend']);
  assert.deepEqual(at('2025-05-21', ['overdue', 'reminder_after:2', 'suspend']).map((s) => s.step), ['reminder_after:10']);
  assert.deepEqual(at('2025-06-09', ['overdue', 'reminder_after:2', 'suspend', 'reminder_after:10']).map((s) => s.step), ['terminate']);
  // A platform down for weeks goes straight to termination (overdue recorded without a mail).
  assert.deepEqual(at('2025-07-01').map((s) => [s.step, s.notify]), [['overdue', false], ['terminate', true]]);
  assert.deepEqual(at('2025-06-01', ['overdue', 'suspend', 'terminate']), []);
});

test('dunning: null disables suspension and termination; per-product overrides win; inconsistent settings refused', () => {
  const never = { ...settings, suspend_after_days: null, terminate_after_days: null };
  assert.deepEqual(dunningSteps(never, { due_date: '2025-05-10', today: '2026-05-10', amount_minor: 1, has_saved_method: false, done: new Set(['overdue', 'reminder_after:2', 'reminder_after:10']) }), []);
  const product = effectiveSettings(DEFAULT_BILLING_SETTINGS, { suspend_after_days: 1, lead_days: 14 });
  assert.deepEqual([product.suspend_after_days, product.lead_days, product.terminate_after_days], [1, 14, 30]);
  assert.throws(() => effectiveSettings(DEFAULT_BILLING_SETTINGS, { suspend_after_days: 40 }), /terminate_after_days must be greater/);
  assert.throws(() => mergeSettings(DEFAULT_BILLING_SETTINGS, { terminate_after_days: 2 }), /terminate_after_days must be greater/);
  assert.deepEqual(readSettings({ lead_days: 10, bogus: 1 }).lead_days, 10);
  assert.deepEqual(readSettings(null), DEFAULT_BILLING_SETTINGS);
});
