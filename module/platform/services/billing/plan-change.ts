// Plan changes (upgrade, downgrade) prorated to the day: a positive balance is a `change` invoice whose payment runs
// change_package; a zero or negative one applies at once, the negative part credited to the customer's balance (the
// next invoice consumes it). Applying moves the service to the new product and price and re-makes a renewal invoice
// already made at the old price.
import { HttpError, UNKNOWN_PRODUCT } from '../../errors.ts';
import type { InvoiceRow } from '../../store/query/repositories/invoices.ts';
import type { ServiceBillingRow } from '../../store/query/repositories/service-billing.ts';
import type { BillingRepos } from './billing-repos.ts';
import { addDays, periodAround, today } from './calendar.ts';
import { formatMinor } from './money.ts';
import type { BillingPeriods } from './periods.ts';
import { prorate, type Proration } from './proration.ts';
import { applyCredit, type RecurringDeps } from './recurring-deps.ts';

const NOT_CHANGEABLE = (uuid: string, state: string) => `service ${uuid} is ${state}: only an active service changes its plan (pay its open invoices first)`;
const CHANGE_PENDING = (number: string) => `a plan change is waiting for the payment of invoice ${number}`;
const CANCEL_PENDING = (uuid: string) => `service ${uuid} is cancelled at its period end: withdraw the cancellation first`;
const SAME_PRODUCT = 'the service is on that product already';

export interface PlanChangeAnswer {
  service_uuid: string;
  from_product_uuid: string;
  to_product_uuid: string;
  proration: Proration & { currency: string; balance: string };
  /** `invoiced`: pay `invoice` and the change applies; `applied`: done now (`credit_minor` credited). */
  outcome: 'invoiced' | 'applied';
  invoice_uuid: string | null;
  credit_minor: number;
}

export class PlanChanges {
  constructor(
    private readonly deps: RecurringDeps,
    private readonly periods: BillingPeriods,
    /** Emits `invoice.created` for a change invoice (after the commit). */
    private readonly invoiceCreated: (row: InvoiceRow) => void,
  ) {
    periods.onChangePaid(async (r, row, billing) => {
      if (row.change_product_uuid) await this.apply(r, billing, row.change_product_uuid, row.amount_minor + row.credit_minor, row.uuid);
    });
  }

  /** The proration of moving `serviceUuid` to `productUuid` today, with the checks of a change (nothing written). */
  async quote(serviceUuid: string, productUuid: string, r: BillingRepos = this.deps.r): Promise<{ billing: ServiceBillingRow; from: string; proration: Proration; price: number }> {
    const billing = await this.periods.require(r, serviceUuid);
    const service = (await r.services.get(serviceUuid))!;
    if (billing.state !== 'active' || billing.next_due_date === null || billing.anchor_day === null) throw new HttpError(409, NOT_CHANGEABLE(serviceUuid, billing.state));
    if (billing.cancel_at) throw new HttpError(409, CANCEL_PENDING(serviceUuid));
    const target = await r.products.get(productUuid);
    if (!target) throw new HttpError(404, UNKNOWN_PRODUCT(productUuid));
    if (target.uuid === service.product_uuid) throw new HttpError(422, SAME_PRODUCT);
    if (target.module !== service.module_name) throw new HttpError(422, `product ${target.uuid} is served by ${target.module}, the service by ${service.module_name}`);
    const price = await r.prices.get(target.uuid, billing.billing_cycle);
    if (!price) throw new HttpError(422, `product ${target.uuid} has no price for billing cycle ${billing.billing_cycle}`);
    if (price.currency !== billing.currency) throw new HttpError(422, `product ${target.uuid} is priced in ${price.currency}, the service in ${billing.currency}`);
    const day = today(this.deps.clock);
    const period = periodAround(day, billing.next_due_date, billing.billing_cycle, billing.anchor_day);
    const proration = prorate({ periodStart: period.start, periodEnd: period.end, on: day, futureCycles: period.futureCycles, oldAmount: billing.recurring_minor, newAmount: price.amount_minor });
    return { billing, from: service.product_uuid, proration, price: price.amount_minor };
  }

