// Data caps of a VPN plan: the product fields (allowance in GB, 0 = unlimited; throttle to a rate or suspend) and the
// pure state machine of one service's period: warn at 80 %, act once at 100 %, lift on a new period or a raised cap.

/** What a plan does when its allowance is used up. */
export const CAP_ACTIONS = ['throttle', 'suspend'] as const;
export type CapAction = (typeof CAP_ACTIONS)[number];

/** Bytes of one GB of allowance (decimal, as providers sell them). */
export const GB = 1_000_000_000;
/** Share of the allowance at which the customer is warned. */
const WARN_AT = 0.8;

/** A plan's cap: `allowance_bytes` 0 means unlimited. */
export interface CapPolicy {
  allowance_bytes: number;
  action: CapAction;
  /** Rate of a throttled account, Mbit/s down and up. */
  throttle_mbit: number;
}

/** The cap policy of a product's data (fields `data_cap_gb`, `cap_action`, `cap_throttle_mbit`; missing = unlimited). */
export function capPolicyOf(product: Record<string, unknown>): CapPolicy {
  const gb = Number(product.data_cap_gb);
  const action = CAP_ACTIONS.includes(product.cap_action as CapAction) ? (product.cap_action as CapAction) : 'throttle';
  const rate = Number(product.cap_throttle_mbit);
  return {
    allowance_bytes: Number.isFinite(gb) && gb > 0 ? Math.round(gb * GB) : 0,
    action,
    throttle_mbit: Number.isInteger(rate) && rate > 0 ? rate : 1,
  };
}

/** One service's cap state in one period (`[period_start, period_end)`, ISO dates). */
export interface CapState {
  period_start: string;
  period_end: string;
  used_bytes: number;
  /** The 80 % mail was sent this period. */
  warned: boolean;
  /** The 100 % mail was sent this period. */
  exceeded: boolean;
  /** The action in force (applied through the service's jobs), null when none. */
  applied: CapAction | null;
}

/** What a step asks the pass to do, in order. */
export type CapEffect =
  | { kind: 'lift'; action: CapAction }
  | { kind: 'mail'; level: 80 | 100 }
  | { kind: 'apply'; action: CapAction };

/** What the pass observed: the service's current period and the bytes used in it. */
export interface CapObservation {
  period_start: string;
  period_end: string;
  used_bytes: number;
}

/**
 * One pass over one service. A new period starts fresh (lifting the action in force); unlimited or under the
 * allowance lifts an action in force (the plan changed); from 80 % the warning is mailed once per period, from 100 %
 * the exceeded mail once and the plan's action once (a jump past 100 % mails only the exceeded mail). Pure: the same
 * state and observation give the same answer, and a second pass with the same figures does nothing.
 */
export function stepCap(state: CapState | null, policy: CapPolicy, seen: CapObservation): { next: CapState; effects: CapEffect[] } {
  const effects: CapEffect[] = [];
  let next: CapState;
  if (!state || state.period_start !== seen.period_start) {
    if (state?.applied) effects.push({ kind: 'lift', action: state.applied });
    next = { period_start: seen.period_start, period_end: seen.period_end, used_bytes: seen.used_bytes, warned: false, exceeded: false, applied: null };
  } else {
    next = { ...state, period_end: seen.period_end, used_bytes: Math.max(state.used_bytes, seen.used_bytes) };
  }
  const allowance = policy.allowance_bytes;
  const over = allowance > 0 && next.used_bytes >= allowance;
  if (next.applied && (!over || next.applied !== policy.action)) {
    effects.push({ kind: 'lift', action: next.applied });
    next.applied = null;
  }
  if (allowance === 0) return { next, effects };
  if (over && !next.exceeded) {
    effects.push({ kind: 'mail', level: 100 });
    next.exceeded = true;
    next.warned = true;
  } else if (!next.warned && next.used_bytes >= allowance * WARN_AT) {
    effects.push({ kind: 'mail', level: 80 });
    next.warned = true;
  }
  if (over && !next.applied) {
    effects.push({ kind: 'apply', action: policy.action });
    next.applied = policy.action;
  }
  return { next, effects };
}

/** Used / allowance for display: percent (0-100, capped), days left in the period. */
export function capSummary(state: Pick<CapState, 'used_bytes' | 'period_end' | 'applied'>, policy: CapPolicy, today: string): {
  used_bytes: number; allowance_bytes: number; percent: number; days_left: number; period_end: string; applied: CapAction | null;
} {
  const percent = policy.allowance_bytes > 0 ? Math.min(100, Math.floor((state.used_bytes / policy.allowance_bytes) * 100)) : 0;
  const daysLeft = Math.max(0, Math.round((Date.parse(`${state.period_end}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`)) / 86_400_000));
  return { used_bytes: state.used_bytes, allowance_bytes: policy.allowance_bytes, percent, days_left: daysLeft, period_end: state.period_end, applied: state.applied };
}
