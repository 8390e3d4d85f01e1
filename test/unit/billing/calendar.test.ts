// Billing calendar: month ends with an anchor day, leap years, every cycle, day counts and the paid period around a day.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  addDays, addMonths, daysBetween, daysInMonth, isLeapYear, nextDue, parseDate, periodAround, previousDue,
} from '../../../module/platform/services/billing/calendar.ts';
import { BILLING_CYCLES } from '../../../module/platform/services/billing/schema.ts';

/** Walks `count` cycles from `start` with the start's day as anchor. */
function walk(start: string, cycle: (typeof BILLING_CYCLES)[number], count: number): string[] {
  const anchor = parseDate(start).day;
  const out = [start];
  for (let i = 0; i < count; i++) out.push(nextDue(out[out.length - 1], cycle, anchor));
  return out;
}

test('an anchor on the 31st renews on the last day of shorter months and returns to the 31st', () => {
  assert.deepEqual(walk('2025-01-31', 'monthly', 7), ['2025-01-31', '2025-02-28', '2025-03-31', '2025-04-30', '2025-05-31', '2025-06-30', '2025-07-31', '2025-08-31']);
  assert.deepEqual(walk('2024-01-31', 'monthly', 2), ['2024-01-31', '2024-02-29', '2024-03-31'], 'leap February');
  assert.deepEqual(walk('2025-01-30', 'monthly', 2), ['2025-01-30', '2025-02-28', '2025-03-30']);
  assert.deepEqual(walk('2025-01-29', 'monthly', 2), ['2025-01-29', '2025-02-28', '2025-03-29']);
  assert.deepEqual(walk('2025-12-31', 'monthly', 2), ['2025-12-31', '2026-01-31', '2026-02-28'], 'across the year end');
});

test('every cycle: quarterly, semiannually and annually keep the anchor; February 29 comes back in leap years', () => {
  assert.deepEqual(walk('2025-08-31', 'quarterly', 4), ['2025-08-31', '2025-11-30', '2026-02-28', '2026-05-31', '2026-08-31']);
  assert.deepEqual(walk('2025-08-31', 'semiannually', 3), ['2025-08-31', '2026-02-28', '2026-08-31', '2027-02-28']);
  assert.deepEqual(walk('2024-02-29', 'annually', 4), ['2024-02-29', '2025-02-28', '2026-02-28', '2027-02-28', '2028-02-29']);
  assert.deepEqual(walk('2025-03-15', 'monthly', 1), ['2025-03-15', '2025-04-15']);
  for (const cycle of BILLING_CYCLES) {
    const dates = walk('2023-05-31', cycle, 12);
    for (let i = 1; i < dates.length; i++) assert.equal(previousDue(dates[i], cycle, 31), dates[i - 1], `${cycle} back from ${dates[i]}`);
  }
});

test('leap years, month lengths, day counts', () => {
  assert.deepEqual([1900, 2000, 2023, 2024, 2100].map(isLeapYear), [false, true, false, true, false]);
  assert.equal(daysInMonth(2024, 2), 29);
  assert.equal(daysInMonth(2023, 2), 28);
  assert.equal(daysInMonth(2025, 4), 30);
  assert.equal(daysBetween('2024-02-01', '2024-03-01'), 29);
  assert.equal(daysBetween('2025-02-01', '2025-03-01'), 28);
  assert.equal(daysBetween('2025-03-01', '2025-02-01'), -28);
  assert.equal(daysBetween('2024-01-01', '2025-01-01'), 366);
  assert.equal(addDays('2024-02-28', 1), '2024-02-29');
  assert.equal(addDays('2025-02-28', 1), '2025-03-01');
  assert.equal(addDays('2025-01-01', -1), '2024-12-31');
  assert.equal(addMonths('2025-03-31', -1, 31), '2025-02-28');
  assert.throws(() => parseDate('2025-02-29'), /invalid date/);
  assert.throws(() => parseDate('2025-2-1'), /invalid date/);
  assert.throws(() => addMonths('2025-01-01', 1, 32), /anchor/);
});

test('the paid period around a day: the cycle holding it and the whole cycles paid after it', () => {
  assert.deepEqual(periodAround('2025-03-10', '2025-04-01', 'monthly', 1), { start: '2025-03-01', end: '2025-04-01', futureCycles: 0 });
  assert.deepEqual(periodAround('2025-03-10', '2025-05-01', 'monthly', 1), { start: '2025-03-01', end: '2025-04-01', futureCycles: 1 });
  assert.deepEqual(periodAround('2025-02-28', '2025-03-31', 'monthly', 31), { start: '2025-02-28', end: '2025-03-31', futureCycles: 0 });
  assert.deepEqual(periodAround('2025-06-30', '2025-08-31', 'quarterly', 31), { start: '2025-05-31', end: '2025-08-31', futureCycles: 0 });
});
