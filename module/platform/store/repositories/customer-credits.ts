// Customer credit: a ledger of credits (a plan downgrade's unused time) and their use by later invoices; the balance
// is the sum per currency. A use is keyed by its invoice, so an invoice consumes credit once.
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import type { Db } from '../db.ts';
import { statement } from '../statement-cache.ts';

export interface CreditEntry {
  id: number;
  customer_uuid: string;
  currency: string;
  /** Positive: credit given; negative: credit used. */
  amount_minor: number;
  /** `plan_change`, `applied`, … */
  reason: string;
  service_uuid: string | null;
  invoice_uuid: string | null;
  created_at: string;
}

/** Repository of `customer_credits`. */
export class CustomerCreditRepository {
  private readonly balanceStmt;

  constructor(private readonly db: Db, private readonly clock: Clock = systemClock) {
    this.balanceStmt = db.prepare('SELECT coalesce(sum(amount_minor), 0) AS n FROM customer_credits WHERE customer_uuid = ? AND currency = ?');
  }

  add(entry: Omit<CreditEntry, 'id' | 'created_at'>): boolean {
    return statement(this.db, `INSERT INTO customer_credits (customer_uuid, currency, amount_minor, reason, service_uuid, invoice_uuid, created_at)
      VALUES (@customer_uuid, @currency, @amount_minor, @reason, @service_uuid, @invoice_uuid, @at) ON CONFLICT DO NOTHING`)
      .run({ ...entry, at: this.clock.now().toISOString() }).changes === 1;
  }

  balance(customerUuid: string, currency: string): number {
    return (this.balanceStmt.get(customerUuid, currency) as { n: number }).n;
  }

  /** The balance per currency and the entries, newest first. */
  of(customerUuid: string): { balances: Record<string, number>; entries: CreditEntry[] } {
    const sums = statement(this.db, 'SELECT currency, sum(amount_minor) AS n FROM customer_credits WHERE customer_uuid = ? GROUP BY currency').all(customerUuid) as Array<{ currency: string; n: number }>;
    const entries = statement(this.db, 'SELECT * FROM customer_credits WHERE customer_uuid = ? ORDER BY id DESC LIMIT 200').all(customerUuid) as CreditEntry[];
    return { balances: Object.fromEntries(sums.map((s) => [s.currency, s.n])), entries };
  }
}
