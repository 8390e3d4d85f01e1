// Recurring billing behind the admin API, the CLI, the client area and the Task queue: settings (global and per
// product), the billing run (scheduled, run now, dry run) and its jobs, periods and cancellations, plan changes,
// saved payment methods, customer credit.
import type { TaskQueue } from '../../../task/queue.ts';
import { HttpError, UNKNOWN_PRODUCT } from '../../errors.ts';
import type { BillingRunQueries, BillingRunRow } from '../../store/query/repositories/billing-runs.ts';
import type { BillingSettingsQueries } from '../../store/query/repositories/billing-settings.ts';
import type { CreditEntry, CustomerCreditQueries } from '../../store/query/repositories/customer-credits.ts';
import type { ProductQueries } from '../../store/query/repositories/products.ts';
import type { BillingJobInput } from './billing-jobs.ts';
import type { BillingRun, RunPlan, RunSummary } from './billing-run.ts';
import type { BillingScheduler } from './billing-scheduler.ts';
import {
  billingSettingsPatchSchema, mergeOverrides, mergeSettings, productOverridesSchema, type BillingSettings, type ProductOverrides, effectiveSettings,
} from './billing-settings.ts';
import type { OutboxDispatcher } from './outbox.ts';
import type { BillingPeriods, ServiceBillingView } from './periods.ts';
import type { PlanChangeAnswer, PlanChanges } from './plan-change.ts';
import type { SavedMethods } from './saved-methods.ts';
import type { BillingRepos } from './billing-repos.ts';

const UNKNOWN_RUN = (id: number) => `billing run not found: ${id}`;

const COUNTS = ['renewals', 'reminders', 'overdue', 'charges', 'suspended', 'terminated', 'cancelled', 'ended_elsewhere', 'batches', 'renewals_ms', 'dunning_ms'] as const;

/** `now`'s counts added to those an earlier attempt of the same run recorded. */
function addCounts(earlier: Partial<RunSummary> | null, now: RunSummary): RunSummary {
  if (!earlier) return now;
  const out = { ...now };
  for (const key of COUNTS) out[key] = now[key] + (typeof earlier[key] === 'number' ? earlier[key] : 0);
  return out;
}

export interface RecurringBillingParts {
  settings: BillingSettingsQueries;
  products: ProductQueries;
  runs: BillingRunQueries;
  credits: CustomerCreditQueries;
  periods: BillingPeriods;
  planChanges: PlanChanges;
  run: BillingRun;
  dispatcher: OutboxDispatcher;
  scheduler: BillingScheduler;
  methods: SavedMethods;
  /** The repositories on the platform's store. */
  repos: BillingRepos;
}

/** Settings input errors answer 422 with the first issue. */
function checked<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    const issues = (error as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues;
    const text = issues?.length ? `${issues[0].path.map(String).join('.') || 'settings'}: ${issues[0].message}` : (error as Error).message;
    throw new HttpError(422, `invalid billing settings: ${text}`);
  }
}

export class RecurringBilling {
  /** Runs started here for remote workers (worker API), by run id. */
  private readonly background = new Map<number, { running: Promise<unknown>; stop: AbortController }>();

  constructor(readonly parts: RecurringBillingParts) {}

  get periods(): BillingPeriods {
    return this.parts.periods;
  }

  get methods(): SavedMethods {
    return this.parts.methods;
  }

  get scheduler(): BillingScheduler {
    return this.parts.scheduler;
  }

  get dispatcher(): OutboxDispatcher {
    return this.parts.dispatcher;
  }

  settings(): Promise<BillingSettings> {
    return this.parts.settings.global();
  }

  /** Changes some global settings; 422 with the first issue when invalid. */
  async updateSettings(patch: unknown): Promise<BillingSettings> {
    const current = await this.settings();
    const next = checked(() => mergeSettings(current, billingSettingsPatchSchema.parse(patch)));
    await this.parts.settings.setGlobal(next);
    return next;
  }

  /** A product's overrides and the settings its services are billed by. */
  async productSettings(productUuid: string): Promise<{ product_uuid: string; overrides: ProductOverrides; effective: BillingSettings }> {
    if (!(await this.parts.products.get(productUuid))) throw new HttpError(404, UNKNOWN_PRODUCT(productUuid));
    const overrides = await this.parts.settings.overrides(productUuid);
    const global = await this.settings();
    return { product_uuid: productUuid, overrides, effective: checked(() => effectiveSettings(global, overrides)) };
  }

  /** Changes a product's overrides (`null` drops one); 422 when the result contradicts itself. */
  async updateProductSettings(productUuid: string, patch: unknown): ReturnType<RecurringBilling['productSettings']> {
    if (!(await this.parts.products.get(productUuid))) throw new HttpError(404, UNKNOWN_PRODUCT(productUuid));
    const current = await this.parts.settings.overrides(productUuid);
    const global = await this.settings();
    const next = checked(() => {
      const merged = mergeOverrides(current, productOverridesSchema.parse(patch));
      effectiveSettings(global, merged);
      return merged;
    });
    await this.parts.settings.setOverrides(productUuid, next);
    return this.productSettings(productUuid);
  }

