// Admin billing runs and settings: the global billing settings (dunning days, auto-charge, run interval, batch size),
// "run now" and a dry run (what the next run would do), and the recent runs with their summaries. Reading needs
// `billing`; running and saving need `billing_actions`.
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../../errors.ts';
import type { BillingSettings } from '../../services/billing/billing-settings.ts';
import { PERMISSION } from '../../services/roles.ts';
import { adminPage } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';
import { formStrings } from './product-form.ts';
import { billingAction } from './invoices-page.ts';

const NUMBERS = ['lead_days', 'suspend_after_days', 'terminate_after_days', 'run_every_minutes', 'batch_size'] as const;
const LISTS = ['reminder_days_before', 'reminder_days_after'] as const;

/** The settings form as a patch: numbers, comma-separated day lists, the auto-charge checkbox. */
function settingsPatch(form: Record<string, string>): Record<string, unknown> {
  const patch: Record<string, unknown> = { auto_charge: form.auto_charge === 'on' };
  for (const key of NUMBERS) if (form[key] !== undefined && form[key].trim() !== '') patch[key] = Number(form[key]);
  for (const key of LISTS) {
    if (form[key] === undefined) continue;
    patch[key] = form[key].split(',').map((v) => v.trim()).filter(Boolean).map(Number);
  }
  return patch;
}

function settingsView(s: BillingSettings) {
  return { ...s, reminder_days_before: s.reminder_days_before.join(', '), reminder_days_after: s.reminder_days_after.join(', ') };
}

export function billingPage(deps: WebDeps, app: FastifyInstance): void {
  const recurring = deps.platform.recurring;

  app.get<{ Querystring: { dry?: string } }>('/billing', async (request, reply) => {
    hasPermission(request, PERMISSION.billing);
    const can = request.admin!.hasPermission(PERMISSION.billing_actions);
    const plan = request.query.dry === '1' && can ? await recurring.dryRun() : null;
    return adminPage(deps, request, reply, 'billing', {
      title: 'Billing runs', can_act: can, settings: settingsView(recurring.settings()),
      plan: plan ? { ...plan, counts: { renewals: plan.items.renewals.length, steps: plan.items.steps.length, cancellations: plan.items.cancellations.length } } : null,
      runs: recurring.runs(20).map((r) => ({ ...r, summary: r.summary ? Object.entries(r.summary).filter(([, v]) => typeof v !== 'object').map(([k, v]) => `${k}: ${String(v)}`).join(', ') : '' })),
    }, { platform: 'billing' });
  });

  app.post('/billing/run', async (request, reply) => {
    hasPermission(request, PERMISSION.billing_actions);
    return billingAction(deps, reply, '/admin/billing', async () => {
      const run = await recurring.runNow(deps.platform.queue, 30_000);
      return run.finished_at ? `Billing run #${run.id} finished.` : `Billing run #${run.id} queued (task ${run.task_id ?? ''}).`;
    });
  });

  app.post('/billing/settings', async (request, reply) => {
    hasPermission(request, PERMISSION.billing_actions);
    return billingAction(deps, reply, '/admin/billing', async () => {
      try {
        recurring.updateSettings(settingsPatch(formStrings(request.body)));
      } catch (error) {
        if (error instanceof HttpError) throw error;
        throw new HttpError(422, `Settings not saved: ${(error as Error).message}`);
      }
      return 'Billing settings saved.';
    });
  });
}
