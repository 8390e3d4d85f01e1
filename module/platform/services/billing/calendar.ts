// Billing calendar: UTC calendar dates (`YYYY-MM-DD`), cycles in calendar months with an anchor day (a period started
// on the 31st renews on the last day of shorter months and returns to the 31st), day counts. Pure.
import type { Clock } from '../../../../shared/clock.ts';
import type { BillingCycle } from './schema.ts';

/** Calendar months per billing cycle. */
const CYCLE_MONTHS: Readonly<Record<BillingCycle, number>> = { monthly: 1, quarterly: 3, semiannually: 6, annually: 12 };

const DAY_MS = 86_400_000;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const INVALID_DATE = (text: string) => `invalid date: ${text} (expected YYYY-MM-DD)`;

/** Year, month (1–12) and day of an ISO date; throws on anything else (31 February included). */
export function parseDate(date: string): { year: number; month: number; day: number } {
  const match = ISO_DATE.exec(date);
  if (!match) throw new RangeError(INVALID_DATE(date));
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) throw new RangeError(INVALID_DATE(date));
  return { year, month, day };
}

/** `YYYY-MM-DD` of a year, month (1–12) and day. */
function formatDate(year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Days in `month` (1–12) of `year`. */
export function daysInMonth(year: number, month: number): number {
  return [31, isLeapYear(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
}

/** The UTC calendar date of an instant. */
export function dateOf(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

/** Today's UTC date on the platform clock. */
export function today(clock: Clock): string {
  return dateOf(clock.now());
}

function epochDay(date: string): number {
  const { year, month, day } = parseDate(date);
  return Date.UTC(year, month - 1, day) / DAY_MS;
}

/** `date` moved by `days` (negative: back). */
export function addDays(date: string, days: number): string {
  return dateOf(new Date((epochDay(date) + days) * DAY_MS));
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return epochDay(to) - epochDay(from);
}

/**
 * `date` moved by `months` calendar months (negative: back), landing on `anchorDay` — or on the month's last day when
 * the month is shorter (anchor 31: Jan 31 → Feb 28/29 → Mar 31).
 */
export function addMonths(date: string, months: number, anchorDay: number): string {
  if (!Number.isInteger(anchorDay) || anchorDay < 1 || anchorDay > 31) throw new RangeError(`invalid anchor day: ${anchorDay}`);
  const { year, month } = parseDate(date);
  const index = year * 12 + (month - 1) + months;
  const y = Math.floor(index / 12);
  const m = index - y * 12 + 1;
  return formatDate(y, m, Math.min(anchorDay, daysInMonth(y, m)));
}

/** The due date one cycle after `date` (the anchor keeps month ends). */
export function nextDue(date: string, cycle: BillingCycle, anchorDay: number): string {
  return addMonths(date, CYCLE_MONTHS[cycle], anchorDay);
}

/** The due date one cycle before `date`. */
export function previousDue(date: string, cycle: BillingCycle, anchorDay: number): string {
  return addMonths(date, -CYCLE_MONTHS[cycle], anchorDay);
}

/**
 * The paid period around `on` of a service paid through `paidThrough` (its next due date): the cycle `[start, end)`
 * holding `on`, and how many whole cycles after it are paid as well (a renewal paid before its period began).
 */
export function periodAround(on: string, paidThrough: string, cycle: BillingCycle, anchorDay: number): { start: string; end: string; futureCycles: number } {
  let end = paidThrough;
  let start = previousDue(end, cycle, anchorDay);
  let futureCycles = 0;
  while (start > on) {
    end = start;
    start = previousDue(end, cycle, anchorDay);
    futureCycles += 1;
  }
  return { start, end, futureCycles };
}
