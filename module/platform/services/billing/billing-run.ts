// The billing run: renewal invoices in batches (one INSERT … SELECT each, guarded by the UNIQUE (service, period)
// index, so concurrent or repeated runs make each invoice once), services an admin terminated and cancellations
// that took effect, then dunning over the open renewal invoices (reminders, overdue, off-session charge, suspension,
// termination — each step claimed once per invoice); its decisions go through the outbox. A dry run reports the same
// without writing.
import type { BillingSettings } from './billing-settings.ts';
import { addDays, daysBetween } from './calendar.ts';
import { dunningSteps, type DunningStep } from './dunning-plan.ts';
import type { BillingPeriods } from './periods.ts';
import { renewalWindow, settingsFor, type RecurringDeps } from './recurring-deps.ts';
import { stepKey, type OpenRenewal } from '../../store/query/repositories/billing-steps.ts';
import type { NewOutboxRow } from '../../store/query/repositories/billing-outbox.ts';
import type { RenewalCursor } from '../../store/query/repositories/renewal-invoices.ts';
import type { BillingRepos } from './billing-repos.ts';

/** What a run did (or, dry, would do). */
export interface RunSummary {
  date: string;
  dry_run: boolean;
  renewals: number;
  reminders: number;
  overdue: number;
  charges: number;
  suspended: number;
  terminated: number;
  cancelled: number;
  ended_elsewhere: number;
  batches: number;
  /**
   * Milliseconds inside the transactions that made the renewal invoices (their events queued in the outbox included),
   * on dunning, and in all — the events carried out between and after batches included (monotonic clock).
   */
  renewals_ms: number;
  dunning_ms: number;
  total_ms: number;
}

/** A dry run's plan: the summary plus the first items of each kind. */
export interface RunPlan extends RunSummary {
  items: {
    renewals: Array<{ service_uuid: string; period_start: string; period_end: string; amount_minor: number; currency: string }>;
    steps: Array<{ invoice_uuid: string; service_uuid: string; step: string; notify: boolean }>;
    cancellations: string[];
    ended_elsewhere: string[];
  };
}

const ITEMS = 1000;
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const PAGE = 500;

export interface RunOptions {
  signal?: AbortSignal;
  /** Progress after each batch (the run record); awaited, so records land in order and none after the final one. */
  progress?: (summary: RunSummary) => Promise<void> | void;
}

export class BillingRun {
  constructor(
    private readonly deps: RecurringDeps,
    private readonly periods: BillingPeriods,
    /** Carries out the outbox (called after each committed batch; awaited at the end). */
    private readonly dispatch: { kick(): void; drain(): Promise<number> },
  ) {}

  /** One run on the platform clock's day. */
  async run(opts: RunOptions = {}): Promise<RunSummary> {
    const started = performance.now();
    const { r } = this.deps;
    const window = await renewalWindow(r, this.deps.clock);
    const global = await r.settings.global();
    const summary = this.empty(window.today, false);
    let making = 0;
    let cursor: RenewalCursor | undefined;
    for (;;) {
      opts.signal?.throwIfAborted();
      const mark = performance.now();
      const made = await r.store.transaction(async (store) => {
        const tx = this.deps.repos(store);
        const batch = await tx.renewals.makeBatch(window, global.batch_size, cursor);
        await this.periods.creditNew(tx, batch.credited);
        cursor = batch.next;
        return batch.made;
      });
      making += performance.now() - mark;
      summary.renewals += made;
      summary.batches += 1;
      if (made > 0) this.dispatch.kick();
      await opts.progress?.({ ...summary, renewals_ms: Math.round(making) });
      if (made < global.batch_size) break;
      // A long run lets the process answer requests and carry out the outbox between batches.
      await yieldTurn();
    }
    summary.renewals_ms = Math.round(making);
    const dunningStart = performance.now();
    summary.ended_elsewhere = (await this.endedElsewhere(false)).length;
    summary.cancelled = (await this.dueCancellations(window.today, false)).length;
    await this.dun(window.today, global, summary, null, opts.signal);
    summary.dunning_ms = Math.round(performance.now() - dunningStart);
    await this.dispatch.drain();
    summary.total_ms = Math.round(performance.now() - started);
    return summary;
  }

