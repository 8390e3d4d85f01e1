// Which dunning steps an open renewal invoice is due for today: reminders before and after the due date, overdue,
// the off-session charge, suspension and termination. Each step has a name that is claimed once per invoice in the
// database (billing_steps), so a step is taken once however often the run repeats. Pure.
import type { BillingSettings } from './billing-settings.ts';
import { daysBetween } from './calendar.ts';

export type DunningAction = 'reminder_before' | 'reminder_after' | 'overdue' | 'auto_charge' | 'suspend' | 'terminate';

/** One step to claim; `notify: false` marks a step passed over (a later one of the same kind was due at once). */
export interface DunningStep {
  step: string;
  action: DunningAction;
  /** Days before (reminder_before) or after (every other action) the due date. */
  days: number;
  notify: boolean;
}

export interface DunningFacts {
  due_date: string;
  today: string;
  /** Amount still due (minor units). */
  amount_minor: number;
  /** The customer has a saved payment method on an active gateway. */
  has_saved_method: boolean;
  /** The steps already claimed for this invoice. */
  done: ReadonlySet<string>;
}

/** Reminder steps whose day has come: all are claimed, only the latest is sent (missed runs send one, not several). */
function reminders(action: 'reminder_before' | 'reminder_after', list: readonly number[], reached: (d: number) => boolean, done: ReadonlySet<string>): DunningStep[] {
  const due = list.filter(reached).map((d) => ({ step: `${action}:${d}`, action, days: d, notify: false })).filter((s) => !done.has(s.step));
  const latest = action === 'reminder_before' ? Math.min(...due.map((s) => s.days)) : Math.max(...due.map((s) => s.days));
  return due.map((s) => ({ ...s, notify: s.days === latest }));
}

/** The steps `facts` calls for under `settings`, in the order they are taken. */
export function dunningSteps(settings: BillingSettings, facts: DunningFacts): DunningStep[] {
  const { done } = facts;
  if (done.has('terminate')) return [];
  const untilDue = daysBetween(facts.today, facts.due_date);
  const overdueDays = -untilDue;
  const steps: DunningStep[] = [];
  const add = (action: DunningAction, days: number, notify = true) => {
    if (!done.has(action)) steps.push({ step: action, action, days, notify });
  };
  const terminateAt = settings.terminate_after_days === null ? null : Math.max(1, settings.terminate_after_days);
  if (terminateAt !== null && overdueDays >= terminateAt) {
    add('overdue', overdueDays, false);
    add('terminate', overdueDays);
    return steps;
  }
  if (untilDue > 0) return reminders('reminder_before', settings.reminder_days_before, (d) => untilDue <= d, done);
  if (settings.auto_charge && facts.has_saved_method && facts.amount_minor > 0) add('auto_charge', overdueDays);
  if (overdueDays < 1) return steps;
  add('overdue', overdueDays);
  steps.push(...reminders('reminder_after', settings.reminder_days_after, (d) => overdueDays >= d, done));
  const suspendAt = settings.suspend_after_days === null ? null : Math.max(1, settings.suspend_after_days);
  if (suspendAt !== null && overdueDays >= suspendAt) add('suspend', overdueDays);
  return steps;
}