  /** Changes the plan: invoiced (positive balance) or applied at once (the unused part credited). */
  async change(serviceUuid: string, productUuid: string): Promise<PlanChangeAnswer> {
    let created: InvoiceRow | null = null;
    const answer = await this.deps.r.store.transaction(async (store): Promise<PlanChangeAnswer> => {
      const r = this.deps.repos(store);
      const { billing, from, proration } = await this.quote(serviceUuid, productUuid, r);
      const waiting = (await r.invoices.openOfService(serviceUuid, ['change']))[0];
      if (waiting) throw new HttpError(409, CHANGE_PENDING(waiting.number));
      const base = {
        service_uuid: serviceUuid, from_product_uuid: from, to_product_uuid: productUuid,
        proration: { ...proration, currency: billing.currency, balance: formatMinor(proration.balance_minor, billing.currency) },
      };
      if (proration.balance_minor > 0) {
        const target = (await r.products.get(productUuid))!;
        const plan = target.name || String(target.product_data.plan_type ?? productUuid);
        const row = await r.invoices.createInvoice({
          order_uuid: null, customer_uuid: (await r.periods.billed(serviceUuid))?.customer_uuid ?? null, service_uuid: serviceUuid, kind: 'change',
          change_product_uuid: productUuid, amount_minor: proration.balance_minor, currency: billing.currency, due_date: today(this.deps.clock),
          description: `Plan change to ${plan}: ${proration.days_left} of ${proration.days_total} days${proration.future_cycles ? ` and ${proration.future_cycles} paid cycle(s)` : ''}, prorated`,
        });
        created = row;
        const after = await applyCredit(r, row);
        if (after.amount_minor === 0) await this.periods.settleByCredit(r, after);
        return { ...base, outcome: after.amount_minor === 0 ? 'applied' : 'invoiced', invoice_uuid: row.uuid, credit_minor: 0 };
      }
      const credit = -proration.balance_minor;
      const owner = (await r.periods.billed(serviceUuid))?.customer_uuid ?? null;
      if (credit > 0 && owner) {
        await r.credits.add({ customer_uuid: owner, currency: billing.currency, amount_minor: credit, reason: 'plan_change', service_uuid: serviceUuid, invoice_uuid: null });
      }
      await this.apply(r, billing, productUuid, proration.balance_minor, null);
      return { ...base, outcome: 'applied', invoice_uuid: null, credit_minor: owner ? credit : 0 };
    });
    if (created) this.invoiceCreated(created);
    return answer;
  }

  /**
   * Applies a change (inside a transaction): the service moves to the product and its price, a renewal invoice made at
   * the old price and not yet due is voided and made again, change_package() is queued, `service.plan_changed` emitted.
   */
  private async apply(r: BillingRepos, billing: ServiceBillingRow, productUuid: string, balance: number, invoiceUuid: string | null): Promise<void> {
    const serviceUuid = billing.service_uuid;
    const service = await r.services.get(serviceUuid);
    if (!service) return;
    const price = await r.prices.get(productUuid, billing.billing_cycle);
    await r.services.setProduct(serviceUuid, productUuid);
    await r.periods.setRecurring(serviceUuid, price?.amount_minor ?? billing.recurring_minor);
    const voided = await r.invoices.voidOpen(serviceUuid, ['renewal'], addDays(today(this.deps.clock), 1));
    if (voided.length > 0) await this.periods.remakeRenewal(r, serviceUuid);
    const key = `${serviceUuid}:${invoiceUuid ?? this.deps.clock.now().toISOString()}`;
    await r.outbox.action({ name: 'service_action', payload: { service_uuid: serviceUuid, action: 'change_package', product_uuid: productUuid } }, key);
    await r.outbox.event('service.plan_changed', {
      service_uuid: serviceUuid, product_uuid: productUuid, from_product_uuid: service.product_uuid, module: service.module_name,
      customer_uuid: (await r.periods.billed(serviceUuid))?.customer_uuid ?? null, balance_minor: balance, currency: billing.currency, invoice_uuid: invoiceUuid,
    }, key);
  }
}
