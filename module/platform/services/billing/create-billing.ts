// Builds billing for the platform's composition root: repositories, the ledger (handed to modules before the service
// host exists) and the service; `bind` connects the service actions and the gateway lookup afterwards.
import type { Logger } from 'pino';
import type { Hooks } from '../../../../hooks.ts';
import type { Clock } from '../../../../panel/shared/clock.ts';
import type { Payment } from '../../../contract/payment.ts';
import type { ModuleLoader } from '../../loader.ts';
import type { Db } from '../../store/db.ts';
import { CustomerRepository } from '../../store/repositories/customers.ts';
import { InvoiceRepository } from '../../store/repositories/invoices.ts';
import { PriceRepository } from '../../store/repositories/prices.ts';
import type { ProductRepository } from '../../store/repositories/products.ts';
import type { ServiceStore } from '../../store/repositories/services.ts';
import { TransactionRepository } from '../../store/repositories/transactions.ts';
import type { ModuleInstanceStore } from '../module-store.ts';
import type { ServiceAdmin } from '../service-admin.ts';
import { BillingService } from './billing-service.ts';
import { BillingLedger, type ServiceActionRunner } from './ledger.ts';

export const BILLING_NOT_BOUND = 'billing is not bound to the service host yet';

export interface Billing {
  ledger: BillingLedger;
  service: BillingService;
  customers: CustomerRepository;
  /** Connects service actions (create on payment, terminate/suspend on refund) and gateway instances. */
  bind(serviceAdmin: ServiceAdmin, modules: ModuleLoader, instances: ModuleInstanceStore): void;
}

export function createBilling(deps: { db: Db; clock: Clock; services: ServiceStore; products: ProductRepository; hooks: Hooks; logger: Logger }): Billing {
  const { db, clock } = deps;
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
  const ledger = new BillingLedger({ db, invoices, transactions, prices, services: deps.services, hooks: deps.hooks, clock, logger: deps.logger, runAction });
  const service = new BillingService({
    db, clock, prices, invoices, transactions, customers, products: deps.products, ledger,
    createService: (product, data) => {
      if (!serviceAdmin) throw new Error(BILLING_NOT_BOUND);
      return serviceAdmin.createService(product, data);
    },
    gateway: (uuid) => gateway(uuid),
  });
  return {
    ledger, service, customers,
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