  /** What a run would do now; nothing is written. */
  async dryRun(): Promise<RunPlan> {
    const started = performance.now();
    const { r } = this.deps;
    const window = await renewalWindow(r, this.deps.clock);
    const global = await r.settings.global();
    const renewals = await r.renewals.dueRenewals(window, 1_000_000);
    const plan: RunPlan = {
      ...this.empty(window.today, true),
      items: { renewals: renewals.slice(0, ITEMS), steps: [], cancellations: await this.dueCancellations(window.today, true), ended_elsewhere: await this.endedElsewhere(true) },
    };
    plan.renewals = renewals.length;
    plan.cancelled = plan.items.cancellations.length;
    plan.ended_elsewhere = plan.items.ended_elsewhere.length;
    await this.dun(window.today, global, plan, plan.items.steps);
    plan.total_ms = Math.round(performance.now() - started);
    return plan;
  }

  private empty(date: string, dry: boolean): RunSummary {
    return {
      date, dry_run: dry, renewals: 0, reminders: 0, overdue: 0, charges: 0, suspended: 0, terminated: 0, cancelled: 0, ended_elsewhere: 0,
      batches: 0, renewals_ms: 0, dunning_ms: 0, total_ms: 0,
    };
  }

  /** Services an admin terminated: their billing ends too (state terminated, open invoices voided). */
  private async endedElsewhere(dry: boolean): Promise<string[]> {
    const rows = await this.deps.r.periods.terminatedElsewhere(100_000);
    if (dry) return rows.map((row) => row.service_uuid);
    for (const row of rows) {
      await this.inTransaction(async (tx) => {
        if (await tx.periods.setState(row.service_uuid, 'terminated', ['pending', 'active', 'overdue', 'suspended'])) {
          await tx.invoices.voidOpen(row.service_uuid, ['order', 'renewal', 'change']);
        }
      });
    }
    return rows.map((row) => row.service_uuid);
  }

  private inTransaction<T>(work: (tx: BillingRepos) => Promise<T>): Promise<T> {
    return this.deps.r.store.transaction((store) => work(this.deps.repos(store)));
  }

  /** Cancellations at the period end whose day came: terminate() queued, state cancelled. */
  private async dueCancellations(today: string, dry: boolean): Promise<string[]> {
    const rows = await this.deps.r.periods.dueCancellations(today, 100_000);
    if (dry) return rows.map((row) => row.service_uuid);
    for (const row of rows) {
      await this.inTransaction(async (tx) => {
        if (!(await tx.periods.setState(row.service_uuid, 'cancelled', ['active', 'overdue', 'suspended']))) return;
        await tx.invoices.voidOpen(row.service_uuid, ['renewal', 'change']);
        await tx.outbox.action({ name: 'service_action', payload: { service_uuid: row.service_uuid, action: 'termination' } }, `cancel:${row.service_uuid}`);
      });
      this.dispatch.kick();
    }
    return rows.map((row) => row.service_uuid);
  }

  /** Dunning over the open renewal invoices, a page (one transaction) at a time. */
  private async dun(today: string, global: BillingSettings, summary: RunSummary, planned: RunPlan['items']['steps'] | null, signal?: AbortSignal): Promise<void> {
    const products = new Map<string, BillingSettings>();
    const { r } = this.deps;
    const reach = Math.max(0, ...global.reminder_days_before, ...[...(await r.settings.allOverrides()).values()].flatMap((o) => o.reminder_days_before ?? []));
    let after = { due: '', id: 0 };
    for (;;) {
      signal?.throwIfAborted();
      const page = await r.dunning.openRenewals(addDays(today, reach), after, PAGE);
      if (page.length === 0) return;
      const last = page[page.length - 1];
      after = { due: last.due_date, id: last.invoice_id };
      const done = await r.dunning.done(page.map((i) => i.invoice_uuid));
      const work: Array<{ invoice: OpenRenewal; steps: DunningStep[]; settings: BillingSettings }> = [];
      for (const invoice of page) {
        let settings = products.get(invoice.product_uuid);
        if (!settings) products.set(invoice.product_uuid, (settings = await settingsFor(r, this.deps.logger, invoice.product_uuid, global)));
        const steps = dunningSteps(settings, {
          due_date: invoice.due_date, today, amount_minor: invoice.amount_minor, has_saved_method: invoice.has_method, done: done.get(invoice.invoice_uuid)!,
        });
        if (steps.length > 0) work.push({ invoice, steps, settings });
      }
      if (planned) {
        for (const { invoice, steps } of work) {
          for (const s of steps) {
            this.count(summary, s);
            if (planned.length < ITEMS) planned.push({ invoice_uuid: invoice.invoice_uuid, service_uuid: invoice.service_uuid, step: s.step, notify: s.notify });
          }
        }
        continue;
      }
      if (work.length === 0) continue;
      await this.inTransaction(async (tx) => {
        // The page's steps are claimed by one statement; only those this run took are carried out, in the page's order,
        // and their outbox rows written together at the end of the same transaction.
        const claims = work.flatMap(({ invoice, steps }) => steps.map((step) => ({ invoice_uuid: invoice.invoice_uuid, step: step.step, outcome: outcomeOf(invoice, step) })));
        const taken = await tx.dunning.claimMany(claims);
        const rows: NewOutboxRow[] = [];
        for (const { invoice, steps, settings } of work) {
          for (const step of steps) if (taken.has(stepKey(invoice.invoice_uuid, step.step))) await this.take(tx, invoice, step, settings, today, summary, rows);
        }
        await tx.outbox.write(rows);
      });
      this.dispatch.kick();
      await yieldTurn();
    }
  }

