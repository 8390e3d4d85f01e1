// Billing's repositories over one store: the platform's store for reads and single writes, or a transaction's
// (`store.transaction(async (tx) => { const r = repos(tx); … })`) for a multi-step write that lands all or nothing.
import type { Clock } from '../../../../shared/clock.ts';
import type { SecretBox } from '../../../../shared/secret-box.ts';
import type { QueryStore } from '../../store/query/query-store.ts';
import { BillingOutboxQueries } from '../../store/query/repositories/billing-outbox.ts';
import { BillingRunQueries } from '../../store/query/repositories/billing-runs.ts';
import { BillingSettingsQueries } from '../../store/query/repositories/billing-settings.ts';
import { DunningQueries } from '../../store/query/repositories/billing-steps.ts';
import { CustomerCreditQueries } from '../../store/query/repositories/customer-credits.ts';
import { CustomerQueries } from '../../store/query/repositories/customers.ts';
import { InvoiceQueries } from '../../store/query/repositories/invoices.ts';
import { PaymentMethodQueries } from '../../store/query/repositories/payment-methods.ts';
import { PriceQueries } from '../../store/query/repositories/prices.ts';
import { ProductQueries } from '../../store/query/repositories/products.ts';
import { RenewalInvoiceQueries } from '../../store/query/repositories/renewal-invoices.ts';
import { RevenueQueries } from '../../store/query/repositories/revenue.ts';
import { ServiceBillingQueries } from '../../store/query/repositories/service-billing.ts';
import { ServiceQueries } from '../../store/query/repositories/services.ts';
import { TransactionQueries } from '../../store/query/repositories/transactions.ts';
import { BillingOutbox } from './outbox.ts';

/** Every repository billing reads and writes, on one store. */
export interface BillingRepos {
  readonly store: QueryStore;
  readonly invoices: InvoiceQueries;
  readonly transactions: TransactionQueries;
  readonly prices: PriceQueries;
  readonly periods: ServiceBillingQueries;
  readonly credits: CustomerCreditQueries;
  readonly settings: BillingSettingsQueries;
  readonly runs: BillingRunQueries;
  readonly dunning: DunningQueries;
  readonly renewals: RenewalInvoiceQueries;
  readonly methods: PaymentMethodQueries;
  readonly revenue: RevenueQueries;
  readonly outboxRows: BillingOutboxQueries;
  /** Writes outbox rows on this store (inside the deciding transaction). */
  readonly outbox: BillingOutbox;
  readonly services: ServiceQueries;
  readonly products: ProductQueries;
  readonly customers: CustomerQueries;
}

/** Makes the repositories of a store. */
export type ReposOf = (store: QueryStore) => BillingRepos;

/** The repositories' factory for a platform (its clock and secret box). */
export function billingRepos(clock: Clock, box: SecretBox): ReposOf {
  return (store) => {
    const outboxRows = new BillingOutboxQueries(store);
    return {
      store,
      invoices: new InvoiceQueries(store, clock),
      transactions: new TransactionQueries(store, clock),
      prices: new PriceQueries(store, clock),
      periods: new ServiceBillingQueries(store, clock),
      credits: new CustomerCreditQueries(store, clock),
      settings: new BillingSettingsQueries(store, clock),
      runs: new BillingRunQueries(store, clock),
      dunning: new DunningQueries(store, clock),
      renewals: new RenewalInvoiceQueries(store),
      methods: new PaymentMethodQueries(store, clock),
      revenue: new RevenueQueries(store),
      outboxRows,
      outbox: new BillingOutbox(outboxRows, clock),
      services: new ServiceQueries(store, box, clock),
      products: new ProductQueries(store, clock),
      customers: new CustomerQueries(store, clock),
    };
  };
}

