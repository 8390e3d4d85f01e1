// Dunning reads and claims: the open renewal invoices a run looks at, and the steps taken per invoice (billing_steps,
// primary key (invoice, step): a step is claimed by exactly one run however many run at once).
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import type { BillingState } from '../../services/billing/recurring-schema.ts';
import type { Db } from '../db.ts';

/** An open renewal invoice with what dunning needs of its service. */
export interface OpenRenewal {
  invoice_uuid: string;
  invoice_id: number;
  service_uuid: string;
  customer_uuid: string | null;
  product_uuid: string;
  due_date: string;
  amount_minor: number;
  currency: string;
  billing_state: BillingState;
  provision_status: string;
  /** 1 when the customer has a saved payment method. */
  has_method: number;
}

/** Repository of `billing_steps` and the dunning pass's reads. */
export class DunningRepository {
  private readonly claimStmt;
  private readonly openStmt;

  constructor(private readonly db: Db, private readonly clock: Clock = systemClock) {
    this.claimStmt = db.prepare(`INSERT INTO billing_steps (invoice_uuid, step, outcome, created_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (invoice_uuid, step) DO NOTHING`);
    this.openStmt = db.prepare(`SELECT i.uuid AS invoice_uuid, i.id AS invoice_id, i.service_uuid, i.customer_uuid, s.product_uuid, i.due_date,
        i.amount_minor, i.currency, b.state AS billing_state, s.provision_status,
        EXISTS (SELECT 1 FROM payment_methods m WHERE m.customer_uuid = i.customer_uuid) AS has_method
      FROM invoices i INDEXED BY invoices_open_due JOIN service_billing b ON b.service_uuid = i.service_uuid JOIN services s ON s.uuid = i.service_uuid
      WHERE i.status IN ('unpaid', 'failed') AND i.kind = 'renewal' AND i.due_date <= @until AND (i.due_date, i.id) > (@after_due, @after_id)
        AND b.state IN ('active', 'overdue', 'suspended')
      ORDER BY i.due_date, i.id LIMIT @limit`);
  }

  /**
   * Open renewal invoices due on or before `until` of services still billed, in (due date, id) order after `after`
   * (keyset paging over the partial index of open invoices, which is named: the planner would otherwise pick the
   * status index and sort every open invoice for each page).
   */
  openRenewals(until: string, after: { due: string; id: number }, limit: number): OpenRenewal[] {
    return this.openStmt.all({ until, after_due: after.due, after_id: after.id, limit }) as OpenRenewal[];
  }

  /** The steps taken for each of `invoices`. */
  done(invoices: readonly string[]): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>(invoices.map((uuid) => [uuid, new Set<string>()]));
    for (let i = 0; i < invoices.length; i += 500) {
      const part = invoices.slice(i, i + 500);
      const rows = this.db.prepare(`SELECT invoice_uuid, step FROM billing_steps WHERE invoice_uuid IN (${part.map(() => '?').join(', ')})`).all(...part) as Array<{ invoice_uuid: string; step: string }>;
      for (const row of rows) out.get(row.invoice_uuid)!.add(row.step);
    }
    return out;
  }

  /** Claims a step: true for the one caller that took it, false when it was taken before. */
  claim(invoiceUuid: string, step: string, outcome = ''): boolean {
    return this.claimStmt.run(invoiceUuid, step, outcome, this.clock.now().toISOString()).changes === 1;
  }

  /** The steps of one invoice with their outcome (API, tests). */
  steps(invoiceUuid: string): Array<{ step: string; outcome: string; created_at: string }> {
    return this.db.prepare('SELECT step, outcome, created_at FROM billing_steps WHERE invoice_uuid = ? ORDER BY created_at, step').all(invoiceUuid) as never;
  }
}
