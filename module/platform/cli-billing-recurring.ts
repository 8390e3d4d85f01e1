// `vpnhost platform billing run|runs|settings|product-settings|service|cancel|undo-cancel|change-plan`: recurring billing
// from the shell, on the platform database of --data (service actions and e-mails it decides are queued for the workers).
import type { Platform } from './platform.ts';
import { BILLING_STATES } from './services/billing/recurring-schema.ts';

export const RECURRING_USAGE = `  vpnhost platform billing run [--dry-run] [--data DIR]   (one billing run now, in this process; --dry-run: what it would do)
  vpnhost platform billing runs [--data DIR]   (the latest runs and their summaries)
  vpnhost platform billing settings [KEY=VALUE ...] [--data DIR]   (show or change: lead_days=7 reminder_days_before=3,1
      reminder_days_after=7 suspend_after_days=3|never terminate_after_days=30|never auto_charge=true run_every_minutes=60 batch_size=500)
  vpnhost platform billing product-settings PRODUCT [KEY=VALUE|KEY=default ...] [--data DIR]   (a product's dunning overrides)
  vpnhost platform billing service SERVICE [--data DIR]   (billing period and state: ${BILLING_STATES.join(', ')})
  vpnhost platform billing set-due SERVICE YYYY-MM-DD [--data DIR]   (move the next due date)
  vpnhost platform billing cancel SERVICE [--now] [--data DIR]   (at the period end, or --now)
  vpnhost platform billing undo-cancel SERVICE [--data DIR]
  vpnhost platform billing change-plan SERVICE PRODUCT [--dry-run] [--data DIR]   (prorated to the day)`;

export type RecurringCall = (platform: Platform) => Promise<unknown>;

const LISTS = new Set(['reminder_days_before', 'reminder_days_after']);

/** `KEY=VALUE` words as a settings patch: numbers, `true`/`false`, comma lists, `never` (null) and `default` (null: drop). */
function settingsPatch(words: string[]): Record<string, unknown> | null {
  const patch: Record<string, unknown> = {};
  for (const word of words) {
    const at = word.indexOf('=');
    if (at <= 0) return null;
    const key = word.slice(0, at);
    const text = word.slice(at + 1).trim();
    if (text === 'never' || text === 'default' || text === 'null') patch[key] = null;
    else if (LISTS.has(key)) patch[key] = text === '' ? [] : text.split(',').map((d) => Number(d.trim()));
    else if (text === 'true' || text === 'false') patch[key] = text === 'true';
    else patch[key] = /^-?\d+$/.test(text) ? Number(text) : text;
  }
  return patch;
}

/** The call a recurring-billing command line asks for, or null when it is none of its usage lines. */
export function recurringPlan(args: string[], flags: { 'dry-run'?: boolean; now?: boolean }): RecurringCall | null {
  const [noun, a, b, ...rest] = args;
  switch (noun) {
    case 'run':
      if (a !== undefined) return null;
      return async (platform) => {
        if (flags['dry-run']) return platform.recurring.dryRun();
        return platform.recurring.runJob({ op: 'run', run_id: await platform.recurring.parts.runs.createManual() });
      };
    case 'runs':
      return a === undefined ? async (platform) => platform.recurring.runs(20) : null;
    case 'settings': {
      const patch = settingsPatch([a, b, ...rest].filter((w): w is string => w !== undefined));
      if (!patch) return null;
      return async (platform) => (Object.keys(patch).length ? platform.recurring.updateSettings(patch) : platform.recurring.settings());
    }
    case 'product-settings': {
      const patch = settingsPatch([b, ...rest].filter((w): w is string => w !== undefined));
      if (!a || !patch) return null;
      return async (platform) => (Object.keys(patch).length ? platform.recurring.updateProductSettings(a, patch) : platform.recurring.productSettings(a));
    }
    case 'service':
      return a && b === undefined ? async (platform) => platform.recurring.service(a) : null;
    case 'set-due':
      return a && b && rest.length === 0 ? async (platform) => platform.recurring.setNextDue(a, b) : null;
    case 'cancel':
      return a && b === undefined ? async (platform) => platform.recurring.cancel(a, flags.now ? 'immediate' : 'period_end', 'admin') : null;
    case 'undo-cancel':
      return a && b === undefined ? async (platform) => platform.recurring.undoCancel(a, 'admin') : null;
    case 'change-plan':
      if (!a || !b || rest.length) return null;
      return async (platform) => (flags['dry-run'] ? (await platform.recurring.parts.planChanges.quote(a, b)).proration : platform.recurring.changePlan(a, b));
    default:
      return null;
  }
}
