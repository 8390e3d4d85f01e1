// Transactions of invoices (payments, failed attempts, refunds) and the gateway events already handled (each event id
// once per gateway: the primary key of payment_events is the idempotency guard).
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import type { TransactionKind } from '../../services/billing/schema.ts';
import type { Db } from '../db.ts';
import { statement } from '../statement-cache.ts';

export interface TransactionRow {
  uuid: string;
  invoice_uuid: string;
  kind: TransactionKind;
  /** `manual`, or the Payment module's name. */
  gateway: string;
  gateway_uuid: string | null;
  /** The gateway's id (PaymentIntent, refund) or the admin's reference of a manual payment. */
  external_id: string | null;
  /** A refund's payment. */
  parent_uuid: string | null;
  amount_minor: number;
  currency: string;
  refunded_minor: number;
  note: string;
  created_at: string;
}

export type NewTransaction = Omit<TransactionRow, 'uuid' | 'created_at' | 'refunded_minor' | 'gateway_uuid' | 'external_id' | 'parent_uuid' | 'note'> &
  Partial<Pick<TransactionRow, 'gateway_uuid' | 'external_id' | 'parent_uuid' | 'note'>>;

/** Repository of `transactions` and `payment_events`. */
export class TransactionRepository {
  private readonly claimStmt;

  constructor(private readonly db: Db, private readonly clock: Clock = systemClock) {
    this.claimStmt = db.prepare(`INSERT INTO payment_events (gateway_uuid, event_id, type, outcome, created_at) VALUES (?, ?, ?, 'claimed', ?)
      ON CONFLICT (gateway_uuid, event_id) DO NOTHING`);
  }

  insert(input: NewTransaction): TransactionRow {
    const row: TransactionRow = {
      gateway_uuid: null, external_id: null, parent_uuid: null, note: '', ...input,
      uuid: randomUUID(), refunded_minor: 0, created_at: this.clock.now().toISOString(),
    };
    statement(this.db, `INSERT INTO transactions (uuid, invoice_uuid, kind, gateway, gateway_uuid, external_id, parent_uuid, amount_minor, currency, refunded_minor, note, created_at)
        VALUES (@uuid, @invoice_uuid, @kind, @gateway, @gateway_uuid, @external_id, @parent_uuid, @amount_minor, @currency, @refunded_minor, @note, @created_at)`)
      .run(row);
    return row;
  }

  get(uuid: string): TransactionRow | null {
    return (statement(this.db, 'SELECT * FROM transactions WHERE uuid = ?').get(uuid) as TransactionRow | undefined) ?? null;
  }

  forInvoice(invoiceUuid: string): TransactionRow[] {
    return statement(this.db, 'SELECT * FROM transactions WHERE invoice_uuid = ? ORDER BY created_at, rowid').all(invoiceUuid) as TransactionRow[];
  }

  addRefunded(uuid: string, amountMinor: number): void {
    statement(this.db, 'UPDATE transactions SET refunded_minor = refunded_minor + ? WHERE uuid = ?').run(amountMinor, uuid);
  }

  /** Claims a gateway event id: true the first time, false when it was handled before (call inside the transaction). */
  claimEvent(gatewayUuid: string, eventId: string, type: string): boolean {
    return this.claimStmt.run(gatewayUuid, eventId, type, this.clock.now().toISOString()).changes === 1;
  }

  /** Records what handling the claimed event did (`paid`, `mismatch`, ...). */
  settleEvent(gatewayUuid: string, eventId: string, outcome: string, invoiceUuid: string | null): void {
    statement(this.db, 'UPDATE payment_events SET outcome = ?, invoice_uuid = ? WHERE gateway_uuid = ? AND event_id = ?').run(outcome, invoiceUuid, gatewayUuid, eventId);
  }

  /** Events handled for a gateway (tests, audits). */
  events(gatewayUuid: string): Array<{ event_id: string; type: string; outcome: string; invoice_uuid: string | null; created_at: string }> {
    return statement(this.db, 'SELECT event_id, type, outcome, invoice_uuid, created_at FROM payment_events WHERE gateway_uuid = ? ORDER BY created_at, rowid').all(gatewayUuid) as never;
  }
}
