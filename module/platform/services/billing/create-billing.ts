// Builds billing for the platform's composition root: repositories, the ledger (handed to modules before the service
// host exists), the order/invoice service and recurring billing (periods, the run, its schedule and outbox, plan
// changes, saved methods); `bind` connects the service actions and the gateway lookup afterwards.
import type { Logger } from 'pino';
import type { Hooks } from '../../../../hooks.ts';
import type { Clock } from '../../../../panel/shared/clock.ts';
import type { Payment } from '../../../contract/payment.ts';
import type { TaskQueue } from '../../../task/queue.ts';
import type { ModuleLoader } from '../../loader.ts';
import type { Db } from '../../store/db.ts';
import { BillingOutboxRepository } from '../../store/repositories/billing-outbox.ts';
import { BillingRunRepository } from '../../store/repositories/billing-runs.ts';
import { BillingSettingsRepository } from '../../store/repositories/billing-settings.ts';
import { DunningRepository } from '../../store/repositories/billing-steps.ts';
import { CustomerCreditRepository } from '../../store/repositories/customer-credits.ts';
import { CustomerRepository } from '../../store/repositories/customers.ts';
import { InvoiceRepository } from '../../store/repositories/invoices.ts';
import { PaymentMethodRepository } from '../../store/repositories/payment-methods.ts';
import { PriceRepository } from '../../store/repositories/prices.ts';
import type { ProductRepository } from '../../store/repositories/products.ts';
import { RenewalInvoiceRepository } from '../../store/repositories/renewal-invoices.ts';
import { ServiceBillingRepository } from '../../store/repositories/service-billing.ts';
import type { ServiceStore } from '../../store/repositories/services.ts';
import { TransactionRepository } from '../../store/repositories/transactions.ts';
import type { ModuleInstanceStore } from '../module-store.ts';
import type { ServiceAdmin } from '../service-admin.ts';
import { queueCharge } from './billing-jobs.ts';
import { BillingRun } from './billing-run.ts';
import { BillingScheduler } from './billing-scheduler.ts';
import { BillingService } from './billing-service.ts';
import { BillingLedger, type ServiceActionRunner } from './ledger.ts';
import { BillingOutbox, OutboxDispatcher, type OutboxAction } from './outbox.ts';
import { BillingPeriods } from './periods.ts';
import { PlanChanges } from './plan-change.ts';
import { RecurringBilling } from './recurring-billing.ts';
import { SavedMethods } from './saved-methods.ts';

export const BILLING_NOT_BOUND = 'billing is not bound to the service host yet';

export interface Billing {
  ledger: BillingLedger;
  service: BillingService;
  customers: CustomerRepository;
  recurring: RecurringBilling;
  /** Connects service actions (create on payment, terminate/suspend on refund and dunning) and gateway instances. */
  bind(serviceAdmin: ServiceAdmin, modules: ModuleLoader, instances: ModuleInstanceStore): void;
}

export function createBilling(deps: {
  db: Db; clock: Clock; services: ServiceStore; products: ProductRepository; hooks: Hooks; logger: Logger;
  /** The task queue (its records), for the schedule to see whether a run's task ended. */
  tasks(): Pick<TaskQueue, 'get'>;
}): Billing {
  const { db, clock, logger } = deps;
  let serviceAdmin: ServiceAdmin | null = null;
  let gateway: (uuid: string) => Payment | null = () => null;
  const runAction: ServiceActionRunner = (uuid, action) => {
    if (!serviceAdmin) throw new Error(BILLING_NOT_BOUND);
    return serviceAdmin.runAction(uuid, action, {});
  };
  const prices = new PriceRepository(db, clock);
  const invoices = new InvoiceRepository(db, clock);
  const transactions = new TransactionRepository(db, clock);
  const customers = new CustomerRepository(db, clock);
  const methodRepo = new PaymentMethodRepository(db, clock);
  const settings = new BillingSettingsRepository(db, clock);
  const runs = new BillingRunRepository(db, clock);
  const credits = new CustomerCreditRepository(db, clock);
  const outboxRepo = new BillingOutboxRepository(db);
  const outbox = new BillingOutbox(outboxRepo, clock);
  const recurringDeps = {
    db, clock, logger, outbox, invoices, credits, prices, settings,
    periods: new ServiceBillingRepository(db, clock), products: deps.products, services: deps.services, renewals: new RenewalInvoiceRepository(db),
  };
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
    repo: outboxRepo, hooks: deps.hooks, clock, logger, act,
    complete: (payload) => {
      const row = typeof payload.invoice_uuid === 'string' ? invoices.get(payload.invoice_uuid) : null;
      return row ? { ...ledger.event(row), ...payload } : payload;
    },
  });
  const afterCommit = () => dispatcher.kick();
  const ledger: BillingLedger = new BillingLedger({
    db, invoices, transactions, prices, services: deps.services, hooks: deps.hooks, clock, logger, runAction, periods, outbox, methods: methodRepo, afterCommit,
  });
  const service = new BillingService({
    db, clock, prices, invoices, transactions, customers, products: deps.products, ledger, periods,
    createService: (product, data) => {
      if (!serviceAdmin) throw new Error(BILLING_NOT_BOUND);
      return serviceAdmin.createService(product, data);
    },
    gateway: (uuid) => gateway(uuid),
  });
  const recurring = new RecurringBilling({
    settings, products: deps.products, runs, credits, periods, dispatcher,
    planChanges: new PlanChanges(recurringDeps, periods, (row) => ledger.emit('invoice.created', ledger.event(row))),
    run: new BillingRun(recurringDeps, new DunningRepository(db, clock), periods, dispatcher),
    scheduler: new BillingScheduler({ runs, settings, clock, logger, taskStatus: async (id) => (await deps.tasks().get(id))?.status ?? null }),
    methods: new SavedMethods({ db, methods: methodRepo, invoices, ledger, outbox, afterCommit, gateway: (uuid) => gateway(uuid), logger }),
  });
  return {
    ledger, service, customers, recurring,
    bind(admin, modules, instances) {
      serviceAdmin = admin;
      gateway = (uuid) => {
        const found = instances.get(uuid);
        if (!found || found.module_type !== 'Payment' || !modules.has('Payment', found.module_name)) return null;
        return modules.instance<Payment>('Payment', found.module_name, { payment_gateway_uuid: found.uuid, module_data: found.module_data });
      };
    },
  };
}
