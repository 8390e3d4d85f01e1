// Proration of a plan change to the day: the unused part of the paid period at the old price is credited, the same
// part at the new price charged; whole cycles paid ahead count in full. Pure, integer minor units.
import { daysBetween } from './calendar.ts';

export interface ProrationInput {
  /** The current period `[start, end)` (ISO dates) and the day of the change. */
  periodStart: string;
  periodEnd: string;
  on: string;
  /** Whole cycles paid after the current period. */
  futureCycles: number;
  /** Recurring amounts per cycle (minor units) of the old and the new plan. */
  oldAmount: number;
  newAmount: number;
}

export interface Proration {
  days_total: number;
  /** Days from the change to the period's end (the change day counts as unused). */
  days_left: number;
  future_cycles: number;
  /** What the unused time of the old plan is worth (credited). */
  credit_minor: number;
  /** What the same time on the new plan costs (charged). */
  charge_minor: number;
  /** charge − credit: positive is owed by the customer, negative is credited to them. */
  balance_minor: number;
}

/** `amount × days / total`, rounded half up (exact on integers). */
function share(amount: number, days: number, total: number): number {
  return Math.floor((2 * amount * days + total) / (2 * total));
}

/** The proration of a change from `oldAmount` to `newAmount` on day `on` of the period. */
export function prorate(input: ProrationInput): Proration {
  const total = daysBetween(input.periodStart, input.periodEnd);
  if (total <= 0) throw new RangeError(`empty period ${input.periodStart} – ${input.periodEnd}`);
  const left = Math.max(0, Math.min(total, daysBetween(input.on, input.periodEnd)));
  const credit = share(input.oldAmount, left, total) + input.oldAmount * input.futureCycles;
  const charge = share(input.newAmount, left, total) + input.newAmount * input.futureCycles;
  return { days_total: total, days_left: left, future_cycles: input.futureCycles, credit_minor: credit, charge_minor: charge, balance_minor: charge - credit };
}
