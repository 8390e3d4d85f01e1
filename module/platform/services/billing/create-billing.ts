// Builds billing for the platform's composition root: repositories, the ledger (handed to modules before the service
// host exists), the order/invoice service and recurring billing (periods, the run, its schedule and outbox, plan
// changes, saved methods); `bind` connects the service actions and the gateway lookup afterwards.
import type { Logger } from 'pino';
import type { Hooks } from '../../../../hooks.ts';
import type { Clock } from '../../../../shared/clock.ts';
import type { Payment } from '../../../contract/payment.ts';
import type { TaskQueue } from '../../../task/queue.ts';
import type { ModuleLoader } from '../../loader.ts';
import type { QueryStore } from '../../store/query/query-store.ts';
import type { CustomerQueries } from '../../store/query/repositories/customers.ts';
import type { SecretBox } from '../../../../shared/secret-box.ts';
import type { ModuleInstanceStore } from '../module-store.ts';
import type { ServiceAdmin } from '../service-admin.ts';
import { queueCharge } from './billing-jobs.ts';
import { billingRepos, type BillingRepos } from './billing-repos.ts';
import { BillingRun } from './billing-run.ts';
import { BillingScheduler } from './billing-scheduler.ts';
import { BillingService } from './billing-service.ts';
import { BillingLedger, type ServiceActionRunner } from './ledger.ts';
import { OutboxDispatcher, type OutboxAction } from './outbox.ts';
import { BillingPeriods } from './periods.ts';
import { PlanChanges } from './plan-change.ts';
import { RecurringBilling } from './recurring-billing.ts';
import { SavedMethods } from './saved-methods.ts';

const BILLING_NOT_BOUND = 'billing is not bound to the service host yet';

export interface Billing {
  ledger: BillingLedger;
  service: BillingService;
  customers: CustomerQueries;
  recurring: RecurringBilling;
  /** Billing's repositories on the platform's store. */
  repos: BillingRepos;
  /** Connects service actions (create on payment, terminate/suspend on refund and dunning) and gateway instances. */
  bind(serviceAdmin: ServiceAdmin, modules: ModuleLoader, instances: ModuleInstanceStore): void;
}

export function createBilling(deps: {
  /** The platform's store (SQLite or PostgreSQL) and the box sealing service data. */
  store: QueryStore; box: SecretBox; clock: Clock; hooks: Hooks; logger: Logger;
  /** The task queue (its records), for the schedule to see whether a run's task ended. */
  tasks(): Pick<TaskQueue, 'get'>;
}): Billing {
  const { clock, logger } = deps;
  let serviceAdmin: ServiceAdmin | null = null;
  let gateway: (uuid: string) => Promise<Payment | null> = async () => null;
  const runAction: ServiceActionRunner = (uuid, action) => {
    if (!serviceAdmin) throw new Error(BILLING_NOT_BOUND);
    return serviceAdmin.runAction(uuid, action, {});
  };
  const repos = billingRepos(clock, deps.box);
  const r = repos(deps.store);
  const recurringDeps = { clock, logger, r, repos };
  const periods = new BillingPeriods(recurringDeps);
  const act = async (action: OutboxAction): Promise<void> => {
    if (action.name === 'charge') {
      await queueCharge(action.payload.invoice_uuid);
      return;
    }
    if (!serviceAdmin) throw new Error(BILLING_NOT_BOUND);
    const { service_uuid, action: name, product_uuid } = action.payload;
    const result = await serviceAdmin.runAction(service_uuid, name, { product_uuid });
    if (result.status !== 'success') throw new Error(`${name}: ${String(result.message ?? 'refused')}`);
  };
  const dispatcher = new OutboxDispatcher({
    repo: r.outboxRows, hooks: deps.hooks, clock, logger, act,
    complete: async (payload) => {
      const row = typeof payload.invoice_uuid === 'string' ? await r.invoices.get(payload.invoice_uuid) : null;
      return row ? { ...(await ledger.event(row)), ...payload } : payload;
    },
  });
  const afterCommit = () => dispatcher.kick();
  const ledger: BillingLedger = new BillingLedger({ r, repos, hooks: deps.hooks, clock, logger, runAction, periods, afterCommit });
  const service = new BillingService({
    clock, r, repos, ledger, periods,
    validService: (product, data) => {
      if (!serviceAdmin) throw new Error(BILLING_NOT_BOUND);
      return serviceAdmin.validService(product, data);
    },
    gateway: (uuid) => gateway(uuid),
  });
  const recurring = new RecurringBilling({
    settings: r.settings, products: r.products, runs: r.runs, credits: r.credits, periods, dispatcher, repos: r,
    planChanges: new PlanChanges(recurringDeps, periods, (row) => {
      void ledger.event(row).then((event) => ledger.emit('invoice.created', event));
    }),
    run: new BillingRun(recurringDeps, periods, dispatcher),
    scheduler: new BillingScheduler({ runs: r.runs, settings: r.settings, clock, logger, taskStatus: async (id) => (await deps.tasks().get(id))?.status ?? null }),
    methods: new SavedMethods({ r, repos, ledger, afterCommit, gateway: (uuid) => gateway(uuid), logger }),
  });
  return {
    ledger, service, customers: r.customers, recurring, repos: r,
    bind(admin, modules, instances) {
      serviceAdmin = admin;
      gateway = async (uuid) => {
        const found = await instances.get(uuid);
        if (!found || found.module_type !== 'Payment' || !modules.has('Payment', found.module_name)) return null;
        return modules.instance<Payment>('Payment', found.module_name, { payment_gateway_uuid: found.uuid, module_data: found.module_data });
      };
    },
  };
}
