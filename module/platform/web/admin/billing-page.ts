// Admin billing runs and settings: the global billing settings (dunning days, auto-charge, run interval, batch size),
// "run now" and a dry run (what the next run would do), and the recent runs with their summaries. Reading needs
// `billing`; running and saving need `billing_actions`.
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../../errors.ts';
import type { BillingSettings } from '../../services/billing/billing-settings.ts';
import { PERMISSION } from '../../services/roles.ts';
import { adminPage, type FlashDeps, type AdminPageDeps } from '../render.ts';
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

/** A product's overrides form as a patch: an empty field (or `global`) drops the override (null). */
function overridesPatch(form: Record<string, string>): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  const dunning = NUMBERS.filter((k) => k !== 'run_every_minutes' && k !== 'batch_size');
  for (const key of dunning) if (form[key] !== undefined) patch[key] = form[key].trim() === '' ? null : Number(form[key]);
  for (const key of LISTS) {
    if (form[key] === undefined) continue;
    patch[key] = form[key].trim() === '' ? null : form[key].split(',').map((v) => v.trim()).filter(Boolean).map(Number);
  }
  if (form.auto_charge !== undefined) patch.auto_charge = form.auto_charge === 'yes' ? true : form.auto_charge === 'no' ? false : null;
  return patch;
}

/** A product's billing overrides as form values (empty: the global setting applies). */
export async function overridesView(deps: Pick<WebDeps, 'recurring'>, productUuid: string) {
  const { overrides, effective } = await deps.recurring.productSettings(productUuid);
  const list = (v: number[] | undefined) => (v ? v.join(', ') : '');
  return {
    lead_days: overrides.lead_days ?? '', suspend_after_days: overrides.suspend_after_days ?? '', terminate_after_days: overrides.terminate_after_days ?? '',
    reminder_days_before: list(overrides.reminder_days_before), reminder_days_after: list(overrides.reminder_days_after),
    auto_charge: overrides.auto_charge === undefined ? 'global' : overrides.auto_charge ? 'yes' : 'no',
    effective: settingsView(effective),
  };
}

function settingsView(s: BillingSettings) {
  return { ...s, reminder_days_before: s.reminder_days_before.join(', '), reminder_days_after: s.reminder_days_after.join(', ') };
}

/** What the billing settings page reaches: recurring billing and the queue its manual run goes through. */
export type BillingPageDeps = AdminPageDeps & FlashDeps & Pick<WebDeps, 'recurring' | 'queue'>;

export function billingPage(deps: BillingPageDeps, app: FastifyInstance): void {
  const recurring = deps.recurring;

  app.get<{ Querystring: { dry?: string } }>('/billing', async (request, reply) => {
    hasPermission(request, PERMISSION.billing);
    const can = request.admin!.hasPermission(PERMISSION.billing_actions);
    const plan = request.query.dry === '1' && can ? await recurring.dryRun() : null;
    return adminPage(deps, request, reply, 'billing', {
      title: 'Billing runs', can_act: can, settings: settingsView(await recurring.settings()),
      plan: plan ? { ...plan, counts: { renewals: plan.items.renewals.length, steps: plan.items.steps.length, cancellations: plan.items.cancellations.length } } : null,
      runs: (await recurring.runs(20)).map((r) => ({ ...r, summary: r.summary ? Object.entries(r.summary).filter(([, v]) => typeof v !== 'object').map(([k, v]) => `${k}: ${String(v)}`).join(', ') : '' })),
    }, { platform: 'billing' });
  });

  app.post('/billing/run', async (request, reply) => {
    hasPermission(request, PERMISSION.billing_actions);
    return billingAction(deps, reply, '/admin/billing', async () => {
      // A page waits a few seconds at most; a longer run goes on in the background and shows in the list.
      const run = await recurring.runNow(deps.queue, 5_000);
      return run.finished_at ? `Billing run #${run.id} finished.` : `Billing run #${run.id} queued (task ${run.task_id ?? ''}).`;
    });
  });

  app.post<{ Params: { uuid: string } }>('/products/:uuid/billing-settings', async (request, reply) => {
    hasPermission(request, PERMISSION.billing_actions);
    return billingAction(deps, reply, `/admin/products/${encodeURIComponent(request.params.uuid)}`, async () => {
      try {
        await recurring.updateProductSettings(request.params.uuid, overridesPatch(formStrings(request.body)));
      } catch (error) {
        if (error instanceof HttpError) throw error;
        throw new HttpError(422, `Overrides not saved: ${(error as Error).message}`);
      }
      return 'Billing overrides of the product saved.';
    });
  });

  app.post('/billing/settings', async (request, reply) => {
    hasPermission(request, PERMISSION.billing_actions);
    return billingAction(deps, reply, '/admin/billing', async () => {
      try {
        await recurring.updateSettings(settingsPatch(formStrings(request.body)));
      } catch (error) {
        if (error instanceof HttpError) throw error;
        throw new HttpError(422, `Settings not saved: ${(error as Error).message}`);
      }
      return 'Billing settings saved.';
    });
  });
}