  private count(summary: RunSummary, step: DunningStep): void {
    if (!step.notify) return;
    if (step.action === 'reminder_before' || step.action === 'reminder_after') summary.reminders += 1;
    else if (step.action === 'auto_charge') summary.charges += 1;
    else if (step.action === 'overdue') summary.overdue += 1;
    else if (step.action === 'suspend') summary.suspended += 1;
    else summary.terminated += 1;
  }

  /** Carries out a step this run claimed: writes the state it decides and adds its outbox rows to `rows`. */
  private async take(tx: BillingRepos, invoice: OpenRenewal, step: DunningStep, settings: BillingSettings, today: string, summary: RunSummary, rows: NewOutboxRow[]): Promise<void> {
    const { periods, outbox, invoices } = tx;
    const service = invoice.service_uuid;
    this.count(summary, step);
    const key = invoice.invoice_uuid;
    switch (step.action) {
      case 'reminder_before':
      case 'reminder_after':
        if (step.notify) {
          rows.push(outbox.eventRow('invoice.reminder', { invoice_uuid: key, days: step.days, when: step.action === 'reminder_before' ? 'before' : 'after', billing_state: invoice.billing_state }, `${key}:${step.step}`));
        }
        return;
      case 'auto_charge':
        rows.push(outbox.actionRow({ name: 'charge', payload: { invoice_uuid: key } }, key));
        return;
      case 'overdue': {
        const state = (await periods.setState(service, 'overdue', ['active'])) ? 'overdue' : invoice.billing_state;
        const suspendOn = settings.suspend_after_days === null ? null : addDays(invoice.due_date, Math.max(1, settings.suspend_after_days));
        if (step.notify) rows.push(outbox.eventRow('service.overdue', { invoice_uuid: key, days: daysBetween(invoice.due_date, today), suspend_on: suspendOn, billing_state: state }, key));
        return;
      }
      case 'suspend':
        // A service an admin suspended by hand stays the admin's: billing does not take it over (nor lift it on payment).
        if (isAdminSuspended(invoice, step) || !(await periods.setState(service, 'suspended', ['active', 'overdue']))) return;
        rows.push(outbox.actionRow({ name: 'service_action', payload: { service_uuid: service, action: 'suspend' } }, key));
        rows.push(outbox.eventRow('service.suspended_nonpayment', { invoice_uuid: key, days: step.days, billing_state: 'suspended' }, key));
        return;
      case 'terminate':
        if (!(await periods.setState(service, 'terminated', ['active', 'overdue', 'suspended']))) return;
        await invoices.voidOpen(service, ['order', 'renewal', 'change']);
        rows.push(outbox.actionRow({ name: 'service_action', payload: { service_uuid: service, action: 'termination' } }, key));
        rows.push(outbox.eventRow('service.terminated_nonpayment', { invoice_uuid: key, days: step.days, billing_state: 'terminated' }, key));
        return;
    }
  }
}

/** A suspension step on a service an admin suspended by hand (billing leaves it alone). */
function isAdminSuspended(invoice: OpenRenewal, step: DunningStep): boolean {
  return step.action === 'suspend' && invoice.provision_status === 'suspended' && invoice.billing_state !== 'suspended';
}

/** The outcome a step is recorded with when claimed. */
function outcomeOf(invoice: OpenRenewal, step: DunningStep): string {
  if (isAdminSuspended(invoice, step)) return 'already suspended by an admin';
  return step.notify ? '' : 'passed over';
}
