// What the recurring-billing parts share: the repositories, the outbox writer, the clock; the renewal window of a day;
// customer credit applied to a new invoice.
import type { Logger } from 'pino';
import type { Clock } from '../../../../panel/shared/clock.ts';
import type { Db } from '../../store/db.ts';
import type { BillingSettingsRepository } from '../../store/repositories/billing-settings.ts';
import type { CustomerCreditRepository } from '../../store/repositories/customer-credits.ts';
import type { InvoiceRepository, InvoiceRow } from '../../store/repositories/invoices.ts';
import type { PriceRepository } from '../../store/repositories/prices.ts';
import type { ProductRepository } from '../../store/repositories/products.ts';
import type { RenewalInvoiceRepository, RenewalWindow } from '../../store/repositories/renewal-invoices.ts';
import type { ServiceBillingRepository } from '../../store/repositories/service-billing.ts';
import type { ServiceStore } from '../../store/repositories/services.ts';
import { effectiveSettings, type BillingSettings } from './billing-settings.ts';
import { addDays, today } from './calendar.ts';
import type { BillingOutbox } from './outbox.ts';

export interface RecurringDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  periods: ServiceBillingRepository;
  invoices: InvoiceRepository;
  credits: CustomerCreditRepository;
  prices: PriceRepository;
  products: ProductRepository;
  services: ServiceStore;
  settings: BillingSettingsRepository;
  renewals: RenewalInvoiceRepository;
  outbox: BillingOutbox;
}

/** The renewal window of today: the global lead time and the largest of any product's. */
export function renewalWindow(deps: Pick<RecurringDeps, 'settings' | 'clock'>): RenewalWindow {
  const global = deps.settings.global();
  const leads = [global.lead_days, ...[...deps.settings.allOverrides().values()].map((o) => o.lead_days ?? 0)];
  const day = today(deps.clock);
  return { today: day, lead: global.lead_days, horizon: addDays(day, Math.max(...leads)), at: deps.clock.now().toISOString() };
}

/** The settings a product's services are billed by (a product whose overrides became inconsistent falls back to the global ones). */
export function settingsFor(deps: Pick<RecurringDeps, 'settings' | 'logger'>, productUuid: string, global: BillingSettings = deps.settings.global()): BillingSettings {
  try {
    return effectiveSettings(global, deps.settings.overrides(productUuid));
  } catch (error) {
    deps.logger.warn({ product_uuid: productUuid, err: (error as Error).message }, 'billing: product overrides ignored');
    return global;
  }
}

/**
 * Takes the customer's credit (same currency) off a new unpaid invoice; answers the invoice as it is now (amount 0:
 * the caller settles it as paid). Call inside the invoice's transaction.
 */
export function applyCredit(deps: Pick<RecurringDeps, 'credits' | 'invoices'>, row: InvoiceRow): InvoiceRow {
  if (!row.customer_uuid || row.status !== 'unpaid' || row.amount_minor <= 0) return row;
  const use = Math.min(deps.credits.balance(row.customer_uuid, row.currency), row.amount_minor);
  if (use <= 0) return row;
  if (!deps.credits.add({ customer_uuid: row.customer_uuid, currency: row.currency, amount_minor: -use, reason: 'applied', service_uuid: row.service_uuid, invoice_uuid: row.uuid })) return row;
  deps.invoices.applyCredit(row.uuid, use);
  return deps.invoices.get(row.uuid)!;
}
