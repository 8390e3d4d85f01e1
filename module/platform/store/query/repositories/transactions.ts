// Transactions of invoices (payments, failed attempts, refunds) and the gateway events already handled, over the query
// layer. Each event id is claimed once per gateway (the primary key of payment_events, INSERT … ON CONFLICT DO NOTHING):
// a webhook delivered twice, or to two processes at once, is handled by one of them.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import type { TransactionKind } from '../../../services/billing/schema.ts';
import type { QueryStore } from '../query-store.ts';

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

/** A handled gateway event. */
export interface PaymentEvent {
  event_id: string;
  type: string;
  outcome: string;
  invoice_uuid: string | null;
  created_at: string;
}

/** Transactions of one time stamp in the order they happen: a failed attempt, the payment, its refunds. */
const KIND_ORDER = sql`CASE kind WHEN 'failure' THEN 0 WHEN 'payment' THEN 1 ELSE 2 END`;

/** Repository of `transactions` and `payment_events`. */
export class TransactionQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  async insert(input: NewTransaction): Promise<TransactionRow> {
    const row: TransactionRow = {
      gateway_uuid: null, external_id: null, parent_uuid: null, note: '', ...input,
      uuid: randomUUID(), refunded_minor: 0, created_at: this.clock.now().toISOString(),
    };
    await this.store.db.insertInto('transactions').values(row).execute();
    return row;
  }

  async get(uuid: string): Promise<TransactionRow | null> {
    return ((await this.store.db.selectFrom('transactions').selectAll().where('uuid', '=', uuid).executeTakeFirst()) as TransactionRow | undefined) ?? null;
  }

  async forInvoice(invoiceUuid: string): Promise<TransactionRow[]> {
    return (await this.store.db.selectFrom('transactions').selectAll().where('invoice_uuid', '=', invoiceUuid)
      .orderBy('created_at').orderBy(KIND_ORDER).orderBy('uuid').execute()) as TransactionRow[];
  }

  /** Adds to a payment's refunded total, unless that would pass what was paid; false then. */
  async addRefunded(uuid: string, amountMinor: number): Promise<boolean> {
    const result = await this.store.db.updateTable('transactions').set((eb) => ({ refunded_minor: eb('refunded_minor', '+', amountMinor) }))
      .where('uuid', '=', uuid).where((eb) => eb(eb('refunded_minor', '+', amountMinor), '<=', eb.ref('amount_minor'))).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Claims a gateway event id: true for the one caller that took it, false when it was taken before (call inside the transaction). */
  async claimEvent(gatewayUuid: string, eventId: string, type: string): Promise<boolean> {
    const result = await this.store.db.insertInto('payment_events')
      .values({ gateway_uuid: gatewayUuid, event_id: eventId, type, outcome: 'claimed', invoice_uuid: null, created_at: this.clock.now().toISOString() })
      .onConflict((oc) => oc.columns(['gateway_uuid', 'event_id']).doNothing()).executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /** Records what handling the claimed event did (`paid`, `mismatch`, ...). */
  async settleEvent(gatewayUuid: string, eventId: string, outcome: string, invoiceUuid: string | null): Promise<void> {
    await this.store.db.updateTable('payment_events').set({ outcome, invoice_uuid: invoiceUuid }).where('gateway_uuid', '=', gatewayUuid).where('event_id', '=', eventId).execute();
  }

  /** Events handled for a gateway (tests, audits). */
  async events(gatewayUuid: string): Promise<PaymentEvent[]> {
    return this.store.db.selectFrom('payment_events').select(['event_id', 'type', 'outcome', 'invoice_uuid', 'created_at'])
      .where('gateway_uuid', '=', gatewayUuid).orderBy('created_at').orderBy('event_id').execute();
  }
}
