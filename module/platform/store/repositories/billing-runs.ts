// Billing runs: one row per run, claimed per schedule slot (UNIQUE slot: processes that tick at once queue one run)
// or made by an admin's "run now"; the task that ran it and its summary.
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import type { Db } from '../db.ts';

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

type Stored = Omit<BillingRunRow, 'summary'> & { summary: string | null };
const parse = (row: Stored): BillingRunRow => ({ ...row, summary: row.summary ? (JSON.parse(row.summary) as Record<string, unknown>) : null });

/** Repository of `billing_runs`. */
export class BillingRunRepository {
  constructor(private readonly db: Db, private readonly clock: Clock = systemClock) {}

  /** Claims the schedule slot: the run's id for the one caller that made it, null when the slot was taken. */
  claimSlot(slot: string): number | null {
    const row = this.db.prepare(`INSERT INTO billing_runs (slot, trigger, created_at) VALUES (?, 'schedule', ?) ON CONFLICT (slot) DO NOTHING RETURNING id`)
      .get(slot, this.clock.now().toISOString()) as { id: number } | undefined;
    return row?.id ?? null;
  }

  /** A run an admin asked for. */
  createManual(): number {
    return Number(this.db.prepare(`INSERT INTO billing_runs (trigger, created_at) VALUES ('admin', ?)`).run(this.clock.now().toISOString()).lastInsertRowid);
  }

  setTask(id: number, taskId: string): void {
    this.db.prepare('UPDATE billing_runs SET task_id = ? WHERE id = ?').run(taskId, id);
  }

  /** Runs not finished, made between `after` and `before` (those a tick looks at again). */
  unfinished(after: string, before: string): Array<{ id: number; task_id: string | null }> {
    return this.db.prepare('SELECT id, task_id FROM billing_runs WHERE finished_at IS NULL AND created_at >= ? AND created_at < ? ORDER BY id').all(after, before) as never;
  }

  started(id: number): void {
    this.db.prepare('UPDATE billing_runs SET started_at = coalesce(started_at, ?) WHERE id = ?').run(this.clock.now().toISOString(), id);
  }

  /** Progress (while running) or the final summary. */
  record(id: number, summary: Record<string, unknown>, finished: boolean): void {
    this.db.prepare('UPDATE billing_runs SET summary = ?, finished_at = CASE WHEN ? THEN ? ELSE finished_at END WHERE id = ?')
      .run(JSON.stringify(summary), finished ? 1 : 0, this.clock.now().toISOString(), id);
  }

  get(id: number): BillingRunRow | null {
    const row = this.db.prepare('SELECT * FROM billing_runs WHERE id = ?').get(id) as Stored | undefined;
    return row ? parse(row) : null;
  }

  /** The newest runs first. */
  list(limit: number): BillingRunRow[] {
    return (this.db.prepare('SELECT * FROM billing_runs ORDER BY id DESC LIMIT ?').all(limit) as Stored[]).map(parse);
  }
}
