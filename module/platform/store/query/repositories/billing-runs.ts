// Billing runs over the query layer: one row per run, claimed per schedule slot (UNIQUE slot, INSERT … ON CONFLICT DO
// NOTHING: processes that tick at once queue one run) or made by an admin's "run now"; the task that ran it and its summary.
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import type { QueryStore } from '../query-store.ts';

export interface BillingRunRow {
  id: number;
  slot: string | null;
  trigger: 'schedule' | 'admin';
  task_id: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  summary: Record<string, unknown> | null;
}

type Stored = Omit<BillingRunRow, 'summary' | 'trigger'> & { trigger: string; summary: string | null };
const parse = (row: Stored): BillingRunRow => ({ ...row, trigger: row.trigger as BillingRunRow['trigger'], summary: row.summary ? (JSON.parse(row.summary) as Record<string, unknown>) : null });

/** Repository of `billing_runs`. */
export class BillingRunQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  /** Claims the schedule slot: the run's id for the one caller that made it, null when the slot was taken. */
  async claimSlot(slot: string): Promise<number | null> {
    const row = await this.store.db.insertInto('billing_runs').values({ slot, trigger: 'schedule', created_at: this.clock.now().toISOString() })
      .onConflict((oc) => oc.column('slot').doNothing()).returning('id').executeTakeFirst();
    return row?.id ?? null;
  }

  /** A run an admin asked for. */
  async createManual(): Promise<number> {
    const row = await this.store.db.insertInto('billing_runs').values({ trigger: 'admin', created_at: this.clock.now().toISOString() }).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  async setTask(id: number, taskId: string): Promise<void> {
    await this.store.db.updateTable('billing_runs').set({ task_id: taskId }).where('id', '=', id).execute();
  }

  /** Runs not finished, made between `after` and `before` (those a tick looks at again). */
  async unfinished(after: string, before: string): Promise<Array<{ id: number; task_id: string | null }>> {
    return this.store.db.selectFrom('billing_runs').select(['id', 'task_id']).where('finished_at', 'is', null)
      .where('created_at', '>=', after).where('created_at', '<', before).orderBy('id').execute();
  }

  async started(id: number): Promise<void> {
    await this.store.db.updateTable('billing_runs').set((eb) => ({ started_at: eb.fn.coalesce('started_at', eb.val(this.clock.now().toISOString())) })).where('id', '=', id).execute();
  }

  /** Progress (while running) or the final summary; a finished run's record is never changed again. */
  async record(id: number, summary: Record<string, unknown>, finished: boolean): Promise<void> {
    await this.store.db.updateTable('billing_runs').set({ summary: JSON.stringify(summary), ...(finished ? { finished_at: this.clock.now().toISOString() } : {}) })
      .where('id', '=', id).where('finished_at', 'is', null).execute();
  }

  async get(id: number): Promise<BillingRunRow | null> {
    const row = await this.store.db.selectFrom('billing_runs').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? parse(row) : null;
  }

  /** The newest runs first. */
  async list(limit: number): Promise<BillingRunRow[]> {
    return (await this.store.db.selectFrom('billing_runs').selectAll().orderBy('id', 'desc').limit(limit).execute()).map(parse);
  }
}
