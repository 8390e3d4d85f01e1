// Task records in the platform store (SQLite or PostgreSQL, through the query layer): redacted input for display, sealed
// raw input for the worker, dedupe-on-insert, conditional claims with leases, settlement of attempts, crash recovery.
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { REDACTED, SECRET_KEY_PATTERN, redact, redactText } from '../contract/redact.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { systemClock, type Clock } from '../../shared/clock.ts';
import { lockedRows } from '../store-kernel/row-locks.ts';
import { LOST_WORKER_ERROR, type Settlement } from './attempt.ts';
import { canonicalJson, dedupeKey, normaliseTags } from './canonical.ts';
import { TaskEvents, type TaskEventContext } from './events.ts';
import type { TaskAdded, TaskFilter, TaskOptions, TaskRecord } from './queue.ts';
import { serialTags } from './tags.ts';
import { BLOCKED, type ClaimedTask, type TaskBackend, type TaskInsert, type TaskRecordStore } from './task-record-store.ts';
import { duplicateOriginal, lockInsertOrder } from './task-insert.ts';
import { waitsForEarlier } from './task-order.ts';
import { insertTask, SETTLE, START_ATTEMPT, START_GENERATION } from './task-statements.ts';
import { taskTables, toRecord, type TaskQueryStore, type TaskRow } from './task-schema.ts';

export { migrateTaskStore } from './task-schema.ts';
export type { ClaimedTask, TaskBackend } from './task-record-store.ts';

const INPUT_UNREADABLE_ERROR = 'Task input cannot be opened';
export const SECRET_NEEDS_BOX_ERROR = 'Task input holds secrets but no SecretBox was configured to seal them';

const RUNNABLE = ['pending', 'processing'] as const;

/**
 * Storage of task records. Secrets: the `input` column is always the redacted input (what the platform shows);
 * when the input holds secret-named members, the unredacted input is kept in `raw_input`, sealed with the
 * SecretBox (AES-256-GCM), and only workers open it. Without a SecretBox such input is refused.
 *
 * Every state change is one conditional write (on status and worker id) in a transaction of the store, so any number
 * of processes on one SQLite file or one PostgreSQL database may share the records. The events of a change are raised
 * inside its transaction (`TaskEventContext.tx`).
 */
export class TaskStore<S extends TaskQueryStore = TaskQueryStore> implements TaskRecordStore {
  private ready: Promise<Buffer | undefined> | null = null;
  /** Every change of a record made through this store (by a local queue or a remote worker's API call). */
  readonly events = new TaskEvents<S>();

  /** @param clock the time of records (run_at, leases, timestamps); the platform's clock. */
  constructor(private readonly store: S, private readonly box?: SecretBox, readonly clock: Clock = systemClock) {}

  /** The clock's time in epoch milliseconds (available_at and lease_until are stored so). */
  now(): number {
    return this.clock.now().getTime();
  }

  /**
   * Once per store: the dedupe keys' HMAC key (32 random bytes sealed in task_meta, shared by every process of the
   * store); the first writer wins.
   */
  private prepare(): Promise<Buffer | undefined> {
    this.ready ??= (async () => {
      if (!this.box) return undefined;
      const db = taskTables(this.store);
      await db.insertInto('task_meta').values({ key: 'dedupe_pepper', value: this.box.seal(randomBytes(32).toString('hex')) })
        .onConflict((oc) => oc.column('key').doNothing()).execute();
      const row = await db.selectFrom('task_meta').select('value').where('key', '=', 'dedupe_pepper').executeTakeFirstOrThrow();
      return Buffer.from(this.box.open(row.value), 'hex');
    })();
    this.ready.catch(() => (this.ready = null));
    return this.ready;
  }

  /** Runs `work` in one transaction; functions handed to `afterCommit` run once it committed. */
  private async transaction<T>(work: (tx: S, context: TaskEventContext<S>) => Promise<T>): Promise<T> {
    const after: Array<() => void> = [];
    const result = await this.store.transaction((tx) => work(tx, { tx, afterCommit: (fn) => void after.push(fn) }));
    for (const fn of after) fn();
    return result;
  }

