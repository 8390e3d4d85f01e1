// The services a data-cap pass looks at: live VpnProduct services whose plan has a cap, or which carry a cap action in
// force (to lift it when the plan changed), with their panel account and billing period. Reads the platform's tables
// (services, products, service_billing) as the username directory does; platform process only.
import type Database from 'better-sqlite3';
import { addDays, addMonths, periodAround } from '../../../../platform/services/billing/calendar.ts';

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

interface Row {
  service_uuid: string;
  provision_status: string;
  customer_uuid: string | null;
  product_data: string;
  account_name: string | null;
  panel: string | null;
  panel_location: string | null;
  next_due_date: string | null;
  anchor_day: number | null;
}

export class CapDirectory {
  private readonly listStmt;
  private readonly oneStmt;

  constructor(db: Database.Database) {
    const select = `SELECT s.uuid AS service_uuid, s.provision_status, s.customer_uuid, p.product_data,
        json_extract(s.provision_data, '$.account_name') AS account_name, json_extract(s.provision_data, '$.panel') AS panel,
        json_extract(s.provision_data, '$.panel_location') AS panel_location, b.next_due_date, b.anchor_day
      FROM services s JOIN products p ON p.uuid = s.product_uuid LEFT JOIN service_billing b ON b.service_uuid = s.uuid`;
    this.listStmt = db.prepare<[], Row>(`${select}
      WHERE s.module = 'VpnProduct' AND s.provision_status IN ('completed', 'suspended', 'processing')
        AND (CAST(COALESCE(NULLIF(json_extract(p.product_data, '$.data_cap_gb'), ''), 0) AS REAL) > 0
          OR s.uuid IN (SELECT service_uuid FROM vpn_product_caps WHERE applied IS NOT NULL))`);
    this.oneStmt = db.prepare<[string], Row>(`${select} WHERE s.uuid = ?`);
  }

  /** Every service a pass steps. */
  list(): CappedService[] {
    return this.listStmt.all().map(toService);
  }

  /** One service (any state), or null. */
  get(serviceUuid: string): CappedService | null {
    const row = this.oneStmt.get(serviceUuid);
    return row ? toService(row) : null;
  }
}

function toService(row: Row): CappedService {
  let product: Record<string, unknown> = {};
  try {
    product = JSON.parse(row.product_data) as Record<string, unknown>;
  } catch {
    product = {};
  }
  return {
    service_uuid: row.service_uuid, provision_status: row.provision_status, customer_uuid: row.customer_uuid, product_data: product,
    account_name: row.account_name, panel: row.panel ?? row.panel_location ?? null, next_due_date: row.next_due_date, anchor_day: row.anchor_day,
  };
}

/** The end of the days a period's usage sums: its end, or tomorrow when the period is overdue (no new allowance). */
export function countUntil(period: { end: string }, today: string): string {
  const tomorrow = addDays(today, 1);
  return period.end > tomorrow ? period.end : tomorrow;
}

/**
 * The cap period holding `today`: the month of the billing period (stepped back from the paid-through date on the
 * anchor day: a quarterly plan has three monthly allowances); without recurring billing, the calendar month (UTC).
 */
export function capPeriod(service: Pick<CappedService, 'next_due_date' | 'anchor_day'>, today: string): { start: string; end: string } {
  if (service.next_due_date && service.anchor_day) {
    if (today < service.next_due_date) {
      const { start, end } = periodAround(today, service.next_due_date, 'monthly', service.anchor_day);
      return { start, end };
    }
    // Past the paid time (a renewal unpaid): the last paid month goes on, with no new allowance, until a payment.
    return { start: addMonths(service.next_due_date, -1, service.anchor_day), end: service.next_due_date };
  }
  const first = `${today.slice(0, 7)}-01`;
  return { start: first, end: addMonths(first, 1, 1) };
}
