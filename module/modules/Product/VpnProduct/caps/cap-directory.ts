// The services a data-cap pass looks at: live VpnProduct services whose plan has a cap, or which carry a cap action in
// force (to lift it when the plan changed), with their panel account and billing period. Reads platform data through
// the host's read API (services, products, billing), as the username directory does; platform process only.
import type { BillingCalendar, PlatformReads } from '../../../../contract/platform-reads.ts';

/** One service as the pass sees it. */
export interface CappedService {
  service_uuid: string;
  provision_status: string;
  customer_uuid: string | null;
  product_data: Record<string, unknown>;
  account_name: string | null;
  /** The panel holding the account (its name, else its location). */
  panel: string | null;
  /** Recurring billing: the paid-through date and the anchor day (null without billing or before the first payment). */
  next_due_date: string | null;
  anchor_day: number | null;
}

/** Provision statuses a pass steps. */
const STEPPED = ['completed', 'suspended', 'processing'];

/** Over the host's read API of platform data, and the pass's own record of the services carrying a cap action. */
export class CapDirectory {
  constructor(private readonly platform: PlatformReads, private readonly withAction: () => Promise<string[]>) {}

  /** Every service a pass steps: capped plans, and services still carrying an action (to lift it when the plan changed). */
  async list(): Promise<CappedService[]> {
    const capped = await this.platform.serviceUuids({ module: 'VpnProduct', statuses: STEPPED, productNumberAbove: { data_cap_gb: 0 } });
    const uuids = [...new Set([...capped, ...(await this.withAction())])];
    const services = await Promise.all(uuids.map((uuid) => this.get(uuid)));
    return services.filter((s): s is CappedService => s !== null && STEPPED.includes(s.provision_status));
  }

  /** One VpnProduct service (any state), or null. */
  async get(serviceUuid: string): Promise<CappedService | null> {
    const service = await this.platform.service(serviceUuid);
    if (!service || service.module !== 'VpnProduct') return null;
    const product = await this.platform.product(service.product_uuid);
    if (!product) return null;
    const provision = service.provision_data;
    const text = (value: unknown) => (typeof value === 'string' ? value : null);
    return {
      service_uuid: service.uuid, provision_status: service.provision_status, customer_uuid: service.customer_uuid, product_data: product.product_data,
      account_name: text(provision.account_name), panel: text(provision.panel) ?? text(provision.panel_location),
      next_due_date: service.next_due_date, anchor_day: service.anchor_day,
    };
  }
}

/** The end of the days a period's usage sums: its end, or tomorrow when the period is overdue (no new allowance). */
export function countUntil(period: { end: string }, today: string, calendar: BillingCalendar): string {
  const tomorrow = calendar.addDays(today, 1);
  return period.end > tomorrow ? period.end : tomorrow;
}

/**
 * The cap period holding `today`: the month of the billing period (stepped back from the paid-through date on the
 * anchor day: a quarterly plan has three monthly allowances); without recurring billing, the calendar month (UTC).
 */
export function capPeriod(service: Pick<CappedService, 'next_due_date' | 'anchor_day'>, today: string, calendar: BillingCalendar): { start: string; end: string } {
  if (service.next_due_date && service.anchor_day) {
    if (today < service.next_due_date) return calendar.monthAround(today, service.next_due_date, service.anchor_day);
    // Past the paid time (a renewal unpaid): the last paid month goes on, with no new allowance, until a payment.
    return { start: calendar.addMonths(service.next_due_date, -1, service.anchor_day), end: service.next_due_date };
  }
  const first = `${today.slice(0, 7)}-01`;
  return { start: first, end: calendar.addMonths(first, 1, 1) };
}