  /**
   * Inserts a task; when an identical one (job, queue, input, tag set) is pending or processing and no task of the
   * same service (`service:` tag) was queued since (e.g. `unsuspend` between two `suspend`s), the new record is
   * `duplicate` and names the original. The transaction first takes the insert-order locks of the task's services and
   * dedupe key (task-insert.ts): inserts of one service or one input are decided, numbered and committed one after the
   * other; inserts of different services run side by side.
   */
  async insert(task: TaskInsert): Promise<TaskAdded> {
    const shown = redact(task.input);
    const shownJson = JSON.stringify(shown);
    const rawJson = JSON.stringify(task.input);
    let sealed: string | null = null;
    if (shownJson !== rawJson) {
      if (!this.box) throw new Error(SECRET_NEEDS_BOX_ERROR);
      sealed = this.box.seal(rawJson);
    }
    const pepper = await this.prepare();
    const tags = normaliseTags(task.tags);
    const key = dedupeKey(task.job, task.queue, task.input, tags, pepper);
    const id = randomUUID();
    const now = this.now();
    const iso = new Date(now).toISOString();
    const serial = serialTags(tags);
    return this.transaction(async (tx, context) => {
      const db = taskTables(tx);
      await lockInsertOrder(db, tx.engine, [...serial, `dedupe:${key}`]);
      const original = await duplicateOriginal(tx, key, serial);
      const status = original ? 'duplicate' : 'pending';
      const inserted = await insertTask(tx, {
        id, backend: task.backend, job: task.job, queue: task.queue, input: shownJson, rawInput: sealed, tags: JSON.stringify(tags), status,
        options: canonicalJson(task.options), dedupeKey: key, duplicateOf: original ?? null, availableAt: now, at: iso, finishedAt: original ? iso : null,
      }, tags);
      if (status === 'pending') await this.events.emit({ type: 'queued', task: toRecord(inserted), requeued: false }, context);
      return { id, status };
    });
  }

  async get(id: string): Promise<TaskRecord | null> {
    const row = await this.row(this.store, id);
    return row ? toRecord(row) : null;
  }

  private row(store: TaskQueryStore, id: string): Promise<TaskRow | undefined> {
    return taskTables(store).selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Newest first; `tag` uses the tag index (e.g. `service:<uuid>`). */
  async list(filter: TaskFilter = {}): Promise<TaskRecord[]> {
    const db = taskTables(this.store);
    let query = db.selectFrom('tasks').selectAll();
    if (filter.tag !== undefined) query = query.where('id', 'in', db.selectFrom('task_tags').select('task_id').where('tag', '=', filter.tag));
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.queue !== undefined) query = query.where('queue', '=', filter.queue);
    const rows = await query.orderBy('created_at', 'desc').orderBy('seq', 'desc').limit(filter.limit ?? 100).execute();
    return rows.map(toRecord);
  }

  /** The unredacted input of a record (opens the sealed copy when there is one). */
  rawInput(row: Pick<TaskRow, 'input' | 'raw_input'>): Record<string, unknown> {
    if (row.raw_input === null) return JSON.parse(row.input) as Record<string, unknown>;
    if (!this.box) throw new Error(SECRET_NEEDS_BOX_ERROR);
    return JSON.parse(this.box.open(row.raw_input)) as Record<string, unknown>;
  }

