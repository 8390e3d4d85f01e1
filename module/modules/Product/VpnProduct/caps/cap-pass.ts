// The data-cap pass (platform process, every `caps.every_ms`): one traffic request per panel for every capped service on
// it (GET /traffic_statistics?from=), each service's usage in its period summed, its state stepped (cap-policy.ts), and
// the effects carried out: mails through the platform's events, throttle / lift / suspend / unsuspend through the
// service's queued jobs.
import type { Logger } from 'pino';
import type { Hooks, UsageEvent } from '../../../../../hooks.ts';
import type { Clock } from '../../../../../shared/clock.ts';
import type { BillingCalendar } from '../../../../contract/platform-reads.ts';
import { MODULE_QUEUE } from '../../../../contract/product-jobs.ts';
import { MODULE_JOB } from '../../../../task/module-job.ts';
import { serviceTaskTags } from '../../../../task/tags.ts';
import type { TaskOptions } from '../../../../task/queue.ts';
import type { PanelClient } from '../panel-client.ts';
import { capPeriod, countUntil, type CapDirectory, type CappedService } from './cap-directory.ts';
import { capPolicyOf, capSummary, stepCap, type CapAction, type CapEffect } from './cap-policy.ts';
import type { CapStore } from './cap-store.ts';
import { humanBytes } from './cap-view.ts';

/** Service job methods of VpnProduct the pass queues (the account's rate to the throttle, and back to the plan's). */
export const CAP_THROTTLE_JOB = 'capThrottleJob';
export const CAP_LIFT_JOB = 'capLiftJob';

/** Days the first read of a panel goes back at most (the panel answers at most 62 per request). */
const FIRST_READ_DAYS = 61;
/** Day figures older than this are forgotten (no cap period reaches that far back). */
const KEEP_DAYS = 93;

export interface CapPassDeps {
  directory: Pick<CapDirectory, 'list' | 'get'>;
  store: CapStore;
  client(panel: string): Promise<Pick<PanelClient, 'trafficRange'>>;
  /** Queues a job: `Task.add(jobName, queue, input, tags)`. */
  addTask(jobName: string, queue: string, input: Record<string, unknown>, tags: string[]): Promise<string>;
  jobOptions: TaskOptions;
  /** The platform's billing calendar (the host's read API): cap periods follow billing periods. */
  calendar: BillingCalendar;
  /** A pass is due this long after the previous one began. */
  everyMs: number;
  clock: Clock;
  logger: Logger;
}

/** What one pass did. */
export interface CapPassSummary {
  panels: number;
  /** Panel requests made (one per panel read). */
  requests: number;
  services: number;
  failed_panels: string[];
  effects: Array<{ service_uuid: string } & CapEffect>;
}

export class CapPass {
  #running: Promise<CapPassSummary> | null = null;
  #hooks: Hooks | null = null;
  /** Steps run one at a time (the pass, the renewal and plan-change listeners): an effect is never queued twice. */
  #steps: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: CapPassDeps) {}

  /** The platform's event bus the usage mails are emitted on (set by the manifest's hooks). */
  attachHooks(hooks: Hooks): void {
    this.#hooks = hooks;
  }

