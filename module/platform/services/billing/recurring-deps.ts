// What the recurring-billing parts share: the platform's repositories (`r`) and the factory of a transaction's
// (`repos`), the clock; the renewal window of a day; customer credit applied to a new invoice.
import type { Logger } from 'pino';
import type { Clock } from '../../../../shared/clock.ts';
import type { InvoiceRow } from '../../store/query/repositories/invoices.ts';
import type { RenewalWindow } from '../../store/query/repositories/renewal-invoices.ts';
import type { BillingRepos, ReposOf } from './billing-repos.ts';
import { effectiveSettings, type BillingSettings } from './billing-settings.ts';
import { addDays, today } from './calendar.ts';

export interface RecurringDeps {
  clock: Clock;
  logger: Logger;
  /** The repositories on the platform's store (reads, single writes). */
  r: BillingRepos;
  /** The repositories on another store (a transaction's). */
  repos: ReposOf;
}

/** The renewal window of today: the global lead time and the largest of any product's. */
export async function renewalWindow(r: BillingRepos, clock: Clock): Promise<RenewalWindow> {
  const global = await r.settings.global();
  const leads = [global.lead_days, ...[...(await r.settings.allOverrides()).values()].map((o) => o.lead_days ?? 0)];
  const day = today(clock);
  return { today: day, lead: global.lead_days, horizon: addDays(day, Math.max(...leads)), at: clock.now().toISOString() };
}

/** The settings a product's services are billed by (a product whose overrides became inconsistent falls back to the global ones). */
export async function settingsFor(r: BillingRepos, logger: Logger, productUuid: string, global?: BillingSettings): Promise<BillingSettings> {
  const base = global ?? (await r.settings.global());
  try {
    return effectiveSettings(base, await r.settings.overrides(productUuid));
  } catch (error) {
    logger.warn({ product_uuid: productUuid, err: (error as Error).message }, 'billing: product overrides ignored');
    return base;
  }
}

/**
 * Takes the customer's credit (same currency) off a new unpaid invoice, once per invoice and never more than the
 * balance (the customer's credit is locked while it is taken); answers the invoice as it is now (amount 0: the caller
 * settles it as paid). Call inside the invoice's transaction.
 */
export async function applyCredit(r: BillingRepos, row: InvoiceRow): Promise<InvoiceRow> {
  if (!row.customer_uuid || row.status !== 'unpaid' || row.amount_minor <= 0) return row;
  const used = await r.credits.use(row.customer_uuid, row.currency, row.amount_minor, row.uuid, row.service_uuid);
  if (used <= 0) return row;
  if (!(await r.invoices.applyCredit(row.uuid, used))) throw new Error(`invoice ${row.uuid} changed while its credit was applied`);
  return (await r.invoices.get(row.uuid))!;
}