  /** Pairs a claimed row with its raw input; a record whose sealed input cannot be opened fails (null). */
  private async claimed(row: TaskRow): Promise<ClaimedTask | null> {
    try {
      return { record: toRecord(row), rawInput: this.rawInput(row) };
    } catch (error) {
      await this.fail(row.id, `${INPUT_UNREADABLE_ERROR}: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
  }

  /**
   * Takes the next due `pending` task of `backend` in one conditional UPDATE … RETURNING, leasing it to `workerId`; a
   * task waiting for an earlier one of its service is passed over. On PostgreSQL the candidate row is locked with SKIP
   * LOCKED, so concurrent claimers take different tasks; on SQLite the one writer decides. Either way one claimer wins
   * a task.
   */
  async claimNext(backend: TaskBackend, workerId: string, leaseMs: number, queues?: string[]): Promise<ClaimedTask | null> {
    const db = taskTables(this.store);
    const { engine } = this.store;
    const now = this.now();
    // A read first: idle polls then never take a write lock.
    const due = await db.selectFrom('tasks').select('id').where('backend', '=', backend).where('status', '=', 'pending')
      .where('available_at', '<=', now).limit(1).executeTakeFirst();
    if (!due) return null;
    if (queues !== undefined && queues.length === 0) return null;
    let candidate = db.selectFrom('tasks as c').select('c.id').where('c.backend', '=', backend).where('c.status', '=', 'pending')
      .where('c.available_at', '<=', now).where((eb) => eb.not(waitsForEarlier('c')));
    if (queues !== undefined) candidate = candidate.where('c.queue', 'in', queues);
    candidate = lockedRows(engine, candidate.orderBy('c.available_at').orderBy('c.seq').limit(1), { skipLocked: true });
    const row = await db.updateTable('tasks')
      .set((eb) => ({ status: 'processing', attempts: eb('attempts', '+', 1), worker_id: workerId, lease_until: now + leaseMs, updated_at: new Date(now).toISOString() }))
      .where('id', '=', candidate).where('status', '=', 'pending').returningAll().executeTakeFirst();
    if (!row) return null;
    return (await this.claimed(row)) ?? this.claimNext(backend, workerId, leaseMs, queues);
  }

  /**
   * Starts an attempt of a record scheduled elsewhere (BullMQ). A record still `processing` means its previous
   * attempt's worker died: that attempt counts as failed, and the task fails when no tries are left.
   * Returns null when the record is gone, already final, of another generation than `retries` (when given: a job of
   * an earlier `retry`), or was just failed for want of tries; `blocked` while an earlier task of its service is
   * unfinished.
   *
   * The usual case — a `pending` record with nothing earlier of its service unfinished — is one conditional
   * UPDATE … RETURNING (of concurrent starters, the one whose UPDATE sees `pending` wins). Anything else is decided in
   * a transaction with the record's row locked (PostgreSQL).
   */
  async beginAttempt(id: string, workerId: string, leaseMs: number, retries?: number): Promise<ClaimedTask | typeof BLOCKED | null> {
    const now = this.now();
    const start = { id, workerId, leaseUntil: now + leaseMs, at: new Date(now).toISOString() };
    const started = retries === undefined ? await START_ATTEMPT.first(this.store, start) : await START_GENERATION.first(this.store, { ...start, retries });
    if (started) return this.claimed(started);
    return this.beginAttemptLocked(id, workerId, leaseMs, retries);
  }

  /** `beginAttempt`'s other cases (blocked, lost worker, final, gone), decided on the locked row. */
  private async beginAttemptLocked(id: string, workerId: string, leaseMs: number, retries?: number): Promise<ClaimedTask | typeof BLOCKED | null> {
    const row = await this.transaction(async (tx, context): Promise<TaskRow | typeof BLOCKED | null> => {
      const current = await lockedRows(tx.engine, taskTables(tx).selectFrom('tasks').selectAll().where('id', '=', id)).executeTakeFirst();
      if (!current || (current.status !== 'pending' && current.status !== 'processing')) return null;
      if (retries !== undefined && current.retries !== retries) return null;
      const blocked = await taskTables(tx).selectFrom('tasks as c').select('c.id').where('c.id', '=', id).where(waitsForEarlier('c')).executeTakeFirst();
      if (blocked) return BLOCKED;
      const now = this.now();
      const iso = new Date(now).toISOString();
      const options = JSON.parse(current.options) as TaskOptions;
      const unchanged = taskTables(tx).updateTable('tasks').where('id', '=', id).where('status', '=', current.status).where('attempts', '=', current.attempts);
      if (current.status === 'processing' && current.attempts >= options.tries) {
        const failed = await unchanged.set({ status: 'failed', last_error: LOST_WORKER_ERROR, lease_until: null, updated_at: iso, finished_at: iso })
          .returningAll().executeTakeFirst();
        if (failed) await this.events.emitChange(toRecord(failed), context);
        return null;
      }
      const lost = current.status === 'processing';
      // The previous attempt's worker died with tries left: that attempt failed and this one is its retry.
      if (lost) {
        await this.events.emit({ type: 'retrying', task: { ...toRecord(current), status: 'pending', lastError: LOST_WORKER_ERROR }, error: LOST_WORKER_ERROR }, context);
      }
      const started = await unchanged.set((eb) => ({
        status: 'processing', attempts: eb('attempts', '+', 1), worker_id: workerId, lease_until: now + leaseMs, updated_at: iso,
        ...(lost ? { last_error: LOST_WORKER_ERROR } : {}),
      })).returningAll().executeTakeFirst();
      return started ?? null;
    });
    return row === BLOCKED ? BLOCKED : row ? this.claimed(row) : null;
  }

  /** Applies the outcome of an attempt, only if `workerId` still holds the record. Returns the updated record. */
  async settle(id: string, workerId: string, settlement: Settlement): Promise<TaskRecord | null> {
    let secrets: string[] = [];
    if (settlement.lastError !== null) {
      // Only an error text needs the input's secrets cut out of it (a success writes no text).
      const row = await this.row(this.store, id);
      if (!row) return null;
      secrets = secretValues(this.rawInput(row));
    }
    const iso = new Date(this.now()).toISOString();
    const values = {
      id, workerId, status: settlement.status, exceptions: settlement.exceptions,
      lastError: settlement.lastError === null ? null : redactText(settlement.lastError, secrets),
      result: settlement.status === 'completed' ? JSON.stringify(redact(settlement.result) ?? null) : null,
      availableAt: settlement.availableAt, at: iso, finishedAt: settlement.status === 'pending' ? null : iso,
    };
    return this.transaction(async (tx, context) => {
      const updated = await SETTLE.first(tx, values);
      if (!updated) return null;
      const record = toRecord(updated);
      await this.events.emitChange(record, context);
      return record;
    });
  }

  /** Extends the leases of every record `workerId` is processing. */
  async heartbeat(workerId: string, leaseMs: number): Promise<void> {
    await taskTables(this.store).updateTable('tasks').set({ lease_until: this.now() + leaseMs }).where('worker_id', '=', workerId).where('status', '=', 'processing').execute();
  }

  /**
   * Hands back records whose lease expired (their worker crashed) or, with `workerId`+`ids`, the records a stopping
   * worker gives up: each attempt counts as failed; the record goes back to `pending` or, without tries left, `failed`.
   * One conditional UPDATE: of several processes recovering at once, each record is released by one.
   */
  async release(backend: TaskBackend, scope: { expired: true } | { workerId: string; ids: string[] }): Promise<string[]> {
    if ('ids' in scope && scope.ids.length === 0) return [];
    const now = this.now();
    const iso = new Date(now).toISOString();
    return this.transaction(async (tx, context) => {
      const spent = sql<boolean>`attempts >= CAST(${tx.jsonText('options', 'tries')} AS integer)`;
      let update = taskTables(tx).updateTable('tasks').set({
        status: sql`CASE WHEN ${spent} THEN 'failed' ELSE 'pending' END`,
        finished_at: sql`CASE WHEN ${spent} THEN ${iso} ELSE NULL END`,
        last_error: LOST_WORKER_ERROR, lease_until: null, worker_id: null, available_at: now, updated_at: iso,
      }).where('backend', '=', backend).where('status', '=', 'processing');
      update = 'expired' in scope ? update.where('lease_until', '<', now) : update.where('worker_id', '=', scope.workerId).where('id', 'in', scope.ids);
      const rows = await update.returningAll().execute();
      for (const row of rows) await this.events.emitChange(toRecord(row), context);
      return rows.map((row) => row.id);
    });
  }

  /** Puts a `failed` record back to `pending` with fresh attempts and exceptions. */
  async resetForRetry(id: string, backend: TaskBackend): Promise<TaskRecord> {
    const now = this.now();
    const iso = new Date(now).toISOString();
    const record = await this.transaction(async (tx, context) => {
      const row = await taskTables(tx).updateTable('tasks').set((eb) => ({
        status: 'pending', attempts: 0, exceptions: 0, retries: eb('retries', '+', 1), last_error: null, result: null, backend,
        available_at: now, lease_until: null, worker_id: null, updated_at: iso, finished_at: null,
      })).where('id', '=', id).where('status', '=', 'failed').returningAll().executeTakeFirst();
      if (!row) return null;
      const reset = toRecord(row);
      await this.events.emit({ type: 'queued', task: reset, requeued: true }, context);
      return reset;
    });
    if (!record) throw new Error((await this.row(this.store, id)) ? `Task ${id} is not failed` : `Task ${id} not found`);
    return record;
  }

  /** Fails a non-final record outright (the scheduler lost or refused it). */
  async fail(id: string, message: string): Promise<TaskRecord | null> {
    const iso = this.clock.now().toISOString();
    return this.transaction(async (tx, context) => {
      const row = await taskTables(tx).updateTable('tasks').set({ status: 'failed', last_error: message, lease_until: null, updated_at: iso, finished_at: iso })
        .where('id', '=', id).where('status', 'in', RUNNABLE).returningAll().executeTakeFirst();
      if (!row) return null;
      const record = toRecord(row);
      await this.events.emitChange(record, context);
      return record;
    });
  }

  async stalePending(backend: TaskBackend, olderThan: number, limit: number): Promise<TaskRecord[]> {
    const rows = await taskTables(this.store).selectFrom('tasks').selectAll().where('backend', '=', backend).where('status', '=', 'pending')
      .where('updated_at', '<', new Date(olderThan).toISOString()).orderBy('updated_at').limit(limit).execute();
    return rows.map(toRecord);
  }

  /** Queue names that have runnable records of `backend`. */
  async activeQueues(backend: TaskBackend): Promise<string[]> {
    const rows = await taskTables(this.store).selectFrom('tasks').select('queue').distinct().where('backend', '=', backend).where('status', 'in', RUNNABLE).execute();
    return rows.map((row) => row.queue);
  }
}

/** String values of secret-named members anywhere in `input` (used to scrub error texts). */
function secretValues(input: unknown, out: string[] = []): string[] {
  if (input === null || typeof input !== 'object') return out;
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    if (SECRET_KEY_PATTERN.test(key) && typeof value === 'string' && value !== REDACTED) out.push(value);
    else secretValues(value, out);
  }
  return out;
}