  /**
   * Runs a pass when `everyMs` passed since the last one began in any process (the scheduler's tick; the start is
   * claimed in the store, so one process runs each pass); null when not due.
   */
  async runIfDue(): Promise<CapPassSummary | null> {
    if (this.#running) return null;
    if (!(await this.deps.store.claimPass(this.deps.clock.now().getTime(), this.deps.everyMs))) return null;
    return this.passOnce();
  }

  /** Runs a pass now (its start recorded); a pass asked for while one runs joins it. */
  async run(signal?: AbortSignal): Promise<CapPassSummary> {
    if (this.#running) return this.#running;
    await this.deps.store.claimPass(this.deps.clock.now().getTime(), 0);
    return this.passOnce(signal);
  }

  private passOnce(signal?: AbortSignal): Promise<CapPassSummary> {
    this.#running ??= this.pass(signal).finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  /**
   * After a plan change: change_packageJob set the account's rate to the new plan's bandwidth, so a throttle in force
   * is gone; the service is stepped again at once (throttled again when still over the new plan's allowance).
   */
  async packageChanged(serviceUuid: string): Promise<CapEffect[]> {
    return this.serial(async () => {
      const state = await this.deps.store.state(serviceUuid);
      if (state?.applied === 'throttle') await this.deps.store.save(serviceUuid, { ...state, applied: null });
      return this.stepNow(serviceUuid);
    });
  }

  /** Steps one service now from what is stored (no panel read): the renewal listener's lift. */
  stepService(serviceUuid: string): Promise<CapEffect[]> {
    return this.serial(() => this.stepNow(serviceUuid));
  }

  /** Steps the service as the platform has it now (nothing for an uncapped service without a cap state). */
  private async stepNow(serviceUuid: string, today = this.today()): Promise<CapEffect[]> {
    const service = await this.deps.directory.get(serviceUuid);
    if (!service || (!(await this.deps.store.state(serviceUuid)) && capPolicyOf(service.product_data).allowance_bytes === 0)) return [];
    return this.step(service, today);
  }

  /** Runs `task` after every step queued before it. */
  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#steps.then(task, task);
    this.#steps = run.catch(() => undefined);
    return run;
  }

  private today(): string {
    return this.deps.calendar.dateOf(this.deps.clock.now());
  }

  private async pass(signal?: AbortSignal): Promise<CapPassSummary> {
    const today = this.today();
    const { calendar } = this.deps;
    const byPanel = new Map<string, CappedService[]>();
    for (const service of await this.deps.directory.list()) {
      if (!service.panel || !service.account_name) continue;
      const list = byPanel.get(service.panel) ?? [];
      list.push(service);
      byPanel.set(service.panel, list);
    }
    const summary: CapPassSummary = { panels: byPanel.size, requests: 0, services: 0, failed_panels: [], effects: [] };
    for (const [panel, services] of byPanel) {
      try {
        summary.requests += 1;
        await this.readPanel(panel, services, today, signal);
      } catch (error) {
        summary.failed_panels.push(panel);
        this.deps.logger.warn({ panel, err: error instanceof Error ? error.message : String(error) }, 'data caps: panel usage not read');
        continue;
      }
      for (const service of services) {
        summary.services += 1;
        // Read again inside the step: a renewal may have moved the service's period since the list was read.
        for (const effect of await this.serial(() => this.stepNow(service.service_uuid, today))) summary.effects.push({ service_uuid: service.service_uuid, ...effect });
      }
    }
    await this.deps.store.pruneBefore(calendar.addDays(today, -KEEP_DAYS));
    return summary;
  }

  /** One request: the panel's days since the last read, stored for the services on it. */
  private async readPanel(panel: string, services: CappedService[], today: string, signal?: AbortSignal): Promise<void> {
    // From the last read's day before, or from the period start of a service not read before (a new capped service).
    const { calendar } = this.deps;
    const floor = calendar.addDays(today, -FIRST_READ_DAYS);
    let from = (await this.deps.store.nextFrom(panel)) ?? today;
    for (const service of services) {
      if (await this.deps.store.state(service.service_uuid)) continue;
      const start = capPeriod(service, today, calendar).start;
      if (start < from) from = start;
    }
    if (from < floor) from = floor;
    // Yesterday is read again: the panel's day may lag or lead the platform's by its time zone.
    if (from > calendar.addDays(today, -1)) from = calendar.addDays(today, -1);
    const accounts = new Map(services.map((s) => [s.account_name!, s.service_uuid]));
    const entries = await (await this.deps.client(panel)).trafficRange(from, undefined, signal);
    const rows = entries.flatMap((e) => {
      const uuid = accounts.get(e.account);
      return uuid ? [{ service_uuid: uuid, day: e.date, bytes: e.traffic_download + e.traffic_upload }] : [];
    });
    await this.deps.store.recordDays(rows);
    await this.deps.store.setNextFrom(panel, calendar.addDays(today, -1));
  }

  /**
   * Steps one service on its stored figures: the new state is claimed first (a conditional write on the state read, so
   * of two processes stepping the service one carries out the effects), then the effects are carried out; when a job
   * cannot be queued the state goes back, for the next pass to try again.
   */
  private async step(service: CappedService, today: string): Promise<CapEffect[]> {
    const { store, calendar } = this.deps;
    const policy = capPolicyOf(service.product_data);
    const period = capPeriod(service, today, calendar);
    const used = await store.usedBetween(service.service_uuid, period.start, countUntil(period, today, calendar));
    const previous = await store.state(service.service_uuid);
    const { next, effects } = stepCap(previous, policy, { period_start: period.start, period_end: period.end, used_bytes: used });
    if (!(await store.transition(service.service_uuid, previous, next))) return [];
    try {
      for (const effect of effects) {
        if (effect.kind === 'apply') await this.apply(service, effect.action);
        if (effect.kind === 'lift') await this.lift(service, effect.action);
      }
    } catch (error) {
      this.deps.logger.error({ service_uuid: service.service_uuid, err: error instanceof Error ? error.message : String(error) }, 'data caps: job not queued');
      if (previous) await store.transition(service.service_uuid, next, previous);
      else await store.forget(service.service_uuid, next);
      return [];
    }
    const hooks = this.#hooks;
    for (const effect of effects) {
      if (effect.kind !== 'mail' || !hooks) continue;
      const shown = capSummary(next, policy, today);
      const payload: UsageEvent = {
        service_uuid: service.service_uuid, module: 'VpnProduct', customer_uuid: service.customer_uuid, used_bytes: next.used_bytes,
        allowance_bytes: policy.allowance_bytes, used: humanBytes(next.used_bytes), allowance: humanBytes(policy.allowance_bytes), percent: shown.percent, action: policy.action, throttle_mbit: policy.throttle_mbit,
        period_start: next.period_start, period_end: next.period_end, at: this.deps.clock.now().toISOString(),
      };
      await hooks.emit(effect.level === 80 ? 'service.usage_warning' : 'service.usage_exceeded', payload);
    }
    if (effects.length) this.deps.logger.info({ service_uuid: service.service_uuid, used_bytes: next.used_bytes, effects }, 'data caps');
    return effects;
  }

  private async apply(service: CappedService, action: CapAction): Promise<void> {
    if (action === 'throttle') await this.queue(service, CAP_THROTTLE_JOB, 'cap_throttle');
    // What Product.suspend() queues: the lifecycle follows the task (processing, then suspended).
    else if (service.provision_status !== 'suspended') await this.queue(service, 'suspendJob', 'suspend');
  }

  private async lift(service: CappedService, action: CapAction): Promise<void> {
    if (action === 'throttle') await this.queue(service, CAP_LIFT_JOB, 'cap_lift');
    // Only a suspension the cap made is lifted (its state says so), as unsuspend() queues it.
    else await this.queue(service, 'unsuspendJob', 'unsuspend');
  }

  private queue(service: CappedService, method: string, action: string): Promise<string> {
    return this.deps.addTask(MODULE_JOB, MODULE_QUEUE, {
      module: { type: 'Product', name: 'VpnProduct', service_uuid: service.service_uuid }, method, ...this.deps.jobOptions,
    }, serviceTaskTags(action, service.service_uuid));
  }
}
