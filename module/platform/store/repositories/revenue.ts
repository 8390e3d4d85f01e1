// Revenue figures straight from the ledger tables: money in and out per month and currency (transactions), recurring
// amounts of running subscriptions (service_billing), services started and ended per month, open invoices past due.
import type { Db } from '../db.ts';

export interface MonthMoney {
  month: string;
  currency: string;
  paid_minor: number;
  refunded_minor: number;
}

/** Repository of the revenue queries (read only). */
export class RevenueRepository {
  private readonly moneyStmt;
  private readonly recurringStmt;
  private readonly newStmt;
  private readonly endedStmt;
  private readonly overdueStmt;

  constructor(db: Db) {
    this.moneyStmt = db.prepare(`SELECT substr(created_at, 1, 7) AS month, currency,
        SUM(CASE WHEN kind = 'payment' THEN amount_minor ELSE 0 END) AS paid_minor,
        SUM(CASE WHEN kind = 'refund' THEN amount_minor ELSE 0 END) AS refunded_minor
      FROM transactions WHERE kind IN ('payment', 'refund') AND created_at >= @since GROUP BY month, currency ORDER BY month, currency`);
    this.recurringStmt = db.prepare(`SELECT billing_cycle, currency, SUM(recurring_minor) AS minor, COUNT(*) AS n
      FROM service_billing WHERE state IN ('active', 'overdue') GROUP BY billing_cycle, currency`);
    this.newStmt = db.prepare(`SELECT substr(created_at, 1, 7) AS month, COUNT(*) AS n FROM services WHERE created_at >= @since GROUP BY month`);
    this.endedStmt = db.prepare(`SELECT substr(coalesce(ended_at, cancel_at), 1, 7) AS month, COUNT(*) AS n FROM service_billing
      WHERE state IN ('cancelled', 'terminated') AND coalesce(ended_at, cancel_at) >= @since GROUP BY month`);
    this.overdueStmt = db.prepare(`SELECT currency, SUM(amount_minor) AS minor, COUNT(*) AS n FROM invoices
      WHERE status IN ('unpaid', 'failed') AND due_date < @today GROUP BY currency`);
  }

  /** Payments and refunds per month (`YYYY-MM`) and currency, from `since` (ISO). */
  money(since: string): MonthMoney[] {
    return this.moneyStmt.all({ since }) as MonthMoney[];
  }

  /** Recurring amounts of running (active or overdue) subscriptions per cycle and currency. */
  recurring(): Array<{ billing_cycle: string; currency: string; minor: number; n: number }> {
    return this.recurringStmt.all() as never;
  }

  /** Services created per month from `since`. */
  created(since: string): Array<{ month: string; n: number }> {
    return this.newStmt.all({ since }) as never;
  }

  /** Subscriptions ended (cancelled or terminated) per month from `since`. */
  ended(since: string): Array<{ month: string; n: number }> {
    return this.endedStmt.all({ since }) as never;
  }

  /** Open invoices due before `today` (YYYY-MM-DD) per currency. */
  overdue(today: string): Array<{ currency: string; minor: number; n: number }> {
    return this.overdueStmt.all({ today }) as never;
  }
}