  /** What a run would do now (nothing written). */
  dryRun(): Promise<RunPlan> {
    return this.parts.run.dryRun();
  }

  /**
   * Queues a run now (an admin's) and waits up to `waitMs` for it: answers its record, finished or not (its `task_id`
   * then tells where to look).
   */
  async runNow(queue: TaskQueue, waitMs: number): Promise<BillingRunRow> {
    const id = await this.parts.runs.createManual();
    const taskId = await this.parts.scheduler.queue(id);
    if (waitMs > 0) await queue.waitFor(taskId, waitMs).catch(() => undefined);
    return (await this.parts.runs.get(id))!;
  }

  runs(limit = 50): Promise<BillingRunRow[]> {
    return this.parts.runs.list(limit);
  }

  async billingRun(id: number): Promise<BillingRunRow> {
    const row = await this.parts.runs.get(id);
    if (!row) throw new HttpError(404, UNKNOWN_RUN(id));
    return row;
  }

  /** Runs a billing job here (the platform process or a worker with the database). */
  async runJob(input: BillingJobInput, signal?: AbortSignal): Promise<Record<string, unknown>> {
    if (input.op === 'charge') return { ...(await this.parts.methods.charge(input.invoice_uuid)) };
    const { runs } = this.parts;
    const record = await runs.get(input.run_id);
    if (!record) throw new Error(UNKNOWN_RUN(input.run_id));
    await runs.started(input.run_id);
    // A run taken again (its process died, an attempt failed) adds to what the earlier attempts recorded.
    const earlier = record.finished_at ? null : (record.summary as Partial<RunSummary> | null);
    const total = (s: RunSummary): RunSummary & { attempts: number } => ({ ...addCounts(earlier, s), attempts: Number((earlier as { attempts?: number } | null)?.attempts ?? 0) + 1 });
    const summary = await this.parts.run.run({ signal, progress: (s) => runs.record(input.run_id, { ...total(s) }, false) });
    await runs.record(input.run_id, { ...total(summary) }, true);
    return { run_id: input.run_id, ...total(summary) };
  }

  /**
   * A remote worker's billing job (worker API): a charge runs now and answers its outcome; a run is started here in the
   * background (once per run id in this process) and answers `{finished: false}` until its record is finished.
   */
  async remoteJob(input: BillingJobInput): Promise<Record<string, unknown>> {
    if (input.op === 'charge') return { finished: true, result: await this.runJob(input) };
    const row = await this.billingRun(input.run_id);
    if (row.finished_at) return { finished: true, result: row.summary ?? {} };
    if (!this.background.has(row.id)) {
      const stop = new AbortController();
      const running = this.runJob(input, stop.signal).catch(() => undefined).finally(() => this.background.delete(row.id));
      this.background.set(row.id, { running, stop });
    }
    return { finished: false, result: row.summary ?? {} };
  }

  /** Stops the runs started for remote workers (shutdown; the worker's next ask starts the run again). */
  async stop(): Promise<void> {
    for (const { stop } of this.background.values()) stop.abort();
    await Promise.allSettled([...this.background.values()].map((b) => b.running));
  }

  async service(serviceUuid: string): Promise<ServiceBillingView> {
    await this.parts.periods.require(this.parts.repos, serviceUuid);
    return (await this.parts.periods.view(serviceUuid))!;
  }

  async cancel(serviceUuid: string, when: 'period_end' | 'immediate', by: 'customer' | 'admin'): Promise<ServiceBillingView> {
    const view = await this.parts.periods.cancel(serviceUuid, when, by);
    this.parts.dispatcher.kick();
    return view;
  }

  async undoCancel(serviceUuid: string, by: 'customer' | 'admin'): Promise<ServiceBillingView> {
    const view = await this.parts.periods.undoCancel(serviceUuid, by);
    this.parts.dispatcher.kick();
    return view;
  }

  /** An admin moves a service's next due date. */
  async setNextDue(serviceUuid: string, date: string): Promise<ServiceBillingView> {
    const view = await this.parts.periods.setNextDue(serviceUuid, date);
    this.parts.dispatcher.kick();
    return view;
  }

  async changePlan(serviceUuid: string, productUuid: string): Promise<PlanChangeAnswer> {
    const answer = await this.parts.planChanges.change(serviceUuid, productUuid);
    this.parts.dispatcher.kick();
    return answer;
  }

  /** A customer's credit balance per currency and its entries. */
  credit(customerUuid: string): Promise<{ balances: Record<string, number>; entries: CreditEntry[] }> {
    return this.parts.credits.of(customerUuid);
  }
}
