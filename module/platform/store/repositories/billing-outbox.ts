// The billing outbox: events to emit and service actions to queue, written in the transaction that decided them and
// handed out afterwards under a lease (a process that dies mid-way leaves them to the next one). Each row has a
// once-key, so a decision repeated by a second run or a replay is stored once.
import type { Db } from '../db.ts';

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

/** Repository of `billing_outbox`. */
export class BillingOutboxRepository {
  private readonly addStmt;
  private readonly claimStmt;

  constructor(private readonly db: Db) {
    this.addStmt = db.prepare(`INSERT INTO billing_outbox (kind, name, payload, once_key, created_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (once_key) DO NOTHING`);
    this.claimStmt = db.prepare(`UPDATE billing_outbox SET claimed_until = @until, attempts = attempts + 1
      WHERE id IN (SELECT id FROM billing_outbox WHERE done_at IS NULL AND (claimed_until IS NULL OR claimed_until < @now) ORDER BY id LIMIT @limit)
      RETURNING id, kind, name, payload, once_key, attempts, created_at`);
  }

  /** Adds a row unless its once-key exists; true when added. Call inside the deciding transaction. */
  add(kind: OutboxKind, name: string, payload: Record<string, unknown>, onceKey: string, at: string): boolean {
    return this.addStmt.run(kind, name, JSON.stringify(payload), onceKey, at).changes === 1;
  }

  /** Claims up to `limit` open rows for `leaseMs` (a row whose lease ran out is claimable again), oldest first. */
  claim(limit: number, nowMs: number, leaseMs: number): OutboxRow[] {
    const rows = this.claimStmt.all({ limit, now: nowMs, until: nowMs + leaseMs }) as Array<Omit<OutboxRow, 'payload'> & { payload: string }>;
    return rows.sort((a, b) => a.id - b.id).map((r) => ({ ...r, payload: JSON.parse(r.payload) as Record<string, unknown> }));
  }

  /** Marks rows handled. */
  done(ids: readonly number[], at: string): void {
    for (let i = 0; i < ids.length; i += 500) {
      const part = ids.slice(i, i + 500);
      this.db.prepare(`UPDATE billing_outbox SET done_at = ?, claimed_until = NULL WHERE id IN (${part.map(() => '?').join(', ')})`).run(at, ...part);
    }
  }

  /** A row that failed: tried again once `retryAtMs` passed, or closed with the error when `final`. */
  failed(id: number, error: string, retryAtMs: number, final: boolean, at: string): void {
    this.db.prepare('UPDATE billing_outbox SET last_error = ?, claimed_until = ?, done_at = ? WHERE id = ?').run(error.slice(0, 500), retryAtMs, final ? at : null, id);
  }

  /** Rows not handled yet. */
  pending(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM billing_outbox WHERE done_at IS NULL').get() as { n: number }).n;
  }
}
