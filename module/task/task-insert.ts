// The write order of task inserts: what an insert reads before it takes the write-order counter, and the check, once
// it holds the counter, that nothing written meanwhile changes what it decided (see TaskStore.insert).
import type { Kysely } from 'kysely';
import { NEXT_SEQ, SEQ_KEY } from './task-order.ts';
import type { TaskTables } from './task-schema.ts';

const RUNNABLE = ['pending', 'processing'] as const;

/** An insert whose decision a record written meanwhile may change: its transaction is rolled back and run again. */
export class InsertRaced extends Error {
  constructor() {
    super('a record of the same service or input was written meanwhile');
  }
}

/** What an insert decides on, read in one statement (one snapshot): the counter's value and the newest identical runnable record. */
export interface BeforeInsert {
  /** The write-order counter as read (the seq of the newest record written). */
  seen: number;
  newest: { id: string; seq: number } | undefined;
}

/** The counter and the newest `pending`/`processing` record with dedupe key `key`, from one snapshot. */
export async function readBeforeInsert(db: Kysely<TaskTables>, key: string): Promise<BeforeInsert> {
  const identical = () => db.selectFrom('tasks').where('dedupe_key', '=', key).where('status', 'in', RUNNABLE).orderBy('seq', 'desc').limit(1);
  const row = await db.selectFrom('task_meta').where('key', '=', SEQ_KEY)
    .select((eb) => ['value', identical().select('id').as('newest_id'), identical().select('seq').as('newest_seq')])
    .executeTakeFirstOrThrow();
  const newest = row.newest_id === null || row.newest_seq === null ? undefined : { id: row.newest_id, seq: Number(row.newest_seq) };
  return { seen: Number(row.value), newest };
}

/**
 * Takes the next write-order number for record `id` (inserted with `seen + 1`, the number it gets when nothing was
 * written since it read) and holds the counter — a row lock on PostgreSQL — until the transaction ends, so records
 * commit in write order. When other records were written between the read and now, the number is set only if none of
 * them shares the dedupe key or a `service:` tag (they could change whether this one is a duplicate); otherwise
 * InsertRaced.
 */
export async function takeWriteOrder(db: Kysely<TaskTables>, id: string, before: BeforeInsert, key: string, serial: string[]): Promise<number> {
  const counter = await db.updateTable('task_meta').set({ value: NEXT_SEQ }).where('key', '=', SEQ_KEY).returning('value').executeTakeFirstOrThrow();
  const seq = Number(counter.value);
  if (seq === before.seen + 1) return seq;
  const meanwhile = db.selectFrom('tasks as t').select('t.id').where('t.id', '<>', id).where('t.seq', '>', before.seen).where('t.seq', '<', seq)
    .where((eb) => eb.or([
      eb('t.dedupe_key', '=', key),
      ...(serial.length > 0 ? [eb('t.id', 'in', db.selectFrom('task_tags').select('task_id').where('tag', 'in', serial))] : []),
    ]));
  const set = await db.updateTable('tasks').set({ seq }).where('id', '=', id).where((eb) => eb.not(eb.exists(meanwhile))).returning('id').executeTakeFirst();
  if (!set) throw new InsertRaced();
  return seq;
}
