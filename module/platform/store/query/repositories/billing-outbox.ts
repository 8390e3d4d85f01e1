// The billing outbox over the query layer: events to emit and service actions to queue, written in the transaction
// that decided them and handed out afterwards under a lease (a process that dies mid-way leaves them to the next one).
// Each row has a once-key, so a decision repeated by a second run or a replay is stored once; a claim is a conditional
// UPDATE (the lease re-checked on the row), so processes draining at once take each row once.
import { sql } from 'kysely';
import type { QueryStore } from '../query-store.ts';

export type OutboxKind = 'event' | 'action';

export interface OutboxRow {
  id: number;
  kind: OutboxKind;
  name: string;
  payload: Record<string, unknown>;
  once_key: string;
  attempts: number;
  created_at: string;
}

/** A row to add: what it carries, its once-key and when it was decided. */
export type NewOutboxRow = Pick<OutboxRow, 'kind' | 'name' | 'payload' | 'once_key' | 'created_at'>;

const PART = 500;

/** Repository of `billing_outbox`. */
export class BillingOutboxQueries {
  constructor(private readonly store: QueryStore) {}

  /** Adds a row unless its once-key exists; true when added. Call inside the deciding transaction. */
  async add(kind: OutboxKind, name: string, payload: Record<string, unknown>, onceKey: string, at: string): Promise<boolean> {
    return (await this.addMany([{ kind, name, payload, once_key: onceKey, created_at: at }])) === 1;
  }

  /**
   * Adds rows in the order given (one multi-row INSERT per 500), each unless its once-key exists; answers how many were
   * added. Call inside the deciding transaction.
   */
  async addMany(rows: readonly NewOutboxRow[]): Promise<number> {
    let added = 0;
    for (let i = 0; i < rows.length; i += PART) {
      const result = await this.store.db.insertInto('billing_outbox')
        .values(rows.slice(i, i + PART).map((r) => ({ kind: r.kind, name: r.name, payload: JSON.stringify(r.payload), once_key: r.once_key, created_at: r.created_at })))
        .onConflict((oc) => oc.column('once_key').doNothing()).executeTakeFirst();
      added += Number(result.numInsertedOrUpdatedRows ?? 0);
    }
    return added;
  }

  /** Claims up to `limit` open rows for `leaseMs` (a row whose lease ran out is claimable again), oldest first. */
  async claim(limit: number, nowMs: number, leaseMs: number): Promise<OutboxRow[]> {
    const claimable = sql<boolean>`done_at IS NULL AND (claimed_until IS NULL OR claimed_until < ${nowMs})`;
    const rows = await this.store.db.updateTable('billing_outbox')
      .set((eb) => ({ claimed_until: nowMs + leaseMs, attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', (eb) => eb.selectFrom('billing_outbox').select('id').where(claimable).orderBy('id').limit(limit))
      // Checked again on the row itself: on PostgreSQL a second process whose subquery saw the row open skips it once
      // the first one's claim is committed.
      .where(claimable)
      .returning(['id', 'kind', 'name', 'payload', 'once_key', 'attempts', 'created_at']).execute();
    return rows.sort((a, b) => a.id - b.id).map((r) => ({ ...r, kind: r.kind as OutboxKind, payload: JSON.parse(r.payload) as Record<string, unknown> }));
  }

  /** Marks rows handled. */
  async done(ids: readonly number[], at: string): Promise<void> {
    for (let i = 0; i < ids.length; i += PART) {
      await this.store.db.updateTable('billing_outbox').set({ done_at: at, claimed_until: null }).where('id', 'in', ids.slice(i, i + PART)).execute();
    }
  }

  /** A row that failed: tried again once `retryAtMs` passed, or closed with the error when `final`. */
  async failed(id: number, error: string, retryAtMs: number, final: boolean, at: string): Promise<void> {
    await this.store.db.updateTable('billing_outbox').set({ last_error: error.slice(0, 500), claimed_until: retryAtMs, done_at: final ? at : null }).where('id', '=', id).execute();
  }

  /** Rows not handled yet. */
  async pending(): Promise<number> {
    const { n } = await this.store.db.selectFrom('billing_outbox').select((eb) => eb.fn.countAll<number>().as('n')).where('done_at', 'is', null).executeTakeFirstOrThrow();
    return Number(n);
  }
}
