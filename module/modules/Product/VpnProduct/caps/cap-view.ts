// The Usage tab's data-cap bar: used / allowance in human units, percent, days left in the period, the action in force.
import type { Clock } from '../../../../../shared/clock.ts';
import { capPolicyOf, capSummary, type CapAction } from './cap-policy.ts';
import type { CapStore } from './cap-store.ts';

export interface CapView {
  used: string;
  allowance: string;
  used_bytes: number;
  allowance_bytes: number;
  percent: number;
  /** Null before the first pass measured the service (period not known yet). */
  days_left: number | null;
  period_end: string | null;
  /** `throttle` / `suspend` while the allowance is used up, else null. */
  applied: CapAction | null;
  throttle_mbit: number;
  /** What the customer is told happens at 100 %. */
  note: string;
}

const UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];

/** Bytes in decimal units with at most one decimal: `1.5 GB`, `820 MB`. */
export function humanBytes(bytes: number): string {
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const shown = unit === 0 || value >= 100 ? Math.round(value).toString() : (Math.round(value * 10) / 10).toString();
  return `${shown} ${UNITS[unit]}`;
}

/** The bar of a capped plan (null when unlimited); before the first pass nothing is used and the period is not known. */
export async function capView(serviceUuid: string, product: Record<string, unknown>, store: CapStore | null, clock: Clock): Promise<CapView | null> {
  const policy = capPolicyOf(product);
  if (policy.allowance_bytes === 0) return null;
  const state = (await store?.state(serviceUuid)) ?? null;
  const summary = state
    ? capSummary(state, policy, clock.now().toISOString().slice(0, 10))
    : { used_bytes: 0, allowance_bytes: policy.allowance_bytes, percent: 0, days_left: null, period_end: null, applied: null };
  const note = policy.action === 'throttle'
    ? `When the allowance is used up, the speed drops to ${policy.throttle_mbit} Mbit/s until the period renews.`
    : 'When the allowance is used up, the VPN is suspended until the period renews.';
  return {
    ...summary, used: humanBytes(summary.used_bytes), allowance: humanBytes(summary.allowance_bytes), throttle_mbit: policy.throttle_mbit, note,
  };
}
